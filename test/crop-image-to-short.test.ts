import assert from 'node:assert/strict';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { FIXTURE_DIR, fixture } from './helpers/fixtures.js';
import { frameRgb, probe, videoOf } from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';
import { assertPixels, isBlack, isBlue, isRed, isWhite, type Picture, type Pixel } from './helpers/pixels.js';

/** The mark fixtures' background (0x808080): neither black nor one of their coloured bands. */
const isGrey = ([r, g, b]: Pixel) =>
  [r!, g!, b!].every((v) => v > 100 && v < 160) && Math.max(r!, g!, b!) - Math.min(r!, g!, b!) < 20;

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
  const op = useOperation({
    fixtures: [
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
    ],
  });

  /** Crops a fixture, checks the response and that the result is a 720x1280 JPEG, and returns its pixels. */
  async function crop(name: string): Promise<Picture> {
    const { file } = await op.expectOutput(
      '/crop_image_to_short/',
      { image_url: op.files.url(`/f/${name}`) },
      { message: 'Image processed for Shorts format successfully', name: `${UUID}_cropped\\.jpg` },
    );
    assert.deepEqual([...(await readFile(file)).subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG file');
    const video = videoOf(await probe(file))!;
    assert.equal(video.codec_name, 'mjpeg');
    assert.deepEqual([video.width, video.height], [720, 1280]);
    return frameRgb(file);
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
    const source = await frameRgb(await fixture('portrait-1080x1920.jpg'));
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
      let res = await op.server.post('/crop_image_to_short/', {});
      assert.equal(res.status, 400);
      assert.match(res.body.error!, /image_url/);
      res = await op.server.post('/crop_image_to_short/', { image_url: 'not a url' });
      assert.equal(res.status, 400);
      const missing = op.files.url('/f/missing.jpg');
      res = await op.server.post('/crop_image_to_short/', { image_url: missing });
      assert.equal(res.status, 502);
      assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
      for (const name of ['tone-2s-44k-stereo.mp3', 'not-media.txt']) {
        res = await op.server.post('/crop_image_to_short/', { image_url: op.files.url(`/f/${name}`) });
        assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
        assert.ok(!res.body.error!.includes(op.server.dataDir), res.body.error);
      }
      assert.deepEqual(await op.server.workLeftovers(), []);
    },
  );

  it('runs from the CLI with a local path, printing the same JSON', async () => {
    await assertCliParity({
      args: ['crop-image-to-short', '--image-url', await fixture('mark-1920x1080.jpg')],
      message: 'Image processed for Shorts format successfully',
      output: /_cropped\.jpg$/,
      check: async (file) => {
        const frame = await frameRgb(file);
        assert.deepEqual([frame.width, frame.height], [720, 1280]);
        assert.ok(isRed(frame.pixel(360, 640)));
        assertPixels(frame, EDGES, isGrey, 'grey picture');
      },
      refused: {
        args: ['crop-image-to-short', '--image-url', path.join(FIXTURE_DIR, 'no-such.png')],
        stderr: /not found/,
      },
    });
  });
});
