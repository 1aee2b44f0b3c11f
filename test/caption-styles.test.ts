import assert from 'node:assert/strict';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer, type Route } from './helpers/file-server.js';
import { frameRgb } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;
type Rgb = [number, number, number];

/** Serves a subtitle file's text. */
const text =
  (body: string): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  };

/** Pixels of the frame that are not (nearly) black: what was drawn on the black clip. */
function drawn(frame: Frame): Array<{ x: number; y: number; rgb: Rgb }> {
  const result = [];
  for (let y = 0; y < frame.height; y++)
    for (let x = 0; x < frame.width; x++) {
      const rgb = frame.pixel(x, y);
      if (Math.max(...rgb) > 40) result.push({ x, y, rgb });
    }
  return result;
}

/** The median of each channel: the colour most of a region has, whatever thin strokes cross it. */
function median(colours: Rgb[]): Rgb {
  const channel = (i: number) => colours.map((c) => c[i]!).sort((a, b) => a - b)[Math.floor(colours.length / 2)]!;
  return [channel(0), channel(1), channel(2)];
}

const near = (a: Rgb, b: Rgb, tolerance: number) => a.every((value, i) => Math.abs(value - b[i]!) <= tolerance);

// The black 480x270 clip, 2 s; one cue over all of it.
const SRT = '1\n00:00:00,000 --> 00:00:02,000\nHello captions\n';

