import assert from 'node:assert/strict';
import path from 'node:path';
import { execa } from 'execa';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import {
  assertDecodesCleanly,
  assertNear,
  audioOf,
  beepAt,
  docType,
  probe,
  videoOf,
  videoPacketHashes,
} from './helpers/media.js';
import { runCli } from './helpers/mediaflow.js';
import { UUID, useOperation } from './helpers/operation.js';
import { beepingTone, countingClip, flashStart, frameRuns, shownFrames } from './helpers/timed-media.js';

const FRAME = 1 / 25;
const MESSAGE = 'Media cut successfully';

describe('cut-media', () => {
  const op = useOperation({
    fixtures: ['small-300x200.png'],
    make: {
      // 10 s at 25 fps, a keyframe every second, two B-frames; flash and beep at 6 s.
      'counting.mp4': (file) => countingClip(file, { seconds: 10, gop: 25, bframes: 2, flashAt: 6 }),
      // 4 s of the same in WebM (VP9, whose decoder ignores -skip_frame), no flash.
      'counting.webm': (file) => countingClip(file, { seconds: 4, gop: 25, container: 'webm' }),
      // 5 s of a 440 Hz tone with a beep at 3 s, as MP3.
      'tone.mp3': (file) => beepingTone(file, 5, 3),
    },
  });

  const cut = async (fields: Record<string, string>, ext: string) =>
    (await op.expectOutput('/cut-media/', fields, { message: MESSAGE, name: `${UUID}/cut\\.${ext}` })).file;

  it('takes out ranges that fall between keyframes, frame-accurately, merging overlaps', async () => {
    // 2.3 s is in frame 57, 4.5 s in frame 112; 8.5 s in frame 212; 4-5 overlaps 2.3-4.5.
    const file = await cut({ media_url: op.local('counting.mp4'), remove: '8-8.5, 2.3-4.5,4-5' }, 'mp4');
    const frames = await shownFrames(file);
    assert.deepEqual(frameRuns(frames), [
      [0, 57],
      [125, 199],
      [213, 249],
    ]);
    assert.equal(frames[0]!.time, 0);
    frames.forEach((frame, i) => assertNear(frame.time, i * FRAME, 0.001, `frame ${i}'s time`));
    const info = await probe(file);
    assertNear(Number(videoOf(info)!.duration), 170 * FRAME, 0.001, 'video duration');
    assertNear(Number(audioOf(info)!.duration), 170 * FRAME, 0.03, 'audio duration');
    await assertDecodesCleanly(file);
  });

  it('copies the picture, packets untouched, where every cut falls on a keyframe, in sync', async () => {
    const file = await cut({ media_url: op.local('counting.mp4'), remove: '1-3,4-5' }, 'mp4');
    const frames = await shownFrames(file);
    assert.deepEqual(frameRuns(frames), [
      [0, 24],
      [75, 99],
      [125, 249],
    ]);
    frames.forEach((frame, i) => assertNear(frame.time, i * FRAME, 0.001, `frame ${i}'s time`));
    // Keyframes every 25 frames, closed GOPs: the kept GOPs' packets, in decode order, are the output's.
    const input = await videoPacketHashes(op.made['counting.mp4']!);
    assert.deepEqual(await videoPacketHashes(file), [
      ...input.slice(0, 25),
      ...input.slice(75, 100),
      ...input.slice(125, 250),
    ]);
    await assertDecodesCleanly(file);
    const flash = flashStart(frames);
    assertNear(flash, 3, 0.001, 'flash');
    assertNear(await beepAt(file), flash, FRAME, 'beep against the flash');
    const info = await probe(file);
    assertNear(Number(audioOf(info)!.duration), 175 * FRAME, 0.03, 'audio duration');
  });

  it('copies the picture of an MP4 whose sound MP4 does not take as it is (Opus), the sound as AAC', async () => {
    const opus = path.join(op.scratch, 'opus.mp4');
    await execa('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=160x120:r=25:d=4', '-f', 'lavfi', '-i', 'sine=d=4'],
      ...['-c:v', 'libx264', '-g', '25', '-c:a', 'libopus', '-f', 'mp4', opus],
    ]);
    const file = path.join(op.scratch, 'opus-cut.mp4');
    const result = await runCli(['cut-media', '--media-url', opus, '--remove', '1-2', '-o', file]);
    assert.equal(result.exitCode, 0, result.stderr);
    const input = await videoPacketHashes(opus);
    assert.deepEqual(await videoPacketHashes(file), [...input.slice(0, 25), ...input.slice(50)]);
    assert.equal(audioOf(await probe(file))!.codec_name, 'aac');
  });

  it('copies cuts far into the input too, where the keyframes are listed with their own timestamps', async () => {
    const long = path.join(op.scratch, 'long.mp4');
    await countingClip(long, { seconds: 36, gop: 25 });
    const file = path.join(op.scratch, 'long-cut.mp4');
    const result = await runCli(['cut-media', '--media-url', long, '--remove', '30-32', '-o', file]);
    assert.equal(result.exitCode, 0, result.stderr);
    const input = await videoPacketHashes(long);
    assert.deepEqual(await videoPacketHashes(file), [...input.slice(0, 750), ...input.slice(800)]);
  });

  it('keeps a beep and a flash that start together within one frame of each other across the joins', async () => {
    for (const remove of ['1.1-1.9,2.3-4.5,5.02-5.3', '0-0.5,1-2,3-4,5-5.5']) {
      const file = await cut({ media_url: op.local('counting.mp4'), remove }, 'mp4');
      const flash = flashStart(await shownFrames(file));
      const kept = remove.split(',').reduce((left, range) => {
        const [start, end] = range.split('-').map(Number) as [number, number];
        return left - (Math.ceil(end * 25 - 1e-6) - Math.ceil(start * 25 - 1e-6)) * FRAME;
      }, 6);
      assertNear(flash, kept, 0.001, `flash after removing ${remove}`);
      assertNear(await beepAt(file), flash, FRAME, `beep against the flash after removing ${remove}`);
    }
  });

  it('keeps a WebM as WebM, cut at frames between keyframes (re-encoded) or on them (copied)', async () => {
    let file = await cut({ media_url: op.local('counting.webm'), remove: '0.5-1,1.5-2' }, 'webm');
    assert.deepEqual(frameRuns(await shownFrames(file)), [
      [0, 12],
      [25, 37],
      [50, 99],
    ]);
    file = await cut({ media_url: op.local('counting.webm'), remove: '1-2' }, 'webm');
    assert.deepEqual(frameRuns(await shownFrames(file)), [
      [0, 24],
      [50, 99],
    ]);
    assert.equal(await docType(file), 'webm');
    const input = await videoPacketHashes(op.made['counting.webm']!);
    assert.deepEqual(await videoPacketHashes(file), [...input.slice(0, 25), ...input.slice(50)]);
  });

  it('cuts an audio-only input at the sample, keeping it audio-only in its own container', async () => {
    const file = await cut({ media_url: op.local('tone.mp3'), remove: '0.5-1,2-2.5' }, 'mp3');
    const info = await probe(file);
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
    );
    assert.equal(info.format.format_name, 'mp3');
    // An MP3 frame is 26 ms, and the encoder pads to whole frames.
    assertNear(Number(info.format.duration), 4, 0.06, 'duration');
    assertNear(await beepAt(file), 2, 0.03, 'beep');
  });

  it('refuses ranges past the end, over the whole input, backwards, or too many, and a picture', async () => {
    const url = op.local('counting.mp4');
    await op.expectRefusals('/cut-media/', [
      [{ media_url: url, remove: '8-12' }, 400, '`remove` is 12 s, past the end of the input, which lasts 10 s'],
      [
        { media_url: url, remove: '0-4,3-10' },
        400,
        '`remove` covers the whole input, which lasts 10 s: nothing would be left',
      ],
      [{ media_url: url, remove: '5-1' }, 400, 'Expected the range `5-1` of `remove` to end after it starts'],
      [{ media_url: url, remove: '' }, 400, 'Missing required parameter `remove`'],
      [
        { media_url: url, remove: Array.from({ length: 101 }, (_, i) => `${i * 0.05}-${i * 0.05 + 0.01}`).join(',') },
        400,
        'Expected `remove` to list at most 100 ranges, got 101',
      ],
      [
        { media_url: op.files.url('/f/small-300x200.png'), remove: '0-1' },
        422,
        /small-300x200\.png is a picture: it has no time to cut$/,
      ],
    ]);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const { file } = await op.asJob('/cut-media/', { media_url: op.local('counting.mp4'), remove: '1-9' }, MESSAGE);
    assert.deepEqual(frameRuns(await shownFrames(file)), [
      [0, 24],
      [225, 249],
    ]);
  });

  it('runs from the CLI on a local file', async () => {
    const counting = op.made['counting.mp4']!;
    await assertCliParity({
      args: ['cut-media', '--media-url', counting, '--remove', '00:00:01-00:00:02.5'],
      message: MESSAGE,
      output: /\/cut\.mp4$/,
      check: async (file) =>
        assert.deepEqual(frameRuns(await shownFrames(file)), [
          [0, 24],
          [63, 249],
        ]),
      refused: {
        args: ['cut-media', '--media-url', counting, '--remove', '5-1'],
        stderr: /the range `5-1` of `(--)?remove` to end after it starts/,
      },
    });
  });

  it('runs in a pipeline: a cut of a cut', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: cut-twice
        description: Takes out the first two seconds, then the new first two seconds
        inputs:
          clip: url
        steps:
          first:
            op: cut-media
            with: { media_url: "{{ inputs.clip }}", remove: "0-2" }
          second:
            op: cut-media
            with: { media_url: "{{ steps.first.output }}", remove: "0-2" }
        results:
          clip: "{{ steps.second.output }}"
      `,
      { clip: op.made['counting.mp4']! },
    );
    assert.deepEqual(written, ['clip.mp4']);
    assert.deepEqual(frameRuns(await shownFrames(path.join(out, 'clip.mp4'))), [[100, 249]]);
  });
});
