import assert from 'node:assert/strict';
import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { assertNear, audioStart, decodeErrors } from './media.js';

/**
 * The long input of the fan-out tests (docs/fanout.md, issue 24) and what reads it back. 80 s at 320x180 and 25 fps,
 * MPEG-4 Part 2 with a keyframe every 2 s and AAC, both from 0: a conversion to mp4 re-encodes it to H.264, and under
 * CLIP_SETTINGS it splits into four parts, at 20, 40 and 60 s. Every frame carries its own index (bits across the top
 * band) and its time (a drawn clock, for a person looking at it); the bottom band flashes white, and a 1 kHz beep
 * sounds, for 0.2 s from every tenth second, so a join's frames can be named and picture and sound compared at each.
 */
export const CLIP = {
  seconds: 80,
  fps: 25,
  gop: 50,
  width: 320,
  height: 180,
  flashEvery: 10,
  partSeconds: 20,
} as const;

/**
 * The server settings the fan-out tests run under: the defaults' parts of a minute past three minutes of input,
 * scaled down to the clip (parts of CLIP.partSeconds past three of them), so that it splits as a four-minute input
 * would under the defaults at a third of the encoding.
 */
export const CLIP_SETTINGS = {
  MEDIAFLOW_PART_SECONDS: String(CLIP.partSeconds),
  MEDIAFLOW_FANOUT_MIN: String(3 * CLIP.partSeconds),
};

/** Where the clip's four parts, and a render's four scenes of clipEdit, start: 0, 20, 40 and 60 s. */
export const CLIP_JOINS = [0, 20, 40, 60];

/** A fixture plugin whose split encode fails in one part of the clip (see the file): MEDIAFLOW_PLUGINS names it. */
export const BROKEN_PART = path.resolve(import.meta.dirname, '../fixtures/plugins/broken-part.js');

/** The job error BROKEN_PART's failing part gives the clip, in either mode: the part named, its ffmpeg error. */
export const BROKEN_PART_ERROR = {
  status: 422,
  code: 'MF_ERR_MEDIA',
  error:
    'Part 2 of 4 (20 to 40 s of the input): ffmpeg failed: Error when evaluating the expression ' +
    "'if(between(t,33,36),0/0,iw)'.",
};

/**
 * A render's edit of the clip (docs/render.md), as long as it: eight video clips of 10 s, one after the other, each
 * trimmed to where the one before ended, so that the timeline's frame n is the clip's frame n, its flashes and beeps
 * at the same times, and a render's scenes (CLIP.partSeconds each, under CLIP_SETTINGS) start at CLIP_JOINS.
 */
export const clipEdit = (src: string) => {
  const duration = CLIP.seconds / 8;
  return {
    output: { width: CLIP.width, height: CLIP.height, fps: CLIP.fps },
    tracks: [{ clips: Array.from({ length: 8 }, (_, i) => ({ type: 'video', src, trim: i * duration, duration })) }],
  };
};

/** Frames in the clip. */
export const CLIP_FRAMES = CLIP.seconds * CLIP.fps;

/** Bits of the frame index, drawn as white (1) or black cells BIT_WIDTH wide in the top band, lowest first. */
const BITS = 13;
const BIT_WIDTH = 24;
/** The top band (the index) ends here; the bottom band (the flash) starts at FLASH_TOP. */
const BAND = 40;
const FLASH_TOP = CLIP.height - BAND;
/** Frames a flash lasts: 0.2 s, as the beep. */
const FLASH_FRAMES = 5;

/** Writes the clip (see CLIP) to `file`: about 9 s of one core. */
export async function clockClip(file: string): Promise<void> {
  const { seconds, fps, gop, width, height, flashEvery } = CLIP;
  const bits = Array.from(
    { length: BITS },
    (_, bit) =>
      `drawbox=x=${bit * BIT_WIDTH}:y=0:w=${BIT_WIDTH}:h=${BAND}:c=white:t=fill:enable='mod(floor(n/${2 ** bit}),2)'`,
  );
  const picture = [
    // A moving test pattern: the encoder has real work, and a frame out of place shows in SSIM.
    `testsrc2=s=${width}x${height}:r=${fps}:d=${seconds}`,
    `drawbox=x=0:y=0:w=${width}:h=${BAND}:c=black:t=fill`,
    ...bits,
    `drawbox=x=0:y=${FLASH_TOP}:w=${width}:h=${BAND}:c=black:t=fill`,
    `drawbox=x=0:y=${FLASH_TOP}:w=${width}:h=${BAND}:c=white:t=fill:` +
      `enable='lt(mod(n,${flashEvery * fps}),${FLASH_FRAMES})'`,
    // The clock, for a person: `00:01:00.000 1500`.
    `drawtext=font=DejaVu Sans:text='%{pts\\:hms} %{frame_num}':x=8:y=${BAND + 12}:fontsize=20:` +
      'fontcolor=white:box=1:boxcolor=black',
  ].join(',');
  const beep = `if(lt(mod(t,${flashEvery}),${FLASH_FRAMES / fps}),0.8*sin(2*PI*1000*t),0)`;
  await execa('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', picture],
    ...['-f', 'lavfi', '-i', `aevalsrc=exprs='${beep}':s=48000:d=${seconds}`],
    // MPEG-4 Part 2, which an mp4 conversion re-encodes to H.264; keyframes exactly every GOP, no B-frames.
    ...['-c:v', 'mpeg4', '-q:v', '5', '-g', String(gop), '-bf', '0', '-sc_threshold', '0', '-pix_fmt', 'yuv420p'],
    ...['-c:a', 'aac', '-b:a', '64k', '-f', 'mp4', '-y', file],
  ]);
}

