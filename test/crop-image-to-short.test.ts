import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { probe, videoOf } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

type Pixel = number[];
const isBlack = ([r, g, b]: Pixel) => r! < 24 && g! < 24 && b! < 24;
const isWhite = ([r, g, b]: Pixel) => r! > 230 && g! > 230 && b! > 230;
const isRed = ([r, g, b]: Pixel) => r! > 200 && g! < 60 && b! < 60;
const isBlue = ([r, g, b]: Pixel) => b! > 180 && r! < 70 && g! < 70;
/** The mark fixtures' background (0x808080): neither black nor one of their coloured bands. */
const isGrey = ([r, g, b]: Pixel) =>
  [r!, g!, b!].every((v) => v > 100 && v < 160) && Math.max(r!, g!, b!) - Math.min(r!, g!, b!) < 20;

type Frame = { width: number; height: number; pixel: (x: number, y: number) => Pixel };

/**
 * A still image's decoded RGB pixels. (media.ts's frameRgb passes `-ss`, and ffmpeg 5.1's image2
 * demuxer then returns no frame for larger JPEGs, so stills are decoded here without seeking.)
 */
async function decode(file: string): Promise<Frame> {
  const { width, height } = videoOf(await probe(file)) as { width: number; height: number };
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer' },
  );
  const data = stdout as unknown as Uint8Array;
  assert.equal(data.length, width * height * 3, `decoded ${file}`);
  return { width, height, pixel: (x, y) => [...data.subarray((y * width + x) * 3, (y * width + x + 1) * 3)] };
}

/** Asserts a predicate on pixels, naming the first one that fails. */
function assertPixels(
  frame: Frame,
  points: ReadonlyArray<readonly [number, number]>,
  test: (p: Pixel) => boolean,
  what: string,
): void {
  for (const [x, y] of points)
    assert.ok(test(frame.pixel(x, y)), `pixel ${x},${y} should be ${what}, is ${frame.pixel(x, y)}`);
}

/** Points along every edge of the 720x1280 frame: corners and mid-edges. */
const EDGES = [
  [0, 0],
  [719, 0],
  [0, 1279],
  [719, 1279],
  [360, 0],
  [360, 1279],
  [0, 640],
  [719, 640],
  [3, 300],
  [716, 1000],
] as const;

