import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer, type Route } from './helpers/file-server.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { brightPixels, differingPixels, frameRgb } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** One line in each script mediaflow's fonts must draw; emoji in monochrome (libass draws no colour fonts). */
const SCRIPTS = [
  ['Chinese', '你好世界'],
  ['Japanese', '日本語のテキスト'],
  ['Korean', '안녕하세요'],
  // With its vowel marks, which only complex shaping places on their letters.
  ['Arabic', 'السَّلَامُ عَلَيْكُمْ'],
  ['Hebrew', 'שלום עולם'],
  ['Devanagari', 'नमस्ते दुनिया'],
  // Tone marks over upper vowels, which only complex shaping stacks instead of drawing them over each other.
  ['Thai', 'ปี่ ฝี่ ฟี่ ป้ำ น้ำ ที่ ปั้น'],
  ['emoji', '😀🎉👍'],
] as const;

/**
 * The same line as no font draws it: each character a private-use one (U+E000), which no font has,
 * so libass draws the box it draws for any missing glyph. A line in a script whose font is missing
 * comes out exactly like this.
 */
const asBoxes = (text: string) => [...text].map((c) => (c === ' ' ? ' ' : '\uE000')).join('');

/** An SRT document with one cue per line, one second each. */
const srtOf = (lines: readonly string[]) =>
  lines.map((line, i) => `${i + 1}\n00:00:0${i},000 --> 00:00:0${i + 1},000\n${line}\n`).join('\n');

/** The bottom band of the 640x360 picture, where libass draws a one-line cue. */
const TEXT_BAND = [0, 270, 640, 90] as const;

const serveText =
  (text: string): Route =>
  (_req, res) =>
    void res.writeHead(200, { 'content-type': 'application/x-subrip' }).end(text);

