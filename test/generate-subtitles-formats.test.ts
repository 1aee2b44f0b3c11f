import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { frameRgb } from './helpers/media.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** The red (highlighted) pixels of a frame. */
function redPixels(frame: Frame): Array<{ x: number; y: number }> {
  const result = [];
  for (let y = 0; y < frame.height; y++)
    for (let x = 0; x < frame.width; x++) {
      const [r, g, b] = frame.pixel(x, y);
      if (r > 150 && g < 100 && b < 100) result.push({ x, y });
    }
  return result;
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

describe('generate-subtitles: srt, vtt and styled ass with word highlighting', () => {
  const op = useOperation({ fixtures: ['clip-2s-480x270-black.mp4'] });

  /** Generates, expects success, and returns the URL and the file's text. */
  async function generate(fields: Record<string, string>, extension: string): Promise<{ url: string; text: string }> {
    const res = await op.server.post('/generate-subtitles/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'subtitle_file_url']);
    const url = res.body.subtitle_file_url!;
    assert.match(url, new RegExp(`^${op.server.base}/uploads/[0-9a-f-]{36}/generated_subtitles\\.${extension}$`));
    return { url, text: await readFile(op.server.pathOf(url), 'utf8') };
  }

  it('without the new fields, or with format=srt, writes the seed SRT byte for byte', async () => {
    const fields = { text: 'Hello there, world. 日本語の字幕です。 Fin!', words_per_line: '3', seconds_per_line: '2' };
    const seed =
      '1\n00:00:00,000 --> 00:00:02,000\nHello there, world.\n\n' +
      '2\n00:00:02,000 --> 00:00:04,000\n日本語の字幕\n\n' +
      '3\n00:00:04,000 --> 00:00:06,000\nです。\n\n' +
      '4\n00:00:06,000 --> 00:00:08,000\nFin!\n';
    assert.equal((await generate(fields, 'srt')).text, seed);
    assert.equal((await generate({ ...fields, format: 'srt' }, 'srt')).text, seed);
  });

  it('format=vtt writes WebVTT, with &, < and > as entities, served as text/vtt in UTF-8', async () => {
    const { url, text } = await generate(
      { text: 'Tom & Jerry <3 cats. Bye', format: 'vtt', words_per_line: '4' },
      'vtt',
    );
    assert.equal(
      text,
      'WEBVTT\n\n00:00:00.000 --> 00:00:03.000\nTom &amp; Jerry &lt;3\n\n00:00:03.000 --> 00:00:06.000\n' +
        'cats.\n\n00:00:06.000 --> 00:00:09.000\nBye\n',
    );
    const res = await fetch(url);
    assert.equal(res.headers.get('content-type'), 'text/vtt; charset=utf-8');
  });

  it('format=ass writes the style fields into its style and user text escaped, served as text/x-ssa', async () => {
    const { url, text } = await generate(
      {
        text: 'Hi {\\fnX} there',
        format: 'ass',
        font: 'noto sans',
        font_size: '90',
        bold: 'true',
        color: '#00FF00',
        position: 'top',
      },
      'ass',
    );
    const style = text.split('\n').find((line) => line.startsWith('Style: '))!;
    assert.equal(
      style,
      'Style: Default,Noto Sans,90,&H0000FF00,&H0000FF00,&H00000000,&H00000000,-1,0,0,0,100,100,0,0,1,4,0,8,40,40,40,0',
    );
    // Braces escaped, the backslash kept from starting a tag: libass draws them as text.
    assert.match(text, /^Dialogue: 0,0:00:00\.00,0:00:03\.00,Default,,0,0,0,,Hi \\\{\\\u2060fnX\\\} there$/m);
    assert.equal((await fetch(url)).headers.get('content-type'), 'text/x-ssa; charset=utf-8');
  });

  it(
    'highlight=word: \\k tags share each cue in proportion to word length, and the highlight moves across the ' +
      'burned-in words',
    async () => {
      const { url, text } = await generate(
        {
          text: 'One two three',
          format: 'ass',
          highlight: 'word',
          highlight_color: '#FF0000',
          seconds_per_line: '2',
          font_size: '200',
          position: 'middle',
        },
        'ass',
      );
      const event = text.split('\n').find((line) => line.startsWith('Dialogue: '))!;
      // 3, 3 and 5 letters of 11 over 200 centiseconds: ends at 55, 109 and 200.
      assert.deepEqual(
        [...event.matchAll(/\\k(\d+)/g)].map((m) => Number(m[1])),
        [55, 54, 91],
      );
      assert.deepEqual(
        [...event.matchAll(/\\t\((\d+),/g)].map((m) => Number(m[1])),
        [550, 1090, 2000],
      );

      const res = await op.server.post('/add-subtitles/', {
        video_url: op.files.url('/f/clip-2s-480x270-black.mp4'),
        subtitle_url: url,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const video = op.server.pathOf(res.body.output_video!);
      const [early, late] = await Promise.all([frameRgb(video, 0.25), frameRgb(video, 1.6)]);
      const first = redPixels(early);
      const last = redPixels(late);
      assert.ok(first.length > 100 && last.length > 100, `highlighted pixels: ${first.length}, ${last.length}`);
      const firstRight = Math.max(...first.map((p) => p.x));
      // At 0.25 s the first word is red; at 1.6 s the third is, and the first is white again.
      assert.ok(
        mean(last.map((p) => p.x)) > mean(first.map((p) => p.x)) + 80,
        `moved right: ${mean(first.map((p) => p.x))} -> ${mean(last.map((p) => p.x))}`,
      );
      assert.equal(last.filter((p) => p.x <= firstRight).length, 0, 'the first word is no longer highlighted');
      const white = (frame: Frame, x0: number, x1: number) => {
        let count = 0;
        for (let y = 0; y < frame.height; y++)
          for (let x = x0; x <= x1; x++) if (frame.pixel(x, y).every((c) => c > 200)) count++;
        return count;
      };
      assert.ok(
        white(late, Math.min(...first.map((p) => p.x)), firstRight) > 100,
        'the first word is drawn in the text colour',
      );
    },
  );

  it(
    'refuses style fields for srt and vtt, bad highlight values and injecting colours with a 400 naming ' + 'the field',
    async () => {
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ color: '#FFFFFF' }, /^Expected `format` to be ass when `color` is given: srt files carry no styles$/],
        [{ format: 'vtt', highlight: 'word' }, /`highlight` is given: vtt files/],
        [{ format: 'ass', highlight: 'line' }, /^Expected `highlight` to be one of word, got `line`$/],
        [
          { format: 'ass', highlight: 'word', highlight_color: '#F0}{,0' },
          /^Expected `highlight_color` to be a colour as #RRGGBB/,
        ],
        [{ format: 'ass', font: 'Arial}{\\fnX' }, /^Expected `font` to be a font family installed on the server/],
        [{ format: 'txt' }, /^Unsupported format 'txt'. Supported formats: srt, vtt, ass.$/],
      ];
      for (const [fields, error] of cases) {
        // Asynchronous requests are refused alike, before a job exists: no 202 for a job bound to fail.
        for (const headers of [{}, { prefer: 'respond-async' }] as Array<Record<string, string>>) {
          const res = await op.server.post('/generate-subtitles/', { text: 'Hello there', ...fields }, { headers });
          assert.equal(res.status, 400, `${JSON.stringify(fields)} ${JSON.stringify(headers)}`);
          assert.match(res.body.error!, error);
        }
      }
    },
  );
});
