import assert from 'node:assert/strict';
import path from 'node:path';
import { execa } from 'execa';
import { chromiumOrSkipReason, playInChromium } from './helpers/chromium.js';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import {
  assertNear,
  audioOf,
  beepAt,
  decodeErrors,
  docType,
  packetTimes,
  probe,
  videoOf,
  videoPacketHashes,
} from './helpers/media.js';
import { turned, UUID, useOperation, type Refusal } from './helpers/operation.js';
import { countingClip, flashStart, shownFrames } from './helpers/timed-media.js';

const FPS = 25;
const FRAME = 1 / FPS;
const MESSAGE = 'Media trimmed successfully';
/** A countingClip's size. */
const [WIDTH, HEIGHT] = [160, 120];

/** The source frame index each frame of a file shows, in display order (a countingClip's frames carry it). */
const frameNumbers = async (file: string): Promise<number[]> => (await shownFrames(file)).map((frame) => frame.index);

/** Frame numbers from `first` to `last`, both included. */
const frames = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);

describe('trim-media', () => {
  const op = useOperation({
    fixtures: ['tone-2s-44k-stereo.mp3', 'small-300x200.png'],
    make: {
      // 12 s whose frames carry their index (countingClip), H.264/AAC, a keyframe every 2 s (50 frames), exactly,
      // no B-frames.
      'counter.mp4': (file) => countingClip(file, { seconds: 12, gop: 50 }),
      // counter.mp4 as most encoders write H.264: with B-frames, whose decoding order differs from the display's.
      'counter-b.mp4': (file) => countingClip(file, { seconds: 12, gop: 50, bframes: 3 }),
      // A flash and a 1 kHz beep that both start at exactly 3 s; a keyframe every 2 s.
      'flash-beep.mp4': (file) => countingClip(file, { seconds: 6, gop: 50, flashAt: 3 }),
      // counter-b.mp4 turned a quarter by its display matrix, as phones write portrait video.
      'turned.mp4': turned('counter-b.mp4'),
    },
  });
  const counter = () => op.made['counter.mp4']!;

  const trim = async (fields: Record<string, string>, ext: string) =>
    (await op.expectOutput('/trim-media/', fields, { message: MESSAGE, name: `${UUID}/trimmed\\.${ext}` })).file;

  /** A stream's duration; Matroska tells only the file's. */
  const seconds = (file: string, stream: 'v' | 'a') =>
    probe(file).then(
      (info) => Number((stream === 'v' ? videoOf(info) : audioOf(info))?.duration) || Number(info.format.duration),
    );

  it('precise: keeps exactly the frames from start to start + duration, sound as long as the picture', async () => {
    for (const format of ['mp4', 'mkv']) {
      const file = await trim({ media_url: op.local('counter.mp4'), start: '5.5', duration: '3', format }, format);
      // 5.5 s is frame 137.5: the first frame at or after it is 138; 8.5 s ends before frame 212.5.
      assert.deepEqual(await frameNumbers(file), frames(138, 212), format);
      assertNear(await seconds(file, 'v'), 3, FRAME, `${format} video duration`);
      assertNear(await seconds(file, 'a'), 3, 0.03, `${format} audio duration`);
    }
  });

  it('precise: takes `end` as a clock time, and runs to the end of the input without `end` or `duration`', async () => {
    let file = await trim({ media_url: op.local('counter.mp4'), start: '00:02.2', end: '0:00:04.8' }, 'mp4');
    assert.deepEqual(await frameNumbers(file), frames(55, 119));
    file = await trim({ media_url: op.local('counter.mp4'), start: '10' }, 'mp4');
    assert.deepEqual(await frameNumbers(file), frames(250, 299));
    // No start: from the beginning.
    file = await trim({ media_url: op.local('counter.mp4'), duration: '1' }, 'mp4');
    assert.deepEqual(await frameNumbers(file), frames(0, 24));
  });

  it('precise: keeps a beep and a flash that start together within one frame of each other', async () => {
    for (const start of [1.3, 2.02, 0.5]) {
      const file = await trim({ media_url: op.local('flash-beep.mp4'), start: String(start) }, 'mp4');
      const flash = flashStart(await shownFrames(file));
      assertNear(flash, 3 - start, FRAME, `flash after a start at ${start}`);
      assertNear(await beepAt(file), flash, FRAME, `beep against the flash after a start at ${start}`);
    }
  });

  it('fast: copies the packets from the keyframe at or before start, to the same end', async () => {
    const file = await trim({ media_url: op.local('counter.mp4'), start: '5.5', duration: '3', mode: 'fast' }, 'mp4');
    // Keyframes every 2 s: the one at or before 5.5 s is at 4 s, frame 100.
    assert.deepEqual(await frameNumbers(file), frames(100, 212));
    assert.deepEqual(await videoPacketHashes(file), (await videoPacketHashes(counter())).slice(100, 213));
    assertNear(await seconds(file, 'v'), 4.5, FRAME, 'video duration');
    assertNear(await seconds(file, 'a'), 4.5, 0.05, 'audio duration');
    // A start on a keyframe stays where it is.
    const onKeyframe = await trim({ media_url: op.local('counter.mp4'), start: '6', end: '7', mode: 'fast' }, 'mp4');
    assert.deepEqual(await frameNumbers(onKeyframe), frames(150, 174));
  });

  it('fast: picture and sound move back to the keyframe together', async () => {
    const file = await trim({ media_url: op.local('flash-beep.mp4'), start: '2.5', mode: 'fast' }, 'mp4');
    const flash = flashStart(await shownFrames(file));
    assertNear(flash, 1, FRAME, 'flash after the keyframe at 2 s');
    assertNear(await beepAt(file), flash, FRAME, 'beep against the flash');
  });

  it('fast into a container that does not take the codecs encodes, and cuts precisely', async () => {
    const file = await trim(
      { media_url: op.local('counter.mp4'), start: '5.5', duration: '3', mode: 'fast', format: 'webm' },
      'webm',
    );
    assert.equal(await docType(file), 'webm');
    assert.deepEqual(
      (await probe(file)).streams.map((s) => s.codec_name),
      ['vp9', 'opus'],
    );
    assert.deepEqual(await frameNumbers(file), frames(138, 212));
  });

  it('precise on H.264/AAC MP4 encodes only up to the first keyframe and after the last (a smart cut)', async () => {
    const input = await videoPacketHashes(op.made['counter-b.mp4']!);
    const cases: Array<[Record<string, string>, number, number]> = [
      // Keyframes every 2 s: encoded 5.52-6 and 8-8.5, copied 6-8 (frames 150 to 199).
      [{ start: '5.5', duration: '3' }, 138, 212],
      // To the end: encoded 3.12-4, copied from 4 s on.
      [{ start: '3.1' }, 78, 299],
      // From a keyframe: copied 4-8, encoded 8-9.
      [{ start: '4', end: '9' }, 100, 224],
      // No keyframe after the start: nothing to copy, all encoded.
      [{ start: '10.5' }, 263, 299],
    ];
    for (const [fields, first, last] of cases) {
      const file = await trim({ media_url: op.local('counter-b.mp4'), ...fields }, 'mp4');
      assert.deepEqual(await frameNumbers(file), frames(first, last), JSON.stringify(fields));
      assert.equal(await decodeErrors(file), '', JSON.stringify(fields));
      assertNear(await seconds(file, 'a'), (last - first + 1) / FPS, 0.05, `audio of ${JSON.stringify(fields)}`);
      // Copied sound starts with its first packet at the cut, none from the keyframe before it hidden by an edit
      // list; encoded sound, with the encoder's 1024 priming samples (21 ms) before zero.
      const firstSound = (await packetTimes(file, 'a:0'))[0]!;
      assert.ok(firstSound > -0.03, `audio from ${firstSound} s, ${JSON.stringify(fields)}`);
      // Copied: each whole GOP of the kept part (keyframes every 50 frames, closed GOPs, so a GOP's packets are
      // the same 50 in decoding order) is in the output as it is in the input, but for its keyframe's packet,
      // which gains its parameter sets.
      const output = (await videoPacketHashes(file)).join(',');
      for (let gop = Math.ceil(first / 50) * 50; gop + 50 <= last + 1; gop += 50)
        assert.ok(output.includes(input.slice(gop + 1, gop + 50).join(',')), `GOP ${gop} of ${JSON.stringify(fields)}`);
    }
  });

  it('precise on a turned H.264 MP4 (a phone video) encodes it whole, upright: no copied part sideways', async () => {
    const file = await trim({ media_url: op.local('turned.mp4'), start: '5.5', duration: '3' }, 'mp4');
    // Every frame as stored is the turned picture, HEIGHT x WIDTH: none is a copied WIDTH x HEIGHT one.
    const entries = ['-show_entries', 'frame=width,height', '-of', 'csv=p=0'];
    const { stdout } = await execa('ffprobe', ['-v', 'error', '-select_streams', 'v:0', ...entries, file]);
    const sizes = new Set(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(',').slice(0, 2).join('x')),
    );
    assert.deepEqual([...sizes], [`${HEIGHT}x${WIDTH}`]);
  });

  it('a smart cut plays to its end in headless Chromium', async (context) => {
    const browser = chromiumOrSkipReason();
    if ('skip' in browser) {
      (context as { skip?: (why: string) => void }).skip?.(browser.skip);
      return;
    }
    const file = await trim({ media_url: op.local('counter-b.mp4'), start: '5.5', duration: '3' }, 'mp4');
    const playback = await playInChromium(browser.binary, file);
    assert.equal(playback.outcome, 'ended', JSON.stringify(playback));
    assertNear(playback.duration, 3, FRAME, 'duration in the browser');
    assert.equal(playback.frames, 75);
    assert.deepEqual([playback.width, playback.height], [WIDTH, HEIGHT]);
  });

  it('keeps an audio-only input audio-only, in its own container, in both modes', async () => {
    for (const mode of ['precise', 'fast']) {
      const file = await trim(
        { media_url: op.files.url('/f/tone-2s-44k-stereo.mp3'), start: '0.5', end: '1.5', mode },
        'mp3',
      );
      const info = await probe(file);
      assert.equal(info.format.format_name, 'mp3');
      assert.deepEqual(
        info.streams.map((s) => s.codec_type),
        ['audio'],
      );
      // An MP3 frame is 26 ms at 44.1 kHz: encoded or copied, the cut falls within one of them (and one of padding).
      assertNear(Number(info.format.duration), 1, 0.06, `${mode} duration`);
    }
  });

  it('refuses every bad combination with a 400 naming the field, and leaves no file behind', async () => {
    const media_url = op.local('counter.mp4');
    const lasts = Number((await probe(counter())).format.duration);
    const shown = String(Math.round(lasts * 1000) / 1000);
    const cases: Array<[Record<string, string>, string]> = [
      [{ start: '20' }, `\`start\` is 20 s, past the end of the input, which lasts ${shown} s`],
      [{ start: '00:00:30' }, `\`start\` is 30 s, past the end of the input, which lasts ${shown} s`],
      [{ start: shown }, `\`start\` is ${shown} s, the end of the input, which lasts ${shown} s`],
      [{ start: '2', end: '15' }, `\`end\` is 15 s, past the end of the input, which lasts ${shown} s`],
      [{ start: '5', end: '3' }, 'Expected `end` (3 s) to be after `start` (5 s)'],
      [{ start: '5', end: '00:05' }, 'Expected `end` to be after `start`, got both at 5 s: nothing would be kept'],
      [{ start: '1', end: '3', duration: '2' }, 'Give `end` or `duration`, not both'],
      [{ duration: '0' }, 'Expected `duration` to be more than 0 s, got 0: nothing would be kept'],
      [{ mode: 'exact' }, 'Expected `mode` to be one of precise, fast, got `exact`'],
      [{ start: 'soon' }, 'Expected `start` to be a time, seconds (12.5) or [HH:]MM:SS[.mmm] (01:02:03.5), got `soon`'],
      [{ format: 'mp3' }, "Unsupported format 'mp3'. Supported formats: mp4, mov, mkv, avi, webm."],
    ];
    await op.expectRefusals('/trim-media/', [
      ...cases.map(([fields, error]): Refusal => [{ media_url, ...fields }, 400, error]),
      // Asynchronously, what the fields alone say is wrong is refused before a job exists.
      [{ media_url, end: '1', duration: '1' }, 400, 'Give `end` or `duration`, not both', { Prefer: 'respond-async' }],
      [
        { media_url: op.files.url('/f/small-300x200.png') },
        422,
        /small-300x200\.png is a picture: it has no time to trim$/,
      ],
    ]);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    // A smart cut: keyframes listed, then encoded 1-2 s and 4-5 s, copied 2-4 s, in two stages of one job.
    const { file } = await op.asJob(
      '/trim-media/',
      { media_url: op.local('counter.mp4'), start: '1', end: '5' },
      MESSAGE,
    );
    assert.match(file, /\/trimmed\.mp4$/);
    assert.deepEqual(await frameNumbers(file), frames(25, 124));
  });

  it('runs from the CLI on a local file', async () => {
    await assertCliParity({
      args: [
        'trim-media',
        '--media-url',
        counter(),
        '--start',
        '4',
        '--duration',
        '2',
        '--mode',
        'fast',
        '--format',
        'mkv',
      ],
      message: MESSAGE,
      output: /\/trimmed\.mkv$/,
      check: async (file) => {
        assert.equal(await docType(file), 'matroska');
        assert.deepEqual(await frameNumbers(file), frames(100, 149));
      },
      refused: {
        args: ['trim-media', '--media-url', counter(), '--start', '1', '--end', '3', '--duration', '2'],
        stderr: /Give `(--)?end` or `(--)?duration`, not both/,
      },
    });
  });

  it('runs in a pipeline: a trim of a trim', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: middle
        description: Keeps the middle of the middle of a clip
        inputs:
          clip: url
        steps:
          outer:
            op: trim-media
            with: { media_url: "{{ inputs.clip }}", start: 2, end: 10 }
          inner:
            op: trim-media
            with: { media_url: "{{ steps.outer.output }}", start: "00:01", duration: 2.5 }
        results:
          inner: "{{ steps.inner.output }}"
      `,
      { clip: counter() },
    );
    assert.deepEqual(written, ['inner.mp4']);
    // From 3 s to 5.5 s of the input: frames 75 to 137.
    assert.deepEqual(await frameNumbers(path.join(out, 'inner.mp4')), frames(75, 137));
  });
});