describe('add-subtitles: every script renders', () => {
  let files: FileServer;
  let server: TestServer;
  let work: string;

  before(async () => {
    await fixtures('black-8s-640x360-silent.mp4');
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-scripts-'));
    files = await startFileServer({
      '/scripts.srt': serveText(srtOf(SCRIPTS.map(([, text]) => text))),
      '/boxes.srt': serveText(srtOf(SCRIPTS.map(([, text]) => asBoxes(text)))),
    });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    await rm(work, { recursive: true, force: true });
  });

  /** POSTs a burn of `subtitles` onto the black clip; returns the body and each cue's frame. */
  async function burn(subtitles: string): Promise<{ body: Record<string, unknown>; frames: Frame[] }> {
    const res = await server.post('/add-subtitles/', {
      video_url: files.url('/f/black-8s-640x360-silent.mp4'),
      subtitle_url: files.url(subtitles),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const output = server.pathOf(res.body.output_video!);
    const frames = await Promise.all(SCRIPTS.map((_, i) => frameRgb(output, i + 0.5)));
    return { body: res.body, frames };
  }

  /** A frame of `text` rendered by ffmpeg's `ass` filter directly, with the given shaping, for comparison. */
  async function reference(text: string, shaping: 'simple' | 'complex'): Promise<Frame> {
    const srt = path.join(work, 'one.srt');
    const ass = path.join(work, 'one.ass');
    const png = path.join(work, `${shaping}.png`);
    await writeFile(srt, srtOf([text]));
    await execa('ffmpeg', ['-v', 'error', '-y', '-i', srt, ass]);
    await execa('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'color=c=black:size=640x360:rate=10:duration=1',
      '-vf',
      `ass=filename=${ass}:shaping=${shaping}`,
      '-frames:v',
      '1',
      png,
    ]);
    return frameRgb(png);
  }

  it(
    'draws real glyphs, not boxes, for CJK, Arabic, ' + 'Hebrew, Devanagari, Thai and emoji, with no warnings',
    async () => {
      const scripts = await burn('/scripts.srt');
      const boxes = await burn('/boxes.srt');
      // Nothing missing: the answer is exactly the contract's, with no `warnings`.
      assert.deepEqual(Object.keys(scripts.body).sort(), ['message', 'output_video']);
      SCRIPTS.forEach(([name], i) => {
        const [glyphs, box] = [scripts.frames[i]!, boxes.frames[i]!];
        assert.ok(brightPixels(glyphs, ...TEXT_BAND, 100) > 30, `${name}: some text is drawn`);
        assert.ok(brightPixels(box, ...TEXT_BAND, 100) > 30, `${name}: the boxes are drawn`);
        // Encoding noise moves no pixel by that much on a black picture; real glyphs against boxes, hundreds.
        const difference = differingPixels(glyphs, box, ...TEXT_BAND);
        assert.ok(difference > 150, `${name} is drawn with real glyphs, not boxes (${difference} pixels differ)`);
      });
    },
  );

  it('shapes Arabic, Devanagari and Thai (complex shaping, not simple)', async () => {
    const { frames } = await burn('/scripts.srt');
    for (const name of ['Arabic', 'Devanagari', 'Thai']) {
      const index = SCRIPTS.findIndex(([script]) => script === name);
      const text = SCRIPTS[index]![1];
      const [simple, complex] = [await reference(text, 'simple'), await reference(text, 'complex')];
      const apart = differingPixels(simple, complex, ...TEXT_BAND);
      assert.ok(apart > 40, `${name}: simple and complex shaping differ (${apart} pixels)`);
      const [toComplex, toSimple] = [
        differingPixels(frames[index]!, complex, ...TEXT_BAND),
        differingPixels(frames[index]!, simple, ...TEXT_BAND),
      ];
      assert.ok(
        toComplex < toSimple / 3,
        `${name} is drawn as complex shaping draws it: ${toComplex} pixels differ from complex, ${toSimple} ` +
          `from simple`,
      );
    }
  });

  it(
    'with only a Latin font, draws boxes, ' + 'and `warnings` names the characters and the package for each script',
    async () => {
      // fontconfig shown one font only (the one it picks for DejaVu Sans, itself a Latin font), for ffmpeg's run alone.
      const { stdout: font } = await execa('fc-match', ['-f', '%{file}', 'DejaVu Sans']);
      const fonts = path.join(work, 'latin-only');
      await mkdir(fonts, { recursive: true });
      await symlink(font, path.join(fonts, path.basename(font)));
      const config = path.join(work, 'fonts.conf');
      await writeFile(
        config,
        `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n` +
          `<fontconfig><dir>${fonts}</dir><cachedir>${path.join(work, 'fc-cache')}</cachedir></fontconfig>\n`,
      );
      const previous = process.env.FONTCONFIG_FILE;
      process.env.FONTCONFIG_FILE = config;
      let latinOnly: Awaited<ReturnType<typeof burn>>;
      let boxes: Awaited<ReturnType<typeof burn>>;
      try {
        latinOnly = await burn('/scripts.srt');
        boxes = await burn('/boxes.srt');
      } finally {
        if (previous === undefined) delete process.env.FONTCONFIG_FILE;
        else process.env.FONTCONFIG_FILE = previous;
      }
      // The comparison the first test relies on can fail: Chinese without its font is exactly the boxes.
      const chinese = SCRIPTS.findIndex(([name]) => name === 'Chinese');
      assert.ok(
        differingPixels(latinOnly.frames[chinese]!, boxes.frames[chinese]!, ...TEXT_BAND) < 5,
        'Chinese without a CJK font is drawn as boxes',
      );
      const warnings = latinOnly.body.warnings as string[];
      assert.ok(Array.isArray(warnings), JSON.stringify(latinOnly.body));
      const about = (codePoint: string, fontPackage: string) =>
        assert.ok(
          warnings.some(
            (w) =>
              w.startsWith('No font has glyphs for ') &&
              w.includes(codePoint) &&
              w.endsWith(`: they render as empty boxes; install ${fontPackage}`),
          ),
          `${codePoint} and ${fontPackage} in ${JSON.stringify(warnings)}`,
        );
      about('U+4F60', 'fonts-noto-cjk'); // 你
      about('U+65E5', 'fonts-noto-cjk'); // 日
      about('U+0928', 'fonts-noto-core'); // न
      about('U+0E1B', 'fonts-noto-core'); // ป
      about('U+1F389', 'fonts-symbola'); // 🎉
    },
  );

  it('names characters no font has in `warnings`, synchronously and in the job result', async () => {
    const { body } = await burn('/boxes.srt');
    assert.deepEqual(Object.keys(body).sort(), ['message', 'output_video', 'warnings']);
    assert.equal(body.message, 'Subtitles added successfully');
    assert.deepEqual(body.warnings, [
      'No font has glyphs for U+E000: they render as empty boxes; they are private-use characters, which only ' +
        'a font made for them draws',
    ]);

    const id = await submitJob(
      server.base,
      '/add-subtitles/',
      { video_url: files.url('/f/black-8s-640x360-silent.mp4'), subtitle_url: files.url('/boxes.srt') },
      { Prefer: 'respond-async' },
    );
    const job = await waitForJob(server.base, id, undefined, { ms: 60_000 });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual(Object.keys(job.result!).sort(), ['message', 'output_video', 'warnings']);
    assert.deepEqual(job.result!.warnings, body.warnings);
  });

  it('the CLI prints the warnings to stderr, and its answer on stdout as before', async () => {
    const subtitles = path.join(work, 'boxes.srt');
    await writeFile(subtitles, srtOf(['\uE000\uE000']));
    const out = path.join(work, 'cli-out');
    const result = await runCli([
      'add-subtitles',
      '--video-url',
      await fixture('black-8s-640x360-silent.mp4'),
      '--subtitle-url',
      subtitles,
      '--out-dir',
      out,
    ]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(
      result.stderr,
      /^mediaflow: warning: No font has glyphs for U\+E000: they render as empty boxes; they are private-use characters, which only a font made for them draws$/m,
    );
    assert.deepEqual(Object.keys(JSON.parse(result.stdout) as object).sort(), ['message', 'output_video']);
  });
});
