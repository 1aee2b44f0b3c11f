import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEMUXERS, lockedInputOptions } from '../../exec/input-policy.js';
import type { Logger } from '../../logger.js';
import { KEEP_FRAME_TIMES, type FanoutPart, type FanoutSpec, type ReadyParts } from '../../contract/plugin.js';
import { runFfmpeg, runFfprobe, type RunOptions } from '../../exec/ffmpeg.js';
import type { Slots } from '../../exec/slots.js';
import { BOUND_SLACK, partLength, planParts, type PartSpan } from './part-plan.js';
import { joinParts } from './join.js';
import type { PartJob, PartRunner, PartTask } from './part-runner.js';
import { videoPackets } from './video-packets.js';

/** What a split encode needs of the engine. */
export interface SplitDeps {
  ffmpeg: string;
  ffprobe: string;
  runner: PartRunner;
  slots: Slots;
  logger: Logger;
  /** MEDIAFLOW_JOB_TIMEOUT, for the listing and the join. */
  timeoutMs: number;
  /** MEDIAFLOW_PART_SECONDS. */
  partSeconds: number;
}

/** The job the encode is a stage of. */
export interface SplitJob {
  /** The engine run's id: its output id, unique to the run. */
  id: string;
  /** The job record the run belongs to, when it runs as a job (see PartJob.owner). */
  owner?: string;
  dir: string;
  /** Every workspace file the plan's commands may read: its inputs and generated files. */
  reads: string[];
  signal?: AbortSignal;
  /** The stage's progress, 0 to 1: the tasks' combined, weighed by their seconds; it never goes back. */
  onRatio?: (ratio: number) => void;
  /** Told how many parts the encode is split into, before they run. */
  onSplit?: (parts: number) => void;
  /** What each task logged (PartJob.onLog). */
  onLog?: (task: string, log: string) => void;
}

/** The share of a split encode's progress the audio takes: it is encoded far faster than the picture. */
const AUDIO_WEIGHT = 0.05;

const partName = (index: number): string => `fanout-part-${String(index).padStart(3, '0')}`;
const AUDIO_TASK = 'fanout-audio';

/**
 * Encodes `spec` in parts at the input's keyframes and joins them (docs/fanout.md): the parts' video and the whole
 * audio run at once through the runner, then one stream copy joins the parts and adds the audio, and the joined
 * frames are counted against the input's. Returns the number of parts; undefined, having written no output, when
 * the input does not split into two or the join did not keep every frame once (the caller then runs its one pass).
 * The caller's slot is given back while the tasks run, so that they can take it. The parts are removed at the end.
 */
export async function splitEncode(deps: SplitDeps, spec: FanoutSpec, job: SplitJob): Promise<number | undefined> {
  const run = runOptions(deps, job);
  const packets = await videoPackets(deps.ffprobe, spec.input.file, lockedInputOptions(DEMUXERS.video), run);
  const length = partLength(keptSeconds(spec), deps.partSeconds, await deps.runner.capacity(job.owner));
  const spans = planParts(packets, length, spec.windows);
  if (spans.length < 2) return undefined;
  const parts = spans.map((span, index) => partTask(spec, span, index, spans.length, job.reads));
  const total = spans.reduce((sum, span) => sum + span.seconds, 0);
  const audio = spec.audio && `${AUDIO_TASK}${spec.audioExtension ?? '.m4a'}`;
  const joined = await encodeAndJoin(deps, job, {
    parts,
    ...(audio ? { audio: audioTask(spec.audio!(audio), job.reads, audio, total) } : {}),
    placed: placedAt(packets.times, spans),
    frames: spans.reduce((sum, span) => sum + span.frames, 0),
    muxer: spec.muxer,
    output: spec.output,
    instead: 'encoding it in one pass instead',
  });
  return joined ? spans.length : undefined;
}

/**
 * Runs the parts a plugin made itself (Plan.readyParts) at once, through the runner, with the audio on the job's own
 * worker, joins them and counts the joined frames, as `splitEncode` does. Returns the number of parts; undefined,
 * having written no output, when the join did not hold every part's frames (the caller then runs the plan's commands).
 */
export async function readyEncode(deps: SplitDeps, spec: ReadyParts, job: SplitJob): Promise<number | undefined> {
  const count = spec.parts.length;
  const parts = spec.parts.map((part): PartTask => ({
    name: path.parse(part.output).name,
    label: part.label,
    args: [...part.command],
    reads: [...part.reads],
    output: part.output,
    seconds: part.seconds,
  }));
  const total = spec.parts.reduce((sum, part) => sum + part.seconds, 0);
  const { audio } = spec;
  const joined = await encodeAndJoin(deps, job, {
    parts,
    ...(audio ? { audio: audioTask(audio.command, [], audio.output, total) } : {}),
    placed: spec.parts.map((part) => part.start),
    frames: spec.parts.reduce((sum, part) => sum + part.frames, 0),
    muxer: spec.muxer,
    output: spec.output,
    instead: 'making them one after another instead',
  });
  return joined ? count : undefined;
}

/** The parts of an encode, its audio, and what the join needs: where each part goes, how many frames they hold. */
interface PartsToJoin {
  parts: PartTask[];
  audio?: PartTask;
  /** Where each part's first frame is on the output's clock, in seconds. */
  placed: number[];
  frames: number;
  muxer: readonly string[];
  output: string;
  /** What the caller does when the joined file lacks frames, as the log says it. */
  instead: string;
}

