import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { withTone } from './helpers/fixtures.js';
import { audioPacketHashes, brightPixels, differingPixels, frameRgb, probe, videoOf } from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

const MESSAGE = 'Text added successfully';
const [WIDTH, HEIGHT] = [640, 360];
/** The top and bottom thirds of the 640x360 picture: a title sits in one, a lower third in the other. */
type Rect = readonly [number, number, number, number];
const TOP: Rect = [0, 0, WIDTH, 120];
const BOTTOM: Rect = [0, 240, WIDTH, 120];
const WHOLE: Rect = [0, 0, WIDTH, HEIGHT];

/** The same text as no font draws it: each character a private-use one, which libass draws as a box. */
const asBoxes = (text: string) => [...text].map((c) => (c === ' ' ? ' ' : '\uE000')).join('');

/** The rectangle holding every pixel brighter than 100 (the text, on a black picture). */
function inkBox(frame: Frame): { width: number; height: number } {
  let [left, right, top, bottom] = [WIDTH, -1, HEIGHT, -1];
  for (let y = 0; y < HEIGHT; y++)
    for (let x = 0; x < WIDTH; x++) {
      const [r, g, b] = frame.pixel(x, y);
      if (0.299 * r + 0.587 * g + 0.114 * b <= 100) continue;
      [left, right, top, bottom] = [Math.min(left, x), Math.max(right, x), Math.min(top, y), Math.max(bottom, y)];
    }
  assert.ok(right >= 0, 'some text is drawn');
  return { width: right - left + 1, height: bottom - top + 1 };
}

