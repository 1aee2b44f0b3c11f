import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import sharp from 'sharp';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import { probe, videoOf } from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';
import { isBlack, isBlue, isWhite, isYellow, type Pixel } from './helpers/pixels.js';
const near = (a: Pixel, b: Pixel, tolerance: number) =>
  a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) <= tolerance);

/**
 * A still image's decoded pixels, RGB or RGBA. (media.ts's frameRgb passes `-ss`, and ffmpeg 5.1's
 * image2 demuxer then returns no frame for larger JPEGs, so stills are decoded here without seeking.)
 */
async function decode(
  file: string,
  pixFmt: 'rgb24' | 'rgba' = 'rgb24',
): Promise<{ width: number; height: number; pixel: (x: number, y: number) => Pixel }> {
  const { width, height } = videoOf(await probe(file)) as { width: number; height: number };
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', pixFmt, 'pipe:1'],
    { encoding: 'buffer' },
  );
  const data = stdout as unknown as Uint8Array;
  const channels = pixFmt === 'rgba' ? 4 : 3;
  assert.equal(data.length, width * height * channels, `decoded ${file}`);
  return {
    width,
    height,
    pixel: (x, y) => [...data.subarray((y * width + x) * channels, (y * width + x + 1) * channels)],
  };
}

const SUPPORTED = 'png, jpg, jpeg, webp, bmp, tiff, gif';

/** What ffprobe calls the codec of each target, and the first bytes of such a file. */
const TARGETS: Record<string, { codec: string; magic: number[] }> = {
  png: { codec: 'png', magic: [0x89, 0x50, 0x4e, 0x47] },
  jpg: { codec: 'mjpeg', magic: [0xff, 0xd8, 0xff] },
  jpeg: { codec: 'mjpeg', magic: [0xff, 0xd8, 0xff] },
  webp: { codec: 'webp', magic: [0x52, 0x49, 0x46, 0x46] },
  bmp: { codec: 'bmp', magic: [0x42, 0x4d] },
  tiff: { codec: 'tiff', magic: [0x49, 0x49, 0x2a, 0x00] },
  gif: { codec: 'gif', magic: [0x47, 0x49, 0x46, 0x38] },
};