describe('add-subtitles: caption styles', () => {
  let files: FileServer;
  let server: TestServer;

  before(async () => {
    await fixtures('clip-2s-480x270-black.mp4', 'hello.ass');
    files = await startFileServer({ '/cue.srt': text(SRT) });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  /** Burns the cue with style fields and returns the frame at 1 s. */
  async function burned(style: Record<string, string>, subtitle = '/cue.srt'): Promise<Frame> {
    const res = await server.post('/add-subtitles/', {
      video_url: files.url('/f/clip-2s-480x270-black.mp4'),
      subtitle_url: files.url(subtitle),
      ...style,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.warnings, undefined);
    return frameRgb(server.pathOf(res.body.output_video!), 1);
  }

  it('position=top draws the caption in the top third, bottom in the bottom third', async () => {
    for (const [position, third] of [
      ['top', 0],
      ['bottom', 2],
      ['middle', 1],
    ] as const) {
      const pixels = drawn(await burned({ position }));
      assert.ok(pixels.length > 200, `${position}: a caption is drawn (${pixels.length} pixels)`);
      const inThird = pixels.filter(({ y }) => Math.floor(y / 90) === third).length;
      assert.ok(
        inThird / pixels.length > 0.95,
        `${position}: ${inThird} of ${pixels.length} caption pixels in third ${third}`,
      );
    }
  });

  it('color and background: the box has the requested colour, the text the other', async () => {
    const frame = await burned({ color: '#FFFF00', background: '#2040C0', font_size: '160', position: 'middle' });
    const pixels = drawn(frame);
    // The box fills most of the drawn area: its median is the background.
    const box = median(pixels.map((p) => p.rgb));
    assert.ok(near(box, [0x20, 0x40, 0xc0], 25), `box colour ${box}`);
    // The text is what is much brighter than the box (its anti-aliased edges, mixed with blue, are not).
    const luma = ([r, g, b]: Rgb) => 0.299 * r + 0.587 * g + 0.114 * b;
    const glyphs = pixels.filter((p) => luma(p.rgb) > 170).map((p) => p.rgb);
    assert.ok(glyphs.length > 100, `text pixels: ${glyphs.length}`);
    // Wider for the text: 4:2:0 video halves the colour resolution, and thin strokes take some of the blue around them.
    assert.ok(near(median(glyphs), [255, 255, 0], 80), `text colour ${median(glyphs)}`);
    // A box, not an outline: a solid rectangle around the middle of the frame.
    const xs = pixels.map((p) => p.x);
    const ys = pixels.map((p) => p.y);
    const area = (Math.max(...xs) - Math.min(...xs) + 1) * (Math.max(...ys) - Math.min(...ys) + 1);
    assert.ok(pixels.length / area > 0.9, `the drawn area is a filled box (${pixels.length} of ${area})`);
    const middle = (Math.min(...ys) + Math.max(...ys)) / 2;
    assert.ok(Math.abs(middle - 135) < 15, `centred vertically (${middle})`);
  });

  it('a translucent background (#RRGGBBAA) lets the picture through', async () => {
    const [opaque, half] = await Promise.all([
      burned({ background: '#FFFFFF', color: '#000000' }),
      burned({ background: '#FFFFFF80', color: '#000000' }),
    ]);
    const boxOf = (frame: Frame) => median(drawn(frame).map((p) => p.rgb));
    assert.ok(near(boxOf(opaque), [255, 255, 255], 20), `opaque ${boxOf(opaque)}`);
    assert.ok(near(boxOf(half), [128, 128, 128], 30), `half ${boxOf(half)}`);
  });

  it('font_size and max_width change the caption: bigger text, wrapped into narrower lines', async () => {
    // 240 is 60 px on the 270-pixel clip: the line is about 290 px wide, more than half of 480.
    const [small, big, narrow] = await Promise.all([
      burned({ font_size: '60' }),
      burned({ font_size: '240' }),
      burned({ font_size: '240', max_width: '0.5' }),
    ]);
    const extent = (frame: Frame) => {
      const pixels = drawn(frame);
      const xs = pixels.map((p) => p.x);
      const ys = pixels.map((p) => p.y);
      return { width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
    };
    assert.ok(
      extent(big).height > extent(small).height * 2,
      `${JSON.stringify(extent(big))} vs ${JSON.stringify(extent(small))}`,
    );
    assert.ok(
      extent(narrow).width < extent(big).width * 0.7,
      `wrapped: ${extent(narrow).width} vs ${extent(big).width}`,
    );
    assert.ok(
      extent(narrow).height > extent(big).height * 1.6,
      `two lines: ${extent(narrow).height} vs ${extent(big).height}`,
    );
  });

  it('an ASS input keeps its own style (its font size) unless a field overrides it', async () => {
    const own = drawn(await burned({ color: '#FF0000' }, '/f/hello.ass'));
    const red = own.filter(({ rgb: [r, g, b] }) => r > 150 && g < 80 && b < 80).length;
    assert.ok(red > own.length / 3, `the colour field applies (${red} of ${own.length} red)`);
    const plain = drawn(await burned({}, '/f/hello.ass'));
    const height = (pixels: typeof own) => Math.max(...pixels.map((p) => p.y)) - Math.min(...pixels.map((p) => p.y));
    assert.ok(Math.abs(height(own) - height(plain)) <= 2, `its size is kept: ${height(own)} vs ${height(plain)}`);
    const smaller = drawn(await burned({ font_size: '40' }, '/f/hello.ass'));
    assert.ok(height(smaller) < height(plain) * 0.7, `font_size overrides it: ${height(smaller)} vs ${height(plain)}`);
  });

  it('takes an installed font (in any case) and answers 400 with close matches for an unknown one', async () => {
    const frame = await burned({ font: 'noto serif' });
    assert.ok(drawn(frame).length > 200);
    const res = await server.post('/add-subtitles/', {
      video_url: files.url('/f/clip-2s-480x270-black.mp4'),
      subtitle_url: files.url('/cue.srt'),
      font: 'Noto Sanz',
    });
    assert.equal(res.status, 400);
    assert.match(
      res.body.error!,
      /^Expected `font` to be a font family installed on the server, got `Noto Sanz` \(close matches: .*Noto Sans\b/,
    );
  });

  it('refuses values that try to inject ASS or filter syntax, with a 400 naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['color', '#FFFFFF,0'],
      ['color', '#FFF{}FF'],
      ['color', '&H00FFFFFF'],
      ['outline_color', '#000000}{\\bord20'],
      ['background', '#00000080,Default'],
      ['font', 'Arial}{\\fnX'],
      ['font', 'Noto Sans,Arial'],
      ['position', 'top,8'],
      ['font_size', '40{\\fs90}'],
      ['max_width', '0.5:shaping=simple'],
    ];
    for (const [field, value] of cases) {
      const res = await server.post('/add-subtitles/', {
        video_url: files.url('/f/clip-2s-480x270-black.mp4'),
        subtitle_url: files.url('/cue.srt'),
        [field]: value,
      });
      assert.equal(res.status, 400, `${field}=${value}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error!, new RegExp(`\`${field}\``), `${field}=${value}: ${res.body.error}`);
    }
  });

  it('GET /fonts and `mediaflow fonts` list the installed families, the same list', async () => {
    const res = await fetch(`${server.base}/fonts`);
    assert.equal(res.status, 200);
    const { fonts } = (await res.json()) as { fonts: string[] };
    for (const family of ['Noto Sans', 'Noto Sans CJK JP', 'DejaVu Sans']) assert.ok(fonts.includes(family), family);
    assert.deepEqual(
      fonts,
      [...fonts].sort((a, b) => a.localeCompare(b, 'en')),
    );
    assert.ok(fonts.every((family) => !/[,{}\\]/.test(family)));
    const cli = await runCli(['fonts']);
    assert.equal(cli.exitCode, 0, cli.stderr);
    assert.deepEqual(cli.stdout.trimEnd().split('\n'), fonts);
    const json = await runCli(['fonts', '--json']);
    assert.deepEqual(JSON.parse(json.stdout), { fonts });
  });
});
