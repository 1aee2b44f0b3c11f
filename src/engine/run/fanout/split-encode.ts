import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { concatList, concatListArgs, DEMUXERS, lockedInputOptions } from '../../exec/input-policy.js';
import type { Logger } from '../../logger.js';
import { argv, KEEP_FRAME_TIMES, type FanoutPart, type FanoutSpec } from '../../contract/plugin.js';
import { runFfmpeg, runFfprobe, type RunOptions } from '../../exec/ffmpeg.js';
import type { Slots } from '../../exec/slots.js';
import { BOUND_SLACK, partLength, planParts, type PartSpan } from './part-plan.js';
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
  const run: RunOptions = { cwd: job.dir, timeoutMs: deps.timeoutMs, ...(job.signal ? { signal: job.signal } : {}) };
  const packets = await videoPackets(deps.ffprobe, spec.input.file, lockedInputOptions(DEMUXERS.video), run);
  const length = partLength(keptSeconds(spec), deps.partSeconds, await deps.runner.capacity(job.owner));
  const spans = planParts(packets, length, spec.windows);
  if (spans.length < 2) return undefined;
  const tasks = spans.map((span, index) => partTask(spec, span, index, spans.length, job.reads));
  const audio = spec.audio && `${AUDIO_TASK}${spec.audioExtension ?? '.m4a'}`;
  const total = spans.reduce((sum, span) => sum + span.seconds, 0);
  if (audio)
    tasks.push({
      name: AUDIO_TASK,
      label: 'The sound',
      args: spec.audio!(audio),
      reads: job.reads,
      output: audio,
      seconds: total,
      onJobWorker: true,
    });
  const list = 'fanout-parts.txt';
  job.onSplit?.(spans.length);
  try {
    await deps.slots.lend(() => deps.runner.run(partJob(job, tasks, total), tasks));
    const placed = placedAt(packets.times, spans);
    await writeFile(path.join(job.dir, list), concatList(joinEntries(spans, placed)));
    const lead = placed[0]!;
    await runFfmpeg(
      deps.ffmpeg,
      argv(
        // The parts start at 0: a picture that starts after the sound starts as late in the output.
        lead > 0 && ['-itsoffset', lead.toFixed(6)],
        concatListArgs(list, 'video'),
        audio ? [...lockedInputOptions(DEMUXERS.audio), '-i', audio] : null,
        ['-map', '0:v:0'],
        audio ? ['-map', '1:a:0'] : null,
        ['-c', 'copy'],
        spec.muxer,
        [spec.output],
      ),
      run,
    );
    const expected = spans.reduce((sum, span) => sum + span.frames, 0);
    const joined = await frameCount(deps.ffprobe, spec.output, run);
    if (joined === expected) return spans.length;
    // Frames a part could not decode, or timestamps the parts' muxer could not keep: the one pass is right.
    deps.logger.warn(
      { job: job.id, parts: spans.length, frames: joined, expected },
      'the joined parts do not hold every frame of the input once; encoding it in one pass instead',
    );
    await rm(path.join(job.dir, spec.output), { force: true });
    return undefined;
  } finally {
    await Promise.all(
      [list, ...tasks.map((task) => task.output)].map((file) => rm(path.join(job.dir, file), { force: true })),
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

/**
 * The join's list: each part but the last with the time from its first frame to the next part's, to the microsecond.
 * Without it the concat demuxer takes a part's length from its MP4's movie header, which holds milliseconds: at
 * 30000/1001 fps a part of 201 frames lasts 6.7067 s, read as 6.707, and every frame after it would be 0.3 ms late,
 * a lateness that grows join after join while the sound, encoded whole, stays where it is.
 */
function joinEntries(
  spans: readonly PartSpan[],
  placed: readonly number[],
): Array<{ file: string; duration?: number }> {
  return spans.map((_, index) => {
    const next = placed[index + 1];
    const file = `${partName(index)}.mp4`;
    return next === undefined ? { file } : { file, duration: Math.round((next - placed[index]!) * 1e6) / 1e6 };
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