describe('convert_image_from_url', () => {
  const op = useOperation({
    fixtures: [
      'yellow-333x251.jpg',
      'blue-640x480.webp',
      'small-300x200.png',
      'red-alpha-400x300.png',
      'alpha-box-1080x1920.png',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    ],
  });

  /** Converts a fixture and returns the produced file's path after checking the response and its type. */
  async function convert(name: string, target: string): Promise<string> {
    const { file } = await op.expectOutput(
      '/convert_image_from_url/',
      { image_url: op.files.url(`/f/${name}`), target_format: target },
      { message: `Image converted to ${target} successfully.`, name: `${UUID}_converted\\.${target}` },
    );
    const { codec, magic } = TARGETS[target]!;
    assert.deepEqual([...(await readFile(file)).subarray(0, magic.length)], magic, `${target} file signature`);
    assert.equal(videoOf(await probe(file))?.codec_name, codec, target);
    return file;
  }

  for (const target of Object.keys(TARGETS)) {
    it(`writes ${target} of the input's (odd) size, keeping its colours`, async () => {
      const file = await convert('yellow-333x251.jpg', target);
      const frame = await decode(file);
      assert.deepEqual([frame.width, frame.height], [333, 251]);
      const source = await decode(await fixture('yellow-333x251.jpg'));
      // The last column of a 4:2:0 JPEG of odd width has half a chroma sample, which decoders
      // upsample differently (ffmpeg reads 239,240,122 where libjpeg, in libvips, reads 244,244,84):
      // a pixel keeps its colour when it is near the source as either decoder reads it.
      const libvipsSource = await sharp(await fixture('yellow-333x251.jpg'))
        .raw()
        .toBuffer({ resolveWithObject: true });
      const libvipsPixel = (x: number, y: number) => [
        ...libvipsSource.data.subarray((y * 333 + x) * 3, (y * 333 + x + 1) * 3),
      ];
      assert.ok(isYellow(frame.pixel(166, 125)), `${target} centre is ${frame.pixel(166, 125)}`);
      for (const [x, y] of [
        [0, 0],
        [166, 125],
        [332, 0],
        [0, 250],
        [332, 250],
      ] as const) {
        const kept = near(frame.pixel(x, y), source.pixel(x, y), 24) || near(frame.pixel(x, y), libvipsPixel(x, y), 24);
        assert.ok(
          kept,
          `${target} pixel ${x},${y}: ${source.pixel(x, y)} (libvips: ${libvipsPixel(x, y)}) ` +
            `became ${frame.pixel(x, y)}`,
        );
      }
    });
  }

  it('keeps a pure blue WebP blue as PNG, and a detailed PNG detailed as GIF', async () => {
    let file = await convert('blue-640x480.webp', 'png');
    let video = videoOf(await probe(file))!;
    assert.deepEqual([video.width, video.height], [640, 480]);
    const blue = await decode(file);
    for (const [x, y] of [
      [0, 0],
      [320, 240],
      [639, 479],
    ] as const)
      assert.ok(isBlue(blue.pixel(x, y)), `pixel ${x},${y} is ${blue.pixel(x, y)}`);

    // testsrc's colour bars survive GIF's 256-colour palette close to their source values.
    file = await convert('small-300x200.png', 'gif');
    video = videoOf(await probe(file))!;
    assert.deepEqual([video.width, video.height], [300, 200]);
    const source = await decode(await fixture('small-300x200.png'));
    const gif = await decode(file);
    for (const [x, y] of [
      [10, 10],
      [150, 20],
      [290, 10],
      [40, 100],
      [250, 100],
    ] as const) {
      const a = source.pixel(x, y);
      const b = gif.pixel(x, y);
      assert.ok(
        a.every((v, i) => Math.abs(v - b[i]!) < 24),
        `pixel ${x},${y}: ${a} became ${b}`,
      );
    }
  });

  it('keeps transparency where the target has it (PNG, WebP, TIFF, GIF)', async () => {
    for (const target of ['png', 'webp', 'tiff', 'gif']) {
      const file = await convert('alpha-box-1080x1920.png', target);
      const frame = await decode(file, 'rgba');
      assert.deepEqual([frame.width, frame.height], [1080, 1920], target);
      assert.equal(frame.pixel(10, 10)[3], 0, `${target}: transparent corner is ${frame.pixel(10, 10)}`);
      assert.equal(frame.pixel(1070, 1910)[3], 0, `${target}: transparent corner is ${frame.pixel(1070, 1910)}`);
      assert.ok(
        isWhite(frame.pixel(540, 960)) && frame.pixel(540, 960)[3]! > 250,
        `${target}: opaque centre is ${frame.pixel(540, 960)}`,
      );
    }
  });

  it('turns transparency black where the target has none (JPEG, BMP), not the colour hidden under it', async () => {
    for (const target of ['jpg', 'bmp']) {
      let frame = await decode(await convert('alpha-box-1080x1920.png', target));
      assert.deepEqual([frame.width, frame.height], [1080, 1920], target);
      assert.ok(isBlack(frame.pixel(10, 10)), `${target}: transparent corner is ${frame.pixel(10, 10)}`);
      assert.ok(isWhite(frame.pixel(540, 960)), `${target}: opaque centre is ${frame.pixel(540, 960)}`);
      frame = await decode(await convert('red-alpha-400x300.png', target), 'rgba');
      assert.ok(
        isBlack(frame.pixel(200, 150)) && frame.pixel(200, 150)[3] === 255,
        `${target}: transparent red became ${frame.pixel(200, 150)}`,
      );
    }
  });

  it('accepts the target in any case and with a leading dot, answering with the canonical name', async () => {
    const res = await op.server.post('/convert_image_from_url/', {
      image_url: op.files.url('/f/small-300x200.png'),
      target_format: '.PNG',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Image converted to png successfully.');
    assert.ok(res.body.output_file!.endsWith('_converted.png'));
    assert.equal(videoOf(await probe(op.server.pathOf(res.body.output_file!)))?.codec_name, 'png');
  });

  it('refuses targets outside the allowlist, hostile ones included, with a 400 that names them', async () => {
    const url = op.files.url('/f/unfetched.png');
    for (const target of ['exe', 'png -i /etc/passwd', '../../x', 'png;rm -rf /', 'mp4', 'svg', 'png/../../x']) {
      const res = await op.server.post('/convert_image_from_url/', { image_url: url, target_format: target });
      assert.equal(res.status, 400, `${target}: ${JSON.stringify(res.body)}`);
      // The value comes back as a client may see any message: a path of the server's disk by its last name.
      const shown = target.replace('/etc/passwd', 'passwd');
      assert.equal(res.body.error, `Unsupported format '${shown}'. Supported formats: ${SUPPORTED}.`);
    }
    const res = await op.server.post('/convert_image_from_url/', { image_url: url });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /target_format/);
    assert.deepEqual(await op.server.workLeftovers(), []);
    assert.equal(op.files.hits.get('/f/unfetched.png') ?? 0, 0, 'nothing is downloaded for a refused request');
  });

  it(
    'answers a failed download with 502 and an input that is not an image with 422, ' + 'leaving no work files',
    async () => {
      const missing = op.files.url('/f/missing.png');
      let res = await op.server.post('/convert_image_from_url/', { image_url: missing, target_format: 'png' });
      assert.equal(res.status, 502);
      assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
      for (const name of ['tone-2s-44k-stereo.mp3', 'not-media.txt']) {
        res = await op.server.post('/convert_image_from_url/', {
          image_url: op.files.url(`/f/${name}`),
          target_format: 'webp',
        });
        assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
        assert.ok(!res.body.error!.includes(op.server.dataDir), res.body.error);
      }
      res = await op.server.post('/convert_image_from_url/', { target_format: 'png' });
      assert.equal(res.status, 400);
      assert.match(res.body.error!, /image_url/);
      assert.deepEqual(await op.server.workLeftovers(), []);
    },
  );

  it('runs from the CLI with a local path, printing the same JSON', async () => {
    const local = await fixture('blue-640x480.webp');
    await assertCliParity({
      args: ['convert-image-from-url', '--image-url', local, '--target-format', 'bmp'],
      message: 'Image converted to bmp successfully.',
      output: /_converted\.bmp$/,
      check: async (file) => {
        const video = videoOf(await probe(file))!;
        assert.equal(video.codec_name, 'bmp');
        assert.deepEqual([video.width, video.height], [640, 480]);
        assert.ok(isBlue((await decode(file)).pixel(320, 240)));
      },
      refused: {
        args: ['convert-image-from-url', '--image-url', local, '--target-format', 'exe'],
        stderr: /Unsupported format 'exe'\. Supported formats: png, jpg, jpeg, webp, bmp, tiff, gif\./,
      },
    });
  });
});
