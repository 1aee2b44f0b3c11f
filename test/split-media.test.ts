import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { assertDecodesCleanly, assertNear, beepAt, probe, videoPacketHashes } from './helpers/media.js';
import { UUID, useOperation, type Refusal } from './helpers/operation.js';
import { beepingTone, countingClip, flashStart, frameRuns, shownFrames } from './helpers/timed-media.js';

const FRAME = 1 / 25;
const MESSAGE = 'Media split successfully';

interface SplitAnswer {
  message: string;
  output_file: string;
  output_files: string[];
  starts: number[];
}

describe('split-media', () => {
  const op = useOperation({
    fixtures: ['small-300x200.png'],
    make: {
      // 10 s at 25 fps, a keyframe every 2 s, two B-frames; flash and beep at 6.4 s.
      'sparse.mp4': (file) => countingClip(file, { seconds: 10, gop: 50, bframes: 2, flashAt: 6.4 }),
      // 10 s at 25 fps, a keyframe every second; flash and beep at 6 s.
      'dense.mp4': (file) => countingClip(file, { seconds: 10, gop: 25, flashAt: 6 }),
      // 5 s of a 440 Hz tone with a beep at 3 s, as MP3.
      'tone.mp3': (file) => beepingTone(file, 5, 3),
      // 12 s of it, as WAV.
      'long.wav': (file) => beepingTone(file, 12, 3),
    },
  });

  const split = async (fields: Record<string, string>, ext: string) => {
    const { body } = await op.expectOutput('/split-media/', fields, {
      message: MESSAGE,
      name: `${UUID}/part_001\\.${ext}`,
    });
    const answer = body as unknown as SplitAnswer;
    answer.output_files.forEach((url, i) =>
      assert.match(
        url,
        new RegExp(`^${op.server.base}/uploads/${UUID}/part_${String(i + 1).padStart(3, '0')}\\.${ext}$`),
      ),
    );
    assert.equal(answer.output_file, answer.output_files[0]);
    return { ...answer, parts: answer.output_files.map((url) => op.server.pathOf(url)) };
  };

  it('copies parts that start on the keyframe at or after each time, and answers where they start', async () => {
    const { parts, starts } = await split({ media_url: op.local('sparse.mp4'), every: '2.5' }, 'mp4');
    // Asked: 2.5, 5 and 7.5 s; the keyframes are every 2 s.
    assert.deepEqual(starts, [0, 4, 6, 8]);
    const runs = [];
    for (const part of parts) {
      const frames = await shownFrames(part);
      assert.equal(frames[0]!.time, 0, `${part} starts at 0`);
      runs.push(frameRuns(frames));
      await assertDecodesCleanly(part);
    }
    assert.deepEqual(runs, [[[0, 99]], [[100, 149]], [[150, 199]], [[200, 249]]]);
    // Copies: the parts' packets, one after another, are the input's.
    const packets = (await Promise.all(parts.map((part) => videoPacketHashes(part)))).flat();
    assert.deepEqual(packets, await videoPacketHashes(op.made['sparse.mp4']!));
    // The flash at 6.4 s is 0.4 s into the part that starts at 6 s, with its beep.
    const flash = flashStart(await shownFrames(parts[2]!));
    assertNear(flash, 0.4, 0.001, 'flash');
    assertNear(await beepAt(parts[2]!), flash, FRAME, 'beep against the flash');
  });

  it('re-encodes with mode=precise so that each part starts at the first frame at or after its time', async () => {
    const { parts, starts } = await split({ media_url: op.local('sparse.mp4'), every: '2.5', mode: 'precise' }, 'mp4');
    // 2.5 s is within frame 62 (2.48 to 2.52): the part starts with frame 63.
    assert.deepEqual(starts, [0, 2.52, 5, 7.52]);
    const runs = [];
    for (const part of parts) runs.push(frameRuns(await shownFrames(part)));
    assert.deepEqual(runs, [[[0, 62]], [[63, 124]], [[125, 187]], [[188, 249]]]);
    const flash = flashStart(await shownFrames(parts[2]!));
    assertNear(flash, 6.4 - 5, 0.001, 'flash');
    assertNear(await beepAt(parts[2]!), flash, FRAME, 'beep against the flash');
    for (const part of parts) assertNear(Number((await probe(part)).format.duration), 2.5, 0.05, `${part}'s duration`);
  });

  it('splits at the times of `at`, in any order', async () => {
    const { parts, starts } = await split({ media_url: op.local('dense.mp4'), at: '7, 00:00:03' }, 'mp4');
    assert.deepEqual(starts, [0, 3, 7]);
    const runs = [];
    for (const part of parts) runs.push(frameRuns(await shownFrames(part)));
    assert.deepEqual(runs, [[[0, 74]], [[75, 174]], [[175, 249]]]);
  });

  it('splits sound alone in its own container', async () => {
    const { parts, starts } = await split({ media_url: op.local('tone.mp3'), every: '2' }, 'mp3');
    assert.deepEqual(starts, [0, 2, 4]);
    const durations = await Promise.all(parts.map(async (part) => Number((await probe(part)).format.duration)));
    // An MP3 frame is 26 ms: parts begin at the first frame at or after their time, and end on frames.
    durations.forEach((duration, i) => assertNear(duration, i < 2 ? 2 : 1, 0.06, `part ${i + 1}'s duration`));
    assertNear(await beepAt(parts[1]!), 1, 0.03, 'beep');
  });

  it('gives one part, the whole input, when `every` is at or past its length (issue 33)', async () => {
    // The segment muxer cuts every 2 s by default when it is given no time: 10 s came out as a part of 2 s.
    for (const [name, ext, every, mode] of [
      ['sparse.mp4', 'mp4', '10', 'fast'],
      ['sparse.mp4', 'mp4', '60', 'precise'],
      ['tone.mp3', 'mp3', '6', 'fast'],
      ['long.wav', 'wav', '3600', 'fast'],
    ]) {
      const source = op.made[name!]!;
      const { parts, starts } = await split({ media_url: op.local(name!), every: every!, mode: mode! }, ext!);
      assert.deepEqual(starts, [0], `${name} every ${every}`);
      assert.equal(parts.length, 1, `${name} every ${every}`);
      const whole = Number((await probe(source)).format.duration);
      assertNear(Number((await probe(parts[0]!)).format.duration), whole, 0.06, `${name} every ${every} (${mode})`);
    }
  });

  it('refuses neither or both of every and at, zero parts, times past the end, parts without keyframes', async () => {
    const url = op.local('sparse.mp4');
    const refusals: Array<[Record<string, string>, string]> = [
      [{ media_url: url }, 'Expected `every` (seconds per part) or `at` (times where parts start), got neither'],
      [{ media_url: url, every: '2', at: '3' }, 'Expected `every` or `at`, not both'],
      [{ media_url: url, every: '0' }, 'Expected `every` to be a number from 0.1 to 86400, got `0`'],
      [{ media_url: url, at: '4,12' }, '`at` is 12 s, past the end of the input, which lasts 10 s'],
      [{ media_url: url, at: '0' }, "`at` is 0 s: a part must start after the input's start and before its end, 10 s"],
      [
        { media_url: op.local('long.wav'), every: '0.1' },
        '`every` of 0.1 s makes 120 parts of the input, which lasts 12 s: at most 100',
      ],
      [
        { media_url: url, at: Array.from({ length: 100 }, (_, i) => String(i / 10 + 0.05)).join(',') },
        'Expected `at` to list at most 99 times (100 parts), got 100',
      ],
      [
        { media_url: url, every: '1' },
        '`every` asks for a part at 2 s, which would start on the keyframe at 2 s, as the part before does: ' +
          'with `mode=fast` parts start on keyframes; ask for fewer parts, or for `mode=precise`',
      ],
      [
        { media_url: url, at: '2.49,2.5', mode: 'precise' },
        '`at` asks for a part at 2.5 s, which would start on the frame at 2.52 s, as the part before does: ' +
          'ask for fewer parts',
      ],
      [
        { media_url: url, at: '9.99', mode: 'precise' },
        '`at` asks for a part at 9.99 s, and the input has no frame after it: ask for fewer parts',
      ],
      [
        { media_url: url, at: '9' },
        '`at` asks for a part at 9 s, and the input has no keyframe after it: with `mode=fast` parts start on ' +
          'keyframes; ask for fewer parts, or for `mode=precise`',
      ],
    ];
    await op.expectRefusals('/split-media/', [
      ...refusals.map(([fields, error]): Refusal => [fields, 400, error]),
      [
        { media_url: op.files.url('/f/small-300x200.png'), every: '1' },
        422,
        /small-300x200\.png is a picture: it has no time to split$/,
      ],
    ]);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const { result } = await op.asJob('/split-media/', { media_url: op.local('dense.mp4'), every: '5' }, MESSAGE);
    const answer = result as unknown as SplitAnswer;
    assert.deepEqual(answer.starts, [0, 5]);
    assert.equal(answer.output_files.length, 2);
    assert.deepEqual(frameRuns(await shownFrames(op.server.pathOf(answer.output_files[1]!))), [[125, 249]]);
  });

  it('runs from the CLI on a local file', async () => {
    const dense = op.made['dense.mp4']!;
    await assertCliParity({
      args: ['split-media', '--media-url', dense, '--at', '4'],
      message: MESSAGE,
      output: /\/part_001\.mp4$/,
      check: async (file, body) => {
        const answer = body as unknown as SplitAnswer;
        assert.deepEqual(answer.starts, [0, 4]);
        assert.deepEqual(answer.output_files, [file, file.replace(/001\.mp4$/, '002.mp4')]);
        const runs = [];
        for (const part of answer.output_files) runs.push(frameRuns(await shownFrames(part)));
        assert.deepEqual(runs, [[[0, 99]], [[100, 249]]]);
      },
      refused: {
        args: ['split-media', '--media-url', dense, '--every', '2', '--at', '3'],
        stderr: /Expected `(--)?every` or `(--)?at`, not both/,
      },
    });
  });

  it('runs in a pipeline, a later step taking each part', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: split-then-cut
        description: Splits a clip in two, then takes the first second out of each part
        inputs:
          clip: url
        steps:
          parts:
            op: split-media
            with: { media_url: "{{ inputs.clip }}", at: "5" }
          trimmed:
            op: cut-media
            each: "{{ steps.parts.output }}"
            with: { media_url: "{{ item }}", remove: "0-1" }
        results:
          trimmed: "{{ steps.trimmed.output }}"
      `,
      { clip: op.made['dense.mp4']! },
    );
    assert.deepEqual(written, ['trimmed-1.mp4', 'trimmed-2.mp4']);
    assert.deepEqual(frameRuns(await shownFrames(path.join(out, 'trimmed-1.mp4'))), [[25, 124]]);
    assert.deepEqual(frameRuns(await shownFrames(path.join(out, 'trimmed-2.mp4'))), [[150, 249]]);
  });
});
