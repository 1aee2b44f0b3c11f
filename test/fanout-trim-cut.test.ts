import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { before, describe, it } from './helpers/lifecycle.js';
import { useScratch } from './helpers/scratch.js';
import { audioOf, audioStart, probe, probeLines, videoOf, videoPacketHashes } from './helpers/media.js';
import { countingClip, frameRuns, shownFrames, type ShownFrame } from './helpers/timed-media.js';
import { loadConfig } from '../src/engine/config.js';
import { anyLocalPath } from '../src/engine/run/job-run.js';
import { LocalOutputStore } from '../src/engine/storage/storage.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { cliServices } from '../src/runtime.js';

/**
 * Fan-out of the encodes that keep spans of a video (docs/fanout.md): a precise trim and a cut that re-encode
 * (MPEG-4 Part 2 in, H.264 out) are split at the input's keyframes into parts, joined by stream copy, with the
 * sound of the kept spans encoded once. Small settings (parts of about 6 s, split from 10 s of kept input) keep
 * the inputs short; every result is compared with the same request in one pass (`fanout=false`).
 */

const FPS = 25;
const FRAME = 1 / FPS;
const NTSC = 30000 / 1001;

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);

/** What ffmpeg reports decoding the whole file: the empty string when it decodes without a single error. */
async function decodingErrors(file: string): Promise<string> {
  const { stderr } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
  return stderr;
}

/** Where each flash starts: the times of the frames that are flashes after one that is not. */
const flashes = (frames: ShownFrame[]): number[] =>
  frames.filter((frame, i) => frame.flash && !frames[i - 1]?.flash).map((frame) => frame.time);

/** Where each beep starts: the first loud sample after a fifth of a second of quiet, on the stream's clock. */
async function beeps(file: string): Promise<number[]> {
  const start = await audioStart(file);
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-ar', '48000', '-f', 'f32le', 'pipe:1'],
    // A last byte of 10 is a sample's, not a newline execa may strip.
    { encoding: 'buffer', stripFinalNewline: false },
  );
  const bytes = stdout as unknown as Uint8Array;
  const samples = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const starts: number[] = [];
  let loud = Number.NEGATIVE_INFINITY;
  samples.forEach((sample, i) => {
    if (Math.abs(sample) <= 0.1) return;
    if (i - loud > 0.2 * 48000) starts.push((Number(start) || 0) + i / 48000);
    loud = i;
  });
  return starts;
}