/** One decoded frame of a file made from the clip. */
export interface ClipFrame {
  /** Presentation time, seconds. */
  time: number;
  /** The index the frame carries: which frame of the clip it is. */
  index: number;
  /** Whether its bottom band flashes. */
  flash: boolean;
}

/**
 * Every frame of a file's video, decoded in display order, with its time (its packet's, in display order: the
 * decoder passes every frame on), the index it carries and whether it flashes.
 */
export async function clipFrames(file: string): Promise<ClipFrame[]> {
  const times = (await videoPackets(file)).map((packet) => packet.pts).sort((a, b) => a - b);
  // Per frame, two rows of gray: one across the index's cells, one the flash band's mean, column by column. Gray
  // first: crop rounds a height of 1 down to 0 in 4:2:0.
  const rows =
    `format=gray,split[a][b];[a]crop=${CLIP.width}:1:0:${BAND / 2}[bits];` +
    `[b]crop=${CLIP.width}:${BAND}:0:${FLASH_TOP},scale=${CLIP.width}:1:flags=area[flash];[bits][flash]vstack`;
  const { stdout } = await execa(
    'ffmpeg',
    [
      ...['-v', 'error', '-i', file, '-map', '0:v:0', '-fps_mode', 'passthrough', '-vf', rows],
      ...['-f', 'rawvideo', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const pixels = stdout as unknown as Uint8Array;
  const size = 2 * CLIP.width;
  assert.equal(pixels.length, times.length * size, `${file}: one picture per video packet`);
  return times.map((time, i) => {
    const frame = pixels.subarray(i * size, (i + 1) * size);
    let index = 0;
    for (let bit = 0; bit < BITS; bit++) if (frame[bit * BIT_WIDTH + BIT_WIDTH / 2]! > 128) index |= 1 << bit;
    const band = frame.subarray(CLIP.width);
    return { time, index, flash: band.reduce((sum, value) => sum + value, 0) / CLIP.width > 128 };
  });
}

/** When each flash starts: the time of every flashing frame whose frame before did not flash. */
export const flashOnsets = (frames: readonly ClipFrame[]): number[] =>
  frames.filter((frame, i) => frame.flash && !frames[i - 1]?.flash).map((frame) => frame.time);

/**
 * When each beep starts, on the file's clock: the first sample louder than a tenth of full scale after half a second
 * of quiet, counted from the audio stream's start.
 */
export async function beepOnsets(file: string): Promise<number[]> {
  const start = await audioStart(file);
  const rate = 48000;
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-ar', String(rate), '-f', 'f32le', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  const bytes = stdout as unknown as Uint8Array;
  const samples = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const onsets: number[] = [];
  let loud = -Infinity;
  samples.forEach((sample, i) => {
    if (Math.abs(sample) <= 0.1) return;
    if (i - loud > rate / 2) onsets.push((Number(start) || 0) + i / rate);
    loud = i;
  });
  return onsets;
}

/** One video packet as stored, in file (decode) order. */
export interface VideoPacket {
  pts: number;
  dts: number;
  /** Byte offset and size in the file. */
  pos: number;
  size: number;
  key: boolean;
}

/** A file's first video stream's packets, in decode order, read without decoding. */
export async function videoPackets(file: string): Promise<VideoPacket[]> {
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,dts_time,pos,size,flags'],
    ...['-of', 'json', file],
  ]);
  const { packets } = JSON.parse(stdout) as { packets: Array<Record<string, string>> };
  return packets.map((p) => ({
    pts: Number(p.pts_time),
    dts: Number(p.dts_time),
    pos: Number(p.pos),
    size: Number(p.size),
    key: (p.flags ?? '').includes('K'),
  }));
}

/**
 * Where x264 started encoding: the times of the frames that carry its version SEI, which it writes once, in the
 * first frame of each run. One for a single pass; one per part for a split encode joined by stream copy, at each
 * part's first frame. Read from the bytes of the file, without decoding.
 */
export async function encoderStarts(file: string): Promise<number[]> {
  const [bytes, packets] = await Promise.all([readFile(file), videoPackets(file)]);
  const starts: number[] = [];
  for (let at = bytes.indexOf('x264 - core'); at >= 0; at = bytes.indexOf('x264 - core', at + 1)) {
    const packet = packets.find((p) => at >= p.pos && at < p.pos + p.size);
    // The same text in the file's header (a tool's tag) is no frame's.
    if (packet) starts.push(packet.pts);
  }
  return starts.sort((a, b) => a - b);
}

/**
 * Where the parts of the clip start, by docs/fanout.md's rule from the input's keyframes: a part starts at the first
 * keyframe at or past each multiple of `partSeconds` from the first frame, and a tail shorter than half a part stays
 * with the part before.
 */
export function partStarts(keyframes: readonly number[], last: number, partSeconds: number): number[] {
  const first = keyframes[0] ?? 0;
  const starts = [first];
  for (let k = 1; first + k * partSeconds <= last; k++) {
    const key = keyframes.find((time) => time >= first + k * partSeconds - 1e-6);
    if (key === undefined || last - key < partSeconds / 2) break;
    if (key !== starts.at(-1)) starts.push(key);
  }
  return starts;
}

/** The SSIM (all planes) of each frame of `a` against the same frame of `b`, in order. */
export async function ssimByFrame(a: string, b: string): Promise<number[]> {
  const { stdout } = await execa('ffmpeg', [
    ...['-v', 'error', '-i', a, '-i', b, '-lavfi', '[0:v:0][1:v:0]ssim=stats_file=-', '-f', 'null', '-'],
  ]);
  // `n:1 Y:0.99 U:0.99 V:0.99 All:0.99 (20.1)`
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('n:'))
    .map((line) => Number(/All:([\d.]+)/.exec(line)![1]));
}