describe('crop_image_to_short', () => {
  let files: FileServer;
  let server: TestServer;

  before(async () => {
    await fixtures(
      'mark-1920x1080.jpg',
      'mark-800x2400.png',
      'portrait-1080x1920.jpg',
      'white-800x600.png',
      'white-100x400.png',
      'small-300x200.png',
      'red-alpha-400x300.png',
      'alpha-box-1080x1920.png',
      'blue-640x480.webp',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    );
    files = await startFileServer();
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  /** Crops a fixture, checks the response and that the result is a 720x1280 JPEG, and returns its pixels. */
  async function crop(name: string): Promise<Frame> {
    const res = await server.post('/crop_image_to_short/', { image_url: files.url(`/f/${name}`) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Image processed for Shorts format successfully');
    assert.match(
      res.body.output_file!,
      new RegExp(
        `^${server.base}/uploads/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}_cropped\\.jpg$`,
      ),
    );
    const file = server.pathOf(res.body.output_file!);
    assert.deepEqual([...(await readFile(file)).subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG file');
    const video = videoOf(await probe(file))!;
    assert.equal(video.codec_name, 'mjpeg');
    assert.deepEqual([video.width, video.height], [720, 1280]);
    return decode(file);
  }

  it('covers the frame with a large landscape image, cropped around its centre: no black bars', async () => {
    const frame = await crop('mark-1920x1080.jpg');
    // The source's centre mark is at the centre; its left (blue) and right (green) bands are cropped away.
    assertPixels(
      frame,
      [
        [360, 640],
        [340, 620],
        [380, 660],
      ],
      isRed,
      'red (the source centre)',
    );
    assertPixels(frame, EDGES, isGrey, 'grey picture (not a black bar, not a cropped-away band)');
    assertPixels(
      frame,
      [
        [200, 640],
        [520, 640],
        [360, 200],
        [360, 1100],
      ],
      isGrey,
      'grey picture',
    );
  });

  it('covers the frame with a tall image, cropped around its centre', async () => {
    const frame = await crop('mark-800x2400.png');
    // Scaled to 720x2160; the middle 1280 rows stay, without the blue (top) and green (bottom) bands.
    assertPixels(
      frame,
      [
        [360, 640],
        [330, 610],
        [390, 670],
      ],
      isRed,
      'red (the source centre)',
    );
    assertPixels(frame, EDGES, isGrey, 'grey picture');
  });

  it('scales a 9:16 image down to exactly 720x1280', async () => {
    const frame = await crop('portrait-1080x1920.jpg');
    const source = await decode(await fixture('portrait-1080x1920.jpg'));
    // testsrc2's picture reaches every edge: nothing is black that was not black in the source.
    for (const [x, y] of [
      [360, 640],
      [100, 100],
      [600, 1200],
      [360, 20],
    ] as const) {
      const a = source.pixel(Math.round(x * 1.5), Math.round(y * 1.5));
      const b = frame.pixel(x, y);
      assert.ok(
        a.every((v, i) => Math.abs(v - b[i]!) < 40),
        `pixel ${x},${y}: ${a} in the source, ${b} in the output`,
      );
    }
  });

  it('fits a small landscape image and pads it with black above and below', async () => {
    // 800x600 → 720x540, centred: rows 370..909 are picture.
    const frame = await crop('white-800x600.png');
    assertPixels(
      frame,
      [
        [360, 640],
        [0, 640],
        [719, 640],
        [360, 380],
        [360, 900],
      ],
      isWhite,
      'white picture',
    );
    assertPixels(
      frame,
      [
        [360, 0],
        [0, 0],
        [719, 1279],
        [360, 360],
        [360, 920],
        [360, 1279],
      ],
      isBlack,
      'a black bar',
    );
  });

  it('fits a small narrow image and pads it with black left and right', async () => {
    // 100x400 → 320x1280, centred: columns 200..519 are picture.
    const frame = await crop('white-100x400.png');
    assertPixels(
      frame,
      [
        [360, 640],
        [360, 0],
        [360, 1279],
        [210, 640],
        [510, 640],
      ],
      isWhite,
      'white picture',
    );
    assertPixels(
      frame,
      [
        [0, 640],
        [190, 640],
        [530, 640],
        [719, 640],
        [0, 0],
        [719, 1279],
      ],
      isBlack,
      'a black bar',
    );
  });

  it('fits small images of other formats (PNG testsrc, WebP)', async () => {
    let frame = await crop('blue-640x480.webp');
    // 640x480 → 720x540, rows 370..909.
    assertPixels(
      frame,
      [
        [360, 640],
        [5, 400],
        [714, 880],
      ],
      isBlue,
      'blue picture',
    );
    assertPixels(
      frame,
      [
        [360, 10],
        [360, 1270],
      ],
      isBlack,
      'a black bar',
    );
    frame = await crop('small-300x200.png');
    // 300x200 → 720x480, rows 400..879.
    assertPixels(
      frame,
      [
        [360, 10],
        [360, 390],
        [360, 890],
        [360, 1270],
      ],
      isBlack,
      'a black bar',
    );
    assert.ok(!isBlack(frame.pixel(360, 640)), `centre ${frame.pixel(360, 640)}`);
  });

  it('turns transparency black, in small and in large images', async () => {
    let frame = await crop('red-alpha-400x300.png');
    assertPixels(
      frame,
      [
        [360, 640],
        [0, 0],
        [719, 1279],
        [100, 600],
        [600, 700],
      ],
      isBlack,
      'black (transparent red)',
    );
    frame = await crop('alpha-box-1080x1920.png');
    assertPixels(
      frame,
      [
        [360, 640],
        [300, 580],
        [420, 700],
      ],
      isWhite,
      'white (the opaque square)',
    );
    assertPixels(frame, [...EDGES, [200, 640], [520, 640]], isBlack, 'black (transparent red)');
  });

  it(
    'answers a missing URL with 400, a failed download with 502, an input that is not an image with 422, ' +
      'leaving no work files',
    async () => {
      let res = await server.post('/crop_image_to_short/', {});
      assert.equal(res.status, 400);
      assert.match(res.body.error!, /image_url/);
      res = await server.post('/crop_image_to_short/', { image_url: 'not a url' });
      assert.equal(res.status, 400);
      const missing = files.url('/f/missing.jpg');
      res = await server.post('/crop_image_to_short/', { image_url: missing });
      assert.equal(res.status, 502);
      assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
      for (const name of ['tone-2s-44k-stereo.mp3', 'not-media.txt']) {
        res = await server.post('/crop_image_to_short/', { image_url: files.url(`/f/${name}`) });
        assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
        assert.ok(!res.body.error!.includes(server.dataDir), res.body.error);
      }
      assert.deepEqual(await server.workLeftovers(), []);
    },
  );

  it('runs from the CLI with a local path, printing the same JSON', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
    try {
      const local = await fixture('mark-1920x1080.jpg');
      const result = await runCli(['crop-image-to-short', '--image-url', local, '--out-dir', out]);
      assert.equal(result.exitCode, 0, result.stderr);
      const body = JSON.parse(result.stdout) as Record<string, string>;
      assert.equal(body.message, 'Image processed for Shorts format successfully');
      assert.ok(body.output_file!.startsWith(out) && body.output_file!.endsWith('_cropped.jpg'), body.output_file);
      const frame = await decode(body.output_file!);
      assert.deepEqual([frame.width, frame.height], [720, 1280]);
      assert.ok(isRed(frame.pixel(360, 640)));
      assertPixels(frame, EDGES, isGrey, 'grey picture');
      const bad = await runCli(['crop-image-to-short', '--image-url', path.join(out, 'no-such.png'), '--out-dir', out]);
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /not found/);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
