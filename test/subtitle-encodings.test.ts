import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer, type Route } from './helpers/file-server.js';
import { brightPixels, differingPixels, frameRgb } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** Two cues, so the frames at 0.5 s and 1.5 s show one each; two lines give chardet text enough to judge. */
const srtOf = (first: string, second: string) =>
  `1\n00:00:00,000 --> 00:00:01,000\n${first}\n\n2\n00:00:01,000 --> 00:00:02,000\n${second}\n`;

/** Byte-order marks, written by hand rather than by the code under test. */
const BOM: Record<string, number[]> = {
  'utf-8': [0xef, 0xbb, 0xbf],
  'utf-16le': [0xff, 0xfe],
  'utf-16be': [0xfe, 0xff],
  'utf-32le': [0xff, 0xfe, 0, 0],
};

/** Subtitle files as editors save them: each text, and the encodings it is served in. */
const CASES: ReadonlyArray<{ name: string; lines: [string, string]; encodings: string[] }> = [
  {
    name: 'multilingual',
    lines: ['Grüße, 日本語 и русский', 'مرحبا — “quotes” ok'],
    encodings: ['utf-8+bom', 'utf-16le+bom', 'utf-16be+bom', 'utf-32le+bom'],
  },
  {
    name: 'french',
    lines: ['Ça va très bien — “naïve” café', 'Où est la bibliothèque? Voilà…'],
    encodings: ['windows-1252'],
  },
  {
    name: 'german',
    lines: ['Überall schön, Grüße aus Köln', 'Die Straße ist ruhig und grün'],
    encodings: ['iso-8859-1'],
  },
  {
    name: 'japanese',
    lines: ['日本語の字幕です。こんにちは、世界。', '今日はとてもいい天気ですね。'],
    encodings: ['shift_jis'],
  },
  { name: 'chinese', lines: ['你好世界，这是中文字幕。', '我们今天去公园散步。'], encodings: ['gb18030'] },
  {
    name: 'russian',
    lines: ['Привет мир, это русские субтитры.', 'Сегодня хорошая погода.'],
    encodings: ['windows-1251'],
  },
  { name: 'korean', lines: ['안녕하세요 세계, 한국어 자막입니다.', '오늘은 날씨가 좋습니다.'], encodings: ['euc-kr'] },
];

/** The bytes of `text` in `encoding`; `+bom` prepends the byte-order mark. */
function encoded(text: string, encoding: string): Buffer {
  const [name, bom] = encoding.split('+') as [string, string | undefined];
  return Buffer.concat([Buffer.from(bom ? BOM[name]! : []), iconv.encode(text, name, { addBOM: false })]);
}

/** Bytes no encoding reads as text (a fixed pseudo-random sequence, so every run is the same). */
function garbage(length: number): Buffer {
  let state = 12345;
  return Buffer.from(Array.from({ length }, () => ((state = (state * 1103515245 + 12345) % 2 ** 31) >> 16) & 0xff));
}

const TEXT_BAND = [0, 200, 480, 70] as const;

describe('add-subtitles: subtitle files in any common encoding', () => {
  let files: FileServer;
  let server: TestServer;
  const bodies: Record<string, Buffer> = {};

  before(async () => {
    await fixtures('clip-2s-480x270-black.mp4');
    for (const { name, lines, encodings } of CASES) {
      bodies[`/${name}/utf-8.srt`] = Buffer.from(srtOf(...lines), 'utf8');
      for (const encoding of encodings) bodies[`/${name}/${encoding}.srt`] = encoded(srtOf(...lines), encoding);
    }
    bodies['/garbage-in-srt.srt'] = Buffer.concat([
      Buffer.from('1\n00:00:00,000 --> 00:00:02,000\n'),
      garbage(600),
      Buffer.from('\n'),
    ]);
    bodies['/garbage.srt'] = garbage(4000);
    const serve =
      (bytes: Buffer): Route =>
      (_req, res) =>
        void res.writeHead(200, { 'content-type': 'application/x-subrip' }).end(bytes);
    files = await startFileServer(
      Object.fromEntries(Object.entries(bodies).map(([route, bytes]) => [route, serve(bytes)])),
    );
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  /** Burns a served subtitle file onto the black clip and returns the frames of its two cues. */
  async function burn(route: string): Promise<Frame[]> {
    const res = await server.post('/add-subtitles/', {
      video_url: files.url('/f/clip-2s-480x270-black.mp4'),
      subtitle_url: files.url(route),
    });
    assert.equal(res.status, 200, `${route}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'output_video'], `${route}: no warnings`);
    const output = server.pathOf(res.body.output_video!);
    return Promise.all([frameRgb(output, 0.5), frameRgb(output, 1.5)]);
  }

  it(
    'reads UTF-8/16/32 with a byte-order mark, Windows-1252, Latin-1, Shift_JIS, GB18030, Windows-1251 and ' +
      'EUC-KR: drawn as the UTF-8 file is',
    async () => {
      for (const { name, encodings } of CASES) {
        const reference = await burn(`/${name}/utf-8.srt`);
        reference.forEach((frame, cue) =>
          assert.ok(brightPixels(frame, ...TEXT_BAND, 100) > 50, `${name}: cue ${cue + 1} is drawn`),
        );
        for (const encoding of encodings) {
          const frames = await burn(`/${name}/${encoding}.srt`);
          // Text decoded wrongly (mojibake) or a stray mark draws other glyphs: hundreds of pixels apart.
          frames.forEach((frame, cue) => {
            const apart = differingPixels(frame, reference[cue]!, ...TEXT_BAND);
            assert.ok(
              apart < 5,
              `${name} in ${encoding}, cue ${cue + 1}: ${apart} pixels differ from the UTF-8 file's`,
            );
          });
        }
      }
      assert.deepEqual(await server.workLeftovers(), []);
    },
  );

  it('answers 422 for a file whose encoding cannot be detected, saying so', async () => {
    for (const route of ['/garbage-in-srt.srt', '/garbage.srt']) {
      const url = files.url(route);
      const res = await server.post('/add-subtitles/', {
        video_url: files.url('/f/clip-2s-480x270-black.mp4'),
        subtitle_url: url,
      });
      assert.equal(res.status, 422, `${route}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, {
        error:
          `Input ${url} is not a subtitle file: its character encoding could not be detected (binary data, or ` +
          `text in an unknown encoding)`,
        code: 'MF_ERR_MEDIA',
      });
    }
    assert.deepEqual(await server.workLeftovers(), []);
  });
});