/** The SSIM of each frame of `file` against the same frame of `reference` (ffmpeg's ssim filter, all planes). */
async function ssimPerFrame(file: string, reference: string, stats: string): Promise<number[]> {
  await execa('ffmpeg', [
    '-v',
    'error',
    '-i',
    file,
    '-i',
    reference,
    '-lavfi',
    `ssim=stats_file=${stats}`,
    '-f',
    'null',
    '-',
  ]);
  return (await readFile(stats, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(/All:([\d.]+)/.exec(line)![1]));
}

/** How many x264 stream headers (its version SEI) the file holds: one per encoder run, so one per part joined. */
const x264Runs = async (file: string): Promise<number> =>
  (await readFile(file)).toString('latin1').split('x264 - core').length - 1;

/** The titles of a file's chapters. */
const chapters = (file: string): Promise<string[]> => probeLines(file, 'chapter_tags=title');

/** A stream's duration, in seconds. */
const durationOf = async (file: string, stream: 'v' | 'a') => {
  const info = await probe(file);
  return Number((stream === 'v' ? videoOf(info) : audioOf(info))!.duration);
};

describe('fan-out of trim-media and cut-media', () => {
  const scratch = useScratch('mediaflow-fanout-trim-');
  let engine: ReturnType<typeof cliServices>['engine'];
  /**
   * 36 s of MPEG-4 Part 2 and AAC in MP4 whose frames carry their index (countingClip), a keyframe every 2 s,
   * a pattern drifting below; a flash and a beep together every 6 s from 4 s (4, 10, 16, 22, 28, 34). Two chapters,
   * 0-15 s and 15-36 s, which no trim or cut can keep as they are.
   */
  let counting: string;
  /** 30 s of the same at 30000/1001 fps (a keyframe every 60 frames), no flash: frame starts off the millisecond. */
  let ntsc: string;
  /** counting.mp4 with its picture 0.1 s after its sound, as some recorders write it. */
  let late: string;
  /** 16 s of H.264/AAC MP4, a keyframe every 2 s: a precise trim of it is a smart cut. */
  let h264: string;

  before(async () => {
    counting = path.join(scratch.dir, 'counting.mp4');
    ntsc = path.join(scratch.dir, 'ntsc.mp4');
    late = path.join(scratch.dir, 'late.mp4');
    h264 = path.join(scratch.dir, 'h264.mp4');
    const clip = { gop: 50, codec: 'mpeg4', moving: true } as const;
    const unmarked = path.join(scratch.dir, 'unmarked.mp4');
    await Promise.all([
      countingClip(unmarked, { ...clip, seconds: 36, flashAt: 4, flashEvery: 6 }),
      countingClip(ntsc, { ...clip, seconds: 30, fps: NTSC, gop: 60 }),
      countingClip(h264, { seconds: 16, gop: 50 }),
    ]);
    const marks = path.join(scratch.dir, 'chapters.txt');
    await writeFile(
      marks,
      ';FFMETADATA1\n' +
        [
          [0, 15000, 'One'],
          [15000, 36000, 'Two'],
        ]
          .map(([start, end, title]) => `[CHAPTER]\nTIMEBASE=1/1000\nSTART=${start}\nEND=${end}\ntitle=${title}\n`)
          .join(''),
    );
    await execa('ffmpeg', [
      '-v',
      'error',
      '-i',
      unmarked,
      '-i',
      marks,
      '-map',
      '0',
      '-map_chapters',
      '1',
      '-c',
      'copy',
      counting,
    ]);
    assert.deepEqual(await chapters(counting), ['One', 'Two']);
    await execa('ffmpeg', [
      ...['-v', 'error', '-itsoffset', '0.1', '-i', counting, '-i', counting],
      ...['-map', '0:v', '-map', '1:a', '-c', 'copy', late],
    ]);
    // The engine itself, as a library user runs it: its JobResult says how many parts the encode was split into.
    ({ engine } = cliServices({
      config: loadConfig({
        MEDIAFLOW_DATA_DIR: scratch.dir,
        MEDIAFLOW_FANOUT_MIN: '10',
        MEDIAFLOW_PART_SECONDS: '6',
        // One slot on any machine: the parts keep MEDIAFLOW_PART_SECONDS as it is, where more slots would round
        // their count to a multiple of them (docs/fanout.md), and the joins below are at the keyframes it gives.
        MEDIAFLOW_CONCURRENCY: '1',
      }),
      registry: builtinRegistry(),
      store: new LocalOutputStore(path.join(scratch.dir, 'out')),
      workRoot: path.join(scratch.dir, 'work'),
    }));
  }, 120_000);
  /** Runs an operation; returns its output file and the number of parts its encode was split into. */
  const run = async (operation: string, fields: Record<string, string>) => {
    const result = await engine.run(operation, fields, { localFiles: anyLocalPath });
    const { path: output } = result.output as { path: string };
    // Nothing of the parts is left behind: the job's workspace is gone.
    assert.deepEqual(await readdir(path.join(scratch.dir, 'work')).catch(() => []), []);
    return { file: path.join(scratch.dir, 'out', output), parts: result.parts };
  };

  /** Runs the request split and in one pass, and asserts what both must share; returns both files, the frames. */
  const bothWays = async (operation: string, fields: Record<string, string>, parts: number) => {
    const split = await run(operation, fields);
    const single = await run(operation, { ...fields, fanout: 'false' });
    assert.equal(split.parts, parts, 'parts');
    assert.equal(single.parts, undefined, 'fanout=false runs in one pass');
    // Each part starts an encoder of its own, whose header is in the joined stream as it was written.
    assert.equal(await x264Runs(split.file), parts, 'x264 runs in the joined file');
    assert.equal(await decodingErrors(split.file), '', 'decoding errors');
    const [splitFrames, singleFrames] = await Promise.all([shownFrames(split.file), shownFrames(single.file)]);
    assert.deepEqual(
      splitFrames.map((frame) => frame.index),
      singleFrames.map((frame) => frame.index),
      'the frames of the one pass, in its order',
    );
    assert.deepEqual(
      splitFrames.map((frame) => frame.time),
      singleFrames.map((frame) => frame.time),
      'their times',
    );
    assert.equal(await durationOf(split.file, 'v'), await durationOf(single.file, 'v'), 'video duration');
    // Chapters would point at the uncut times: neither keeps them.
    assert.deepEqual([await chapters(split.file), await chapters(single.file)], [[], []], 'chapters');
    return { split: split.file, single: single.file, frames: splitFrames };
  };

  /** Asserts the frames on either side of each join (the first frame after it, by index) look as the one pass's. */
  const joinsMatch = async (split: string, single: string, joins: number[]) => {
    const ssim = await ssimPerFrame(split, single, path.join(scratch.dir, 'ssim.log'));
    for (const join of joins)
      for (const index of [join - 1, join])
        assert.ok(ssim[index]! >= 0.98, `SSIM ${ssim[index]} at frame ${index}, by the join before frame ${join}`);
  };

  /**
   * Asserts a beep starts within a frame of each flash (`offset` seconds before it), the flashes being where
   * `expected` says.
   */
  const inSync = async (file: string, frames: ShownFrame[], expected: number[], offset = 0) => {
    const shown = flashes(frames);
    shown.forEach((time, i) => close(time, expected[i]!, 0.001, `flash ${i}`));
    assert.equal(shown.length, expected.length, `flashes at ${shown.join(', ')}`);
    const heard = await beeps(file);
    assert.equal(heard.length, shown.length, `beeps at ${heard.join(', ')}`);
    heard.forEach((time, i) => close(time + offset, shown[i]!, FRAME, `beep ${i} against its flash`));
  };

  it('trim: a long precise trim is split at keyframes and joins into the frames of one pass, in sync', async () => {
    // 3.3 s is in frame 82: the first kept frame is 83 (3.32 s); 29.7 s ends after frame 742 (29.68 s). The
    // parts start at the window's start, then at the keyframes 10, 16 and 22 s (frames 250, 400, 550), each 6 s
    // or more after the one before; 28 s would leave less than half a part after it.
    const { split, single, frames } = await bothWays(
      'trim-media',
      { media_url: counting, start: '3.3', end: '29.7' },
      4,
    );
    assert.deepEqual(frameRuns(frames), [[83, 742]]);
    frames.forEach((frame, i) => close(frame.time, i * FRAME, 0.0001, `frame ${i}'s time`));
    close(await durationOf(split, 'v'), 660 * FRAME, 0.0001, 'video duration');
    close(await durationOf(split, 'a'), 29.7 - 3.32, 0.001, 'audio duration');
    close(await durationOf(split, 'a'), await durationOf(single, 'a'), 0.001, 'audio duration against one pass');
    await joinsMatch(split, single, [167, 317, 467]);
    // The flashes at 4, 10, 16, 22 and 28 s of the input: those at 10, 16 and 22 s are the first frames of parts.
    await inSync(split, frames, [0.68, 6.68, 12.68, 18.68, 24.68]);
  });

  it('cut: the kept spans are the windows of a split encode, frames and sound joined as one pass does', async () => {
    // 8.3-12.7 takes out frames 208 to 317 (8.32 to 12.72 s), 25.1-27.9 frames 628 to 697 (25.12 to 27.92 s).
    // Windows of 8.32, 12.4 and 8.08 s: the first and last have no keyframe 6 s in with 3 s after it, the second
    // splits at its keyframe 20 s (frame 500).
    const { split, single, frames } = await bothWays(
      'cut-media',
      { media_url: counting, remove: '8.3-12.7,25.1-27.9' },
      4,
    );
    assert.deepEqual(frameRuns(frames), [
      [0, 207],
      [318, 627],
      [698, 899],
    ]);
    frames.forEach((frame, i) => close(frame.time, i * FRAME, 0.0001, `frame ${i}'s time`));
    close(await durationOf(split, 'v'), 720 * FRAME, 0.0001, 'video duration');
    // The one pass reads the last span's sound to its very end: 11 ms of the input's AAC past its stated 36 s.
    close(await durationOf(split, 'a'), 720 * FRAME, 0.001, 'audio duration');
    close(await durationOf(split, 'a'), await durationOf(single, 'a'), FRAME, 'audio duration against one pass');
    // Frames 208 and 518 start the second and third windows, frame 390 the second window's second part.
    await joinsMatch(split, single, [208, 390, 518]);
    // The flashes at 4, 16, 22, 28 and 34 s of the input (that at 10 s is cut out): 28 s is 2 frames into the
    // third window, 22 s after the second window's part join.
    await inSync(split, frames, [4, 11.6, 17.6, 20.8, 26.8]);
  });

  it('at 30000/1001 fps, keeps every frame and its time across the joins, off the millisecond', async () => {
    // 7.3 s is in frame 218: the first kept frame is 219, at 7.3073 s, which a bound computed as 219 / (30000 /
    // 1001) puts a hair after the time ffprobe prints; parts at the keyframes 14.014 and 20.02 s (frames 420, 600).
    // The first part lasts 6.7067 s, which its MP4 says as 6.707: bothWays compares every frame's time.
    const trimmed = await bothWays('trim-media', { media_url: ntsc, start: '7.3', end: '25' }, 3);
    assert.deepEqual(frameRuns(trimmed.frames), [[219, 749]]);
    await joinsMatch(trimmed.split, trimmed.single, [420 - 219, 600 - 219]);
  });

  it('at 30000/1001 fps, cuts at frames whose starts are off the millisecond, as one pass does', async () => {
    // 5.5 s is in frame 164, so frame 165 (5.5055 s) starts in the range and is out; 20.1 s in frame 602. The
    // second window splits at its keyframe 14.014 s (frame 420).
    const cut = await bothWays('cut-media', { media_url: ntsc, remove: '5.5-7.3,20.1-21' }, 4);
    assert.deepEqual(frameRuns(cut.frames), [
      [0, 164],
      [219, 602],
      [630, 899],
    ]);
    await joinsMatch(cut.split, cut.single, [165, 165 + 201, 165 + 384]);
  });

  it('keeps a picture that starts after the sound as far after it in every window', async () => {
    // One pass fills the first 0.1 s with copies of the first frame; the split encode starts the picture late.
    const { file, parts } = await run('cut-media', { media_url: late, remove: '8.3-12.7,25.1-27.9' });
    assert.equal(parts, 4);
    assert.equal(await decodingErrors(file), '');
    const frames = await shownFrames(file);
    close(frames[0]!.time, 0.1, 0.001, 'first frame');
    // In the input, each flash is 0.1 s after its beep: so in the output, window after window. The first window's
    // sound must be read from the start, not from a seek to 0, which the MP4 demuxer takes to the picture's first
    // keyframe (0.1 s) and so starts the sound 64 ms late.
    await inSync(file, frames, [4.1, 11.7, 17.7, 20.9, 26.9], 0.1);
  });

  it('runs in one pass below MEDIAFLOW_FANOUT_MIN of kept input, and leaves the smart cut as it is', async () => {
    // 6.68 s kept of 36: a split needs more than 10 s kept, whatever the input's length.
    const short = await run('trim-media', { media_url: counting, start: '3.3', end: '10' });
    assert.equal(short.parts, undefined);
    assert.deepEqual(frameRuns(await shownFrames(short.file)), [[83, 249]]);
    // 4.5 + 5 s kept.
    const shortCut = await run('cut-media', { media_url: counting, remove: '4.5-31' });
    assert.equal(shortCut.parts, undefined);
    // 14.5 s of H.264 in MP4 kept: the GOPs between the first and last keyframes are copied, none encoded again.
    const smart = await run('trim-media', { media_url: h264, start: '1.5' });
    assert.equal(smart.parts, undefined);
    const input = await videoPacketHashes(h264);
    assert.ok((await videoPacketHashes(smart.file)).join().includes(input.slice(101, 150).join()), 'a copied GOP');
  });
});