const runOptions = (deps: SplitDeps, job: SplitJob): RunOptions => ({
  cwd: job.dir,
  timeoutMs: deps.timeoutMs,
  ...(job.signal ? { signal: job.signal } : {}),
});

/** The task writing the audio, whole: on the job's own worker, where its inputs are. */
const audioTask = (args: string[], reads: string[], output: string, seconds: number): PartTask => ({
  name: AUDIO_TASK,
  label: 'The sound',
  args,
  reads,
  output,
  seconds,
  onJobWorker: true,
});

/**
 * Runs the parts and the audio at once through the runner (the caller's slot lent to them), joins them by stream copy
 * (join.ts) and counts the joined frames: true when it holds `frames`, else the output is removed. The tasks' files
 * are removed at the end, whatever the ending.
 */
async function encodeAndJoin(deps: SplitDeps, job: SplitJob, encode: PartsToJoin): Promise<boolean> {
  const run = runOptions(deps, job);
  const { parts, audio } = encode;
  const tasks = audio ? [...parts, audio] : parts;
  const total = parts.reduce((sum, part) => sum + part.seconds, 0);
  const join = joinParts({
    parts: parts.map((part, index) => ({ file: part.output, at: encode.placed[index]! })),
    list: 'fanout-parts.txt',
    ...(audio ? { audio: audio.output } : {}),
    muxer: encode.muxer,
    output: encode.output,
  });
  job.onSplit?.(parts.length);
  try {
    await deps.slots.lend(() => deps.runner.run(partJob(job, tasks, total), tasks));
    await writeFile(path.join(job.dir, join.list), join.text);
    await runFfmpeg(deps.ffmpeg, join.command, run);
    const joined = await frameCount(deps.ffprobe, encode.output, run);
    if (joined === encode.frames) return true;
    // Frames a part could not decode, or timestamps the parts' muxer could not keep.
    deps.logger.warn(
      { job: job.id, parts: parts.length, frames: joined, expected: encode.frames },
      `the joined parts do not hold every frame once; ${encode.instead}`,
    );
    await rm(path.join(job.dir, encode.output), { force: true });
    return false;
  } finally {
    await Promise.all(
      [join.list, ...tasks.map((task) => task.output)].map((file) => rm(path.join(job.dir, file), { force: true })),
    );
  }
}

/** The seconds of input an encode keeps: its windows', or the whole input's. */
export const keptSeconds = (spec: FanoutSpec): number =>
  spec.windows
    ? spec.windows.reduce((sum, window) => sum + window.end - window.start, 0)
    : (spec.input.facts.duration ?? 0);

/** The runner's view of the job, with the tasks' progress combined by their weight into the stage's. */
function partJob(job: SplitJob, tasks: readonly PartTask[], total: number): PartJob {
  const weights = new Map(
    tasks.map((task) => [task.name, task.name === AUDIO_TASK ? total * AUDIO_WEIGHT : task.seconds]),
  );
  const weight = [...weights.values()].reduce((sum, seconds) => sum + seconds, 0) || 1;
  const done = new Map<string, number>();
  let shown = 0;
  return {
    id: job.id,
    dir: job.dir,
    ...(job.owner !== undefined ? { owner: job.owner } : {}),
    ...(job.signal ? { signal: job.signal } : {}),
    ...(job.onLog ? { onLog: job.onLog } : {}),
    ...(job.onRatio
      ? {
          onProgress: (name: string, ratio: number) => {
            done.set(name, ratio * (weights.get(name) ?? 0));
            shown = Math.max(shown, [...done.values()].reduce((sum, seconds) => sum + seconds, 0) / weight);
            job.onRatio!(shown);
          },
        }
      : {}),
  };
}

/** Seconds as a message shows them: milliseconds at most. */
const secondsText = (seconds: number): string => String(Math.round(seconds * 1000) / 1000);

/** The video command of part `index`, as the plugin builds it for the part's seek and frames. */
function partTask(spec: FanoutSpec, span: PartSpan, index: number, count: number, reads: string[]): PartTask {
  const output = `${partName(index)}.mp4`;
  const part: FanoutPart = {
    seek: ['-ss', span.seek],
    start: span.start,
    shift: `setpts=PTS+${span.outputStart.toFixed(6)}/TB`,
    reset: 'setpts=PTS-STARTPTS',
    // The encoder's clock is the input's (ffmpeg 5.1's is 1/frame rate): frames of a variable rate keep their times.
    frames: ['-frames:v', String(span.frames), ...KEEP_FRAME_TIMES],
    output,
  };
  const range = `${secondsText(span.start)} to ${secondsText(span.start + span.seconds)} s`;
  const label = `Part ${index + 1} of ${count} (${range} of the input)`;
  return { name: partName(index), label, args: spec.video(part), reads, output, seconds: span.seconds };
}

/**
 * Where each part's first frame is on the output's clock: where its span starts there, plus how far after the span's
 * start that frame is (a window's start may fall before its first frame; a picture may start after the sound).
 */
function placedAt(times: readonly number[], spans: readonly PartSpan[]): number[] {
  return spans.map((span) => {
    const first = times.find((time) => time >= span.start - BOUND_SLACK) ?? span.start;
    const lead = first - span.start > BOUND_SLACK ? first - span.start : 0;
    return span.outputStart + lead;
  });
}

/** The video packets of a file, counted without decoding. */
async function frameCount(ffprobe: string, file: string, run: RunOptions): Promise<number> {
  const stdout = await runFfprobe(
    ffprobe,
    ['-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file],
    run,
  );
  return Number(stdout.trim());
}