/** The duration of a file, and of its video and audio streams, in seconds (ffprobe). */
export async function durations(file: string): Promise<{ format: number; video: number; audio: number }> {
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,duration', '-of', 'json', file],
  ]);
  const probed = JSON.parse(stdout) as {
    format: { duration: string };
    streams: Array<{ codec_type: string; duration: string }>;
  };
  const of = (type: string) => Number(probed.streams.find((s) => s.codec_type === type)?.duration);
  return { format: Number(probed.format.duration), video: of('video'), audio: of('audio') };
}

/** A running ffmpeg process: its pid, its working folder and its arguments. */
export interface RunningFfmpeg {
  pid: number;
  cwd: string;
  args: string[];
}

/**
 * The live ffmpeg processes (zombies left out) whose working folder is `dir` or inside it, from /proc (Linux), among
 * `pids` when given (quicker than every process's). The engine runs each ffmpeg in its job's workspace, a part on
 * another worker in that worker's folder for the job.
 */
export async function ffmpegsIn(dir: string, pids?: readonly number[]): Promise<RunningFfmpeg[]> {
  const root = path.resolve(dir);
  const found: RunningFfmpeg[] = [];
  for (const entry of pids?.map(String) ?? (await readdir('/proc'))) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ...: comm may hold spaces, so match up to the last ')'.
    const match = /^\d+ \((.*)\) (\S)/s.exec(stat);
    if (!match || match[1] !== 'ffmpeg' || match[2] === 'Z') continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    if (cwd !== root && !cwd.startsWith(`${root}/`)) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
    found.push({ pid: Number(entry), cwd, args });
  }
  return found;
}

/**
 * The file a split encode's ffmpeg writes, in its working folder (`fanout-part-001.mp4`, a render's `scene-001.mp4`),
 * if it writes one. An ffmpeg seen while it exits shows no arguments any more: keep each process's first sighting.
 */
export const partFileOf = (ffmpeg: RunningFfmpeg): string | undefined =>
  ffmpeg.args.find((arg) => /^(fanout-part|scene)-\d+\.(mp4|webm)$/.test(arg));

/** The part a split encode's ffmpeg writes (`fanout-part-001.mp4` is part 1), if it writes one (see partFileOf). */
export const partOf = (ffmpeg: RunningFfmpeg): number | undefined => {
  const file = partFileOf(ffmpeg);
  return file === undefined ? undefined : Number(/\d+/.exec(file)![0]);
};

/** What `assertSeamless` measured, for a test's log. */
export interface Seams {
  /** The joins: where the split output's encoder started again, in seconds. */
  joins: number[];
  /** The lowest SSIM of the frames around the joins, and of any frame. */
  ssimAtJoins: number;
  ssimLowest: number;
  /** The largest gap between a flash and its beep, seconds. */
  syncWorst: number;
}