describe('add-text', () => {
  const op = useOperation({
    fixtures: ['clip-2s-320x240.webm', 'clip-1s-321x241-odd.webm', 'tone-2s-44k-stereo.mp3'],
    make: {
      // Black for 4 s at 25 fps, with a 440 Hz tone: any bright pixel is text.
      'black.mp4': withTone(`color=c=black:s=${WIDTH}x${HEIGHT}:r=25:d=4`, 4),
    },
  });

  /** Adds text to the black clip over HTTP; returns the output's path and its answer. */
  const addText = async (fields: Record<string, string>, ext = 'mp4') =>
    op.expectOutput(
      '/add-text/',
      { video_url: op.local('black.mp4'), ...fields },
      { message: MESSAGE, name: `${UUID}/with_text\\.${ext}` },
    );

  it('draws the text from start to end only, at the bottom by default and at the top when asked', async () => {
    const bottom = await addText({ text: 'LOWER THIRD', start: '1', end: '2.5' });
    const top = await addText({ text: 'TITLE', start: '00:01', end: '2.5', position: 'top' });
    const cases: Array<[string, string, Rect, Rect]> = [
      ['bottom', bottom.file, BOTTOM, TOP],
      ['top', top.file, TOP, BOTTOM],
    ];
    for (const [name, file, inside, outside] of cases) {
      for (const seconds of [0.5, 0.96, 2.52, 3.5]) {
        const frame = await frameRgb(file, seconds);
        assert.equal(brightPixels(frame, ...WHOLE, 100), 0, `${name}: nothing drawn at ${seconds} s`);
      }
      for (const seconds of [1, 1.5, 2.44]) {
        const frame = await frameRgb(file, seconds);
        const ink = brightPixels(frame, ...inside, 100);
        assert.ok(ink > 100, `${name}: text drawn at ${seconds} s (${ink} pixels)`);
        assert.equal(brightPixels(frame, ...outside, 100), 0, `${name}: nothing in the other third at ${seconds} s`);
      }
    }
    // The sound is copied: every audio packet as it was; the picture lasts as long as before.
    assert.deepEqual(await audioPacketHashes(bottom.file), await audioPacketHashes(op.made['black.mp4']!));
    assert.ok(Math.abs(Number(videoOf(await probe(bottom.file))!.duration) - 4) < 0.01);
  });

  it('without an end, draws the text to the end of the video', async () => {
    const { file } = await addText({ text: 'TO THE END', start: '3' });
    assert.equal(brightPixels(await frameRgb(file, 2.9), ...WHOLE, 100), 0);
    assert.ok(brightPixels(await frameRgb(file, 3.96), ...BOTTOM, 100) > 100);
  });

  for (const [script, text] of [
    ['Latin', 'Ça va, Zoë?'],
    ['CJK', '日本語のテキスト'],
    ['Arabic', 'السَّلَامُ عَلَيْكُمْ'],
  ] as const) {
    it(`draws ${script} text with real glyphs, not boxes, and no warnings`, async () => {
      const glyphs = await addText({ text, start: '1', end: '2' });
      const boxes = await addText({ text: asBoxes(text), start: '1', end: '2' });
      assert.deepEqual(Object.keys(glyphs.body).sort(), ['message', 'output_file']);
      const [drawn, boxed] = [await frameRgb(glyphs.file, 1.5), await frameRgb(boxes.file, 1.5)];
      assert.ok(brightPixels(drawn, ...BOTTOM, 100) > 30, `${script}: some text is drawn`);
      // Encoding noise moves no pixel that much on a black picture; real glyphs against boxes, hundreds.
      const apart = differingPixels(drawn, boxed, ...BOTTOM);
      assert.ok(apart > 150, `${script} is drawn with real glyphs, not boxes (${apart} pixels differ)`);
    });
  }

  it("names characters no installed font has in the answer's warnings", async () => {
    const { body } = await addText({ text: 'A\uE000B' });
    assert.match(JSON.stringify(body.warnings), /U\+E000/i);
  });

  it('draws braces and backslashes literally (no ASS override tags) and breaks lines only at newlines', async () => {
    const frameOf = async (text: string) => frameRgb((await addText({ text, start: '0', end: '1' })).file, 0.5);
    const plain = inkBox(await frameOf('AB'));
    // As tags, `{\b1}` would vanish (AB in bold) and `\N` would break the line: drawn, the line is long and one.
    const literal = inkBox(await frameOf('{\\b1}A\\NB\\'));
    assert.ok(literal.width > 3 * plain.width, `the tag is drawn: ${literal.width} px wide against ${plain.width}`);
    assert.ok(literal.height < 1.5 * plain.height, `one line: ${literal.height} px high against ${plain.height}`);
    const twoLines = inkBox(await frameOf('A\nB'));
    assert.ok(twoLines.height > 1.7 * plain.height, `two lines: ${twoLines.height} px high against ${plain.height}`);
  });

  it("keeps the input's container unless format names another", async () => {
    const webm = await addText({ video_url: op.files.url('/f/clip-2s-320x240.webm'), text: 'Hi' }, 'webm');
    assert.equal(videoOf(await probe(webm.file))!.codec_name, 'vp9');
    const { file } = await addText({ text: 'Hi', format: 'mkv' }, 'mkv');
    assert.equal((await probe(file)).format.format_name, 'matroska,webm');
    // x264 takes no odd sizes: an odd picture made MP4 gets one black column and row, as add-subtitles does.
    const odd = await addText({ video_url: op.files.url('/f/clip-1s-321x241-odd.webm'), text: 'Hi', format: 'mp4' });
    const video = videoOf(await probe(odd.file))!;
    assert.deepEqual([video.codec_name, video.width, video.height], ['h264', 322, 242]);
  });

  it('refuses empty text, an end before the start, a time past the end and a sound file, leaving nothing', async () => {
    const video_url = op.local('black.mp4');
    await op.expectRefusals('/add-text/', [
      [{ video_url, text: '' }, 400, 'Missing required parameter `text`'],
      [{ video_url, text: '  \n ' }, 400, 'Missing required parameter `text`'],
      [{ video_url, text: 'x', start: '2', end: '1' }, 400, 'Expected `end` (1 s) to be after `start` (2 s)'],
      [{ video_url, text: 'x', start: '2', end: '2' }, 400, 'Expected `end` (2 s) to be after `start` (2 s)'],
      [{ video_url, text: 'x', end: '9' }, 400, /^`end` is 9 s, past the end of the input, which lasts 4(\.\d+)? s$/],
      [{ video_url, text: 'x', start: 'soon' }, 400, /^Expected `start` to be a time/],
      [{ video_url, text: 'x', position: 'left' }, 400, /^Expected `position` to be one of bottom, middle, top/],
      [{ video_url, text: 'x'.repeat(2001) }, 400, 'Expected `text` to be at most 2000 characters, got 2001'],
      [{ video_url: op.files.url('/f/tone-2s-44k-stereo.mp3'), text: 'x' }, 422, /is not a video file/],
    ]);
  });

  it('runs asynchronously as a job, its result the synchronous answer', async () => {
    const { file } = await op.asJob(
      '/add-text/',
      { video_url: op.local('black.mp4'), text: 'LATER', start: '1', end: '2', position: 'top' },
      MESSAGE,
    );
    assert.ok(brightPixels(await frameRgb(file, 1.5), ...TOP, 100) > 100);
  });

  it('runs from the CLI on a local file', async () => {
    const black = op.made['black.mp4']!;
    await assertCliParity({
      args: ['add-text', '--video-url', black, '--text', 'CLI'],
      message: MESSAGE,
      output: /\/with_text\.mp4$/,
      check: async (file) => assert.ok(brightPixels(await frameRgb(file, 2), ...BOTTOM, 100) > 50),
      refused: {
        args: ['add-text', '--video-url', black, '--text', 'x', '--start', '2', '--end', '1'],
        stderr: /Expected `(--)?end` \(1 s\) to be after `(--)?start` \(2 s\)/,
      },
    });
  });

  it('runs in a pipeline as a title and a lower third', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: layers
        description: A title at the top for a second, then a lower third
        inputs:
          clip: url
        steps:
          title:
            op: add-text
            with: { video_url: "{{ inputs.clip }}", text: "TITLE", end: 1, position: top }
          lower:
            op: add-text
            with: { video_url: "{{ steps.title.output }}", text: "NAME", start: 2 }
        results:
          short: "{{ steps.lower.output }}"
      `,
      { clip: op.made['black.mp4']! },
    );
    assert.deepEqual(written, ['short.mp4']);
    const short = path.join(out, 'short.mp4');
    const [first, middle, last] = [await frameRgb(short, 0.5), await frameRgb(short, 1.5), await frameRgb(short, 3)];
    assert.ok(brightPixels(first, ...TOP, 100) > 50 && brightPixels(first, ...BOTTOM, 100) === 0);
    assert.equal(brightPixels(middle, ...WHOLE, 100), 0);
    assert.ok(brightPixels(last, ...BOTTOM, 100) > 50 && brightPixels(last, ...TOP, 100) === 0);
  });
});