/** Frames either side of a join whose SSIM against the single pass is checked. */
const AROUND_JOIN = 5;

/**
 * Issue 24's correctness of a split encode of the clip, `split`, against the single pass of the same request,
 * `single`: every frame of the clip once, in order, on its own time (no frame lost or doubled at a join); timestamps
 * that only go forward; the same frame count and duration; a clean decode; the encoder restarting at `joins` (the
 * parts' starts) and nowhere else; SSIM of at least 0.98 on the frames either side of each join; and each flash
 * within a frame of its beep, at the start, at each join and to the end.
 */
export async function assertSeamless(split: string, single: string, joins: readonly number[]): Promise<Seams> {
  const frame = 1 / CLIP.fps;
  assert.equal(await decodeErrors(split), '', 'the output decodes without an error');
  for (const [name, file] of [
    ['output', split],
    ['single pass', single],
  ] as const) {
    const packets = await videoPackets(file);
    assert.equal(packets.length, CLIP_FRAMES, `${name}: one packet per frame of the clip`);
    const back = packets.findIndex((packet, i) => i > 0 && !(packet.dts > packets[i - 1]!.dts));
    assert.equal(back, -1, `${name}: decoding times go forward, but not at packet ${back}`);
    const pts = packets.map((packet) => packet.pts).sort((a, b) => a - b);
    const off = pts.findIndex((time, i) => (i > 0 && time === pts[i - 1]) || !(Math.abs(time - i * frame) <= 0.001));
    assert.equal(off, -1, `${name}: frame ${off}'s time is ${pts[off]}, not ${off * frame}`);
  }
  // Every frame of the clip, once and in order, on its own time: none lost or shown twice at a join.
  const frames = await clipFrames(split);
  assert.equal(frames.length, CLIP_FRAMES, 'decoded frames');
  const wrong = frames.findIndex((f, i) => f.index !== i || !(Math.abs(f.time - i * frame) <= 0.001));
  assert.equal(
    wrong,
    -1,
    `frame ${wrong} is ${JSON.stringify(frames[wrong])}; the clip's frames around it: ` +
      JSON.stringify(frames.slice(Math.max(0, wrong - 2), wrong + 3).map((f) => f.index)),
  );
  const [splitLength, singleLength] = await Promise.all([durations(split), durations(single)]);
  assertNear(splitLength.format, singleLength.format, frame / 2, 'the output lasts as long as the single pass');
  assertNear(splitLength.video, singleLength.video, frame / 2, 'its picture lasts as long as the single pass’s');
  assertNear(splitLength.audio, singleLength.audio, frame / 2, 'its sound lasts as long as the single pass’s');
  assertNear(splitLength.video, CLIP.seconds, frame / 2, 'its picture lasts as long as the clip');

  assert.deepEqual(await encoderStarts(single), [0], 'the single pass is one run of x264');
  const starts = await encoderStarts(split);
  assert.deepEqual(starts, joins, 'x264 started at each part’s first frame, and nowhere else');

  const ssim = await ssimByFrame(split, single);
  assert.equal(ssim.length, CLIP_FRAMES, 'SSIM for every frame');
  const near = joins
    .slice(1)
    .flatMap((join) => {
      const at = Math.round(join * CLIP.fps);
      return ssim.slice(at - AROUND_JOIN, at + AROUND_JOIN).map((value, i) => ({ frame: at - AROUND_JOIN + i, value }));
    })
    .sort((a, b) => a.value - b.value);
  assert.ok(near.length > 0, 'frames around the joins');
  assert.ok(near[0]!.value >= 0.98, `SSIM against the single pass at the joins: ${JSON.stringify(near.slice(0, 5))}`);

  const flashes = flashOnsets(frames);
  const beeps = await beepOnsets(split);
  const count = CLIP.seconds / CLIP.flashEvery;
  assert.equal(flashes.length, count, `a flash every ${CLIP.flashEvery} s: ${JSON.stringify(flashes)}`);
  assert.equal(beeps.length, count, `a beep every ${CLIP.flashEvery} s: ${JSON.stringify(beeps)}`);
  let syncWorst = 0;
  flashes.forEach((flash, i) => {
    assertNear(flash, i * CLIP.flashEvery, frame / 2, `flash ${i}`);
    // Within a frame: at the start (0 s), at each join (20, 40, 60 s: a part's first frame) and to the last one.
    assertNear(beeps[i]!, flash, frame, `the beep against the flash at ${i * CLIP.flashEvery} s`);
    syncWorst = Math.max(syncWorst, Math.abs(beeps[i]! - flash));
  });
  assertNear(splitLength.audio, splitLength.video, frame, 'the sound ends with the picture');
  return {
    joins: starts,
    ssimAtJoins: near[0]!.value,
    ssimLowest: Math.min(...ssim),
    syncWorst,
  };
}
