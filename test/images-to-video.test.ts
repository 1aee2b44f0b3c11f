import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { durationOf, frameRgb, probe, videoOf, type Probed } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

type Pixel = [number, number, number];
const isBlack = ([r, g, b]: Pixel) => r < 24 && g < 24 && b < 24;
const isRed = ([r, g, b]: Pixel) => r > 200 && g < 60 && b < 60;
const isGreen = ([r, g, b]: Pixel) => g > 200 && r < 60 && b < 60;
const isBlue = ([r, g, b]: Pixel) => b > 180 && r < 70 && g < 70;
const isYellow = ([r, g, b]: Pixel) => r > 200 && g > 200 && b < 70;

type Frame = Awaited<ReturnType<typeof frameRgb>>;

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

/** Frames of the video stream, counted by decoding. */
async function frameCount(file: string): Promise<number> {
  const { stdout } = await execa('ffprobe', [
    '-v',
    'error',
    '-count_frames',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=nb_read_frames',
    '-of',
    'csv=p=0',
    file,
  ]);
  return Number(stdout.trim());
}

/** Top-level boxes of an ISO BMFF (mp4/mov) file, in file order. */
async function topLevelBoxes(file: string): Promise<string[]> {
  const data = await readFile(file);
  const boxes: string[] = [];
  let offset = 0;
  while (offset + 8 <= data.length) {
    let size = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    if (size === 1) size = Number(data.readBigUInt64BE(offset + 8));
    else if (size === 0) size = data.length - offset;
    assert.ok(size >= 8, `box ${type} at ${offset} has size ${size}`);
    boxes.push(type);
    offset += size;
  }
  assert.equal(offset, data.length, 'boxes fill the file');
  return boxes;
}

/** Checks what every slideshow shares: one video stream, no audio, yuv420p, constant frame rate, duration. */
async function assertSlideshow(
  file: string,
  expected: { codec: string; width: number; height: number; fps: number; seconds: number },
): Promise<Probed> {
  const info = await probe(file);
  assert.deepEqual(
    info.streams.map((s) => s.codec_type),
    ['video'],
    'one video stream, no audio',
  );
  const video = videoOf(info)!;
  assert.equal(video.codec_name, expected.codec);
  assert.equal(video.width, expected.width);
  assert.equal(video.height, expected.height);
  assert.equal(video.pix_fmt, 'yuv420p');
  assert.equal(video.r_frame_rate, `${expected.fps}/1`);
  const frames = await frameCount(file);
  const wanted = expected.seconds * expected.fps;
  assert.ok(
    Math.abs(frames - wanted) <= 1,
    `${frames} frames, expected ${wanted} (${expected.seconds}s at ${expected.fps} fps)`,
  );
  const seconds = durationOf(info);
  assert.ok(
    Math.abs(seconds - expected.seconds) <= 1 / expected.fps + 0.001,
    `duration ${seconds}, expected ${expected.seconds}`,
  );
  return info;
}

describe('images-to-video', () => {
  let files: FileServer;
  let server: TestServer;
  const url = (name: string) => files.url(`/f/${name}`);

  before(async () => {
    await fixtures(
      'red-640x360.jpg',
      'green-360x640.png',
      'blue-640x480.webp',
      'yellow-333x251.jpg',
      'alpha-box-1080x1920.png',
      'red-alpha-400x300.png',
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

  /** Posts a slideshow request, checks the response's shape, and returns the produced file's path. */
  async function slideshow(fields: Record<string, string>): Promise<string> {
    const res = await server.post('/images-to-video/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Video created successfully');
    const format = fields.format ?? 'mp4';
    assert.match(
      res.body.output_file!,
      new RegExp(
        `^${server.base}/uploads/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/output\\.` +
          `${format}$`,
      ),
    );
    return server.pathOf(res.body.output_file!);
  }

  it(
    "letterboxes JPEG, PNG and WebP of different sizes and orientations into the first image's frame, never " +
      'stretching',
    async () => {
      const file = await slideshow({
        image_urls: ['red-640x360.jpg', 'green-360x640.png', 'blue-640x480.webp'].map(url).join(', '),
        seconds_per_image: '1',
      });
      await assertSlideshow(file, { codec: 'h264', width: 640, height: 360, fps: 25, seconds: 3 });
      // 1st second: the landscape JPEG fills the frame.
      assertPixels(
        await frameRgb(file, 0.5),
        [
          [2, 2],
          [637, 2],
          [320, 180],
          [2, 357],
          [637, 357],
        ],
        isRed,
        'red',
      );
      // 2nd: the portrait PNG, 360x640 → about 202x360 in the middle, black bars left and right.
      let frame = await frameRgb(file, 1.5);
      assertPixels(
        frame,
        [
          [320, 180],
          [320, 2],
          [320, 357],
          [230, 180],
          [410, 180],
        ],
        isGreen,
        'green picture',
      );
      assertPixels(
        frame,
        [
          [2, 180],
          [200, 180],
          [440, 180],
          [637, 180],
          [2, 2],
          [637, 357],
        ],
        isBlack,
        'a black bar',
      );
      // 3rd: the 4:3 WebP → 480x360, columns 80..559, black bars left and right rather than a stretch.
      frame = await frameRgb(file, 2.5);
      assertPixels(
        frame,
        [
          [320, 180],
          [90, 180],
          [550, 180],
          [320, 2],
          [320, 357],
        ],
        isBlue,
        'blue picture',
      );
      assertPixels(
        frame,
        [
          [2, 180],
          [70, 180],
          [570, 180],
          [637, 180],
        ],
        isBlack,
        'a black bar',
      );
    },
  );

  it('writes mp4 with +faststart: the moov box comes before mdat', async () => {
    const file = await slideshow({
      image_urls: [url('yellow-333x251.jpg'), url('red-640x360.jpg')].join(','),
      seconds_per_image: '1',
    });
    const boxes = await topLevelBoxes(file);
    assert.ok(boxes.includes('moov') && boxes.includes('mdat'), boxes.join(' '));
    assert.ok(boxes.indexOf('moov') < boxes.indexOf('mdat'), `boxes in order: ${boxes.join(' ')}`);
  });

  it("makes an odd-sized first image's frame even, and letterboxes a wider image into it", async () => {
    const file = await slideshow({
      image_urls: [url('yellow-333x251.jpg'), url('red-640x360.jpg')].join(','),
      seconds_per_image: '1',
    });
    await assertSlideshow(file, { codec: 'h264', width: 334, height: 252, fps: 25, seconds: 2 });
    assertPixels(
      await frameRgb(file, 0.5),
      [
        [167, 126],
        [4, 4],
        [329, 247],
      ],
      isYellow,
      'yellow',
    );
    // 640x360 → 334x188: black bars of 32 rows above and below.
    const frame = await frameRgb(file, 1.5);
    assertPixels(
      frame,
      [
        [167, 126],
        [4, 40],
        [329, 212],
      ],
      isRed,
      'red picture',
    );
    assertPixels(
      frame,
      [
        [167, 4],
        [167, 26],
        [167, 226],
        [167, 248],
      ],
      isBlack,
      'a black bar',
    );
  });

  it('takes width, height and fps when given', async () => {
    const file = await slideshow({
      image_urls: [url('green-360x640.png'), url('red-640x360.jpg')].join(','),
      seconds_per_image: '2',
      fps: '10',
      width: '320',
      height: '180',
      format: 'mkv',
    });
    await assertSlideshow(file, { codec: 'h264', width: 320, height: 180, fps: 10, seconds: 4 });
    // The portrait first image is letterboxed into the given landscape frame too.
    const frame = await frameRgb(file, 1);
    assertPixels(
      frame,
      [
        [160, 90],
        [160, 2],
        [160, 177],
      ],
      isGreen,
      'green picture',
    );
    assertPixels(
      frame,
      [
        [2, 90],
        [100, 90],
        [220, 90],
        [317, 90],
      ],
      isBlack,
      'a black bar',
    );
    assertPixels(
      await frameRgb(file, 3),
      [
        [2, 2],
        [160, 90],
        [317, 177],
      ],
      isRed,
      'red',
    );
  });

  it('turns transparency black rather than the colour hidden under it', async () => {
    const file = await slideshow({
      image_urls: [url('alpha-box-1080x1920.png'), url('red-alpha-400x300.png')].join(','),
      seconds_per_image: '1',
      width: '180',
      height: '320',
    });
    await assertSlideshow(file, { codec: 'h264', width: 180, height: 320, fps: 25, seconds: 2 });
    let frame = await frameRgb(file, 0.5);
    // 1080x1920 → 180x320: the opaque white square, 200 → 33 pixels, at the centre.
    assertPixels(frame, [[90, 160]], ([r, g, b]) => r > 200 && g > 200 && b > 200, 'white');
    assertPixels(
      frame,
      [
        [4, 4],
        [175, 315],
        [90, 20],
        [30, 160],
      ],
      isBlack,
      'black (transparent)',
    );
    frame = await frameRgb(file, 1.5);
    assertPixels(
      frame,
      [
        [90, 160],
        [4, 4],
        [90, 140],
        [175, 315],
      ],
      isBlack,
      'black (transparent red, and bars)',
    );
  });

  it('shows each image for 5 seconds by default', async () => {
    const file = await slideshow({ image_urls: url('red-640x360.jpg'), width: '64', height: '36' });
    await assertSlideshow(file, { codec: 'h264', width: 64, height: 36, fps: 25, seconds: 5 });
    assertPixels(await frameRgb(file, 4.8), [[32, 18]], isRed, 'red');
  });

  const CODECS = { mp4: 'h264', avi: 'mpeg4', mov: 'h264', mkv: 'h264', webm: 'vp9' } as const;
  for (const [format, codec] of Object.entries(CODECS)) {
    it(`writes ${format} (${codec})`, async () => {
      const file = await slideshow({
        image_urls: [url('yellow-333x251.jpg'), url('blue-640x480.webp')].join(','),
        seconds_per_image: '1',
        format,
        width: '160',
        height: '120',
      });
      const info = await assertSlideshow(file, { codec, width: 160, height: 120, fps: 25, seconds: 2 });
      const container = { mp4: /mp4/, avi: /^avi$/, mov: /mov/, mkv: /matroska/, webm: /webm/ }[format]!;
      assert.match(info.format.format_name, container);
      assertPixels(await frameRgb(file, 0.5), [[80, 60]], isYellow, 'yellow');
      assertPixels(
        await frameRgb(file, 1.5),
        [
          [80, 60],
          [4, 4],
        ],
        isBlue,
        'blue',
      );
    });
  }

  it('answers the interface errors: no image URLs, unsupported format, a failed download', async () => {
    const one = url('red-640x360.jpg');
    const empty: Array<Record<string, string>> = [
      {},
      { image_urls: '' },
      { image_urls: ' , ,' },
      { seconds_per_image: '1' },
    ];
    for (const fields of empty) {
      const res = await server.post('/images-to-video/', fields);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.equal(res.body.error, 'No image URLs provided');
    }
    let res = await server.post('/images-to-video/', { image_urls: one, format: 'xyz' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'xyz'. Supported formats: mp4, avi, mov, mkv, webm.");
    const missing = url('missing.jpg');
    res = await server.post('/images-to-video/', { image_urls: `${one},${missing}`, seconds_per_image: '1' });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('refuses bad numbers with a 400 naming the parameter', async () => {
    const one = url('red-640x360.jpg');
    const cases: Array<[string, string]> = [
      ['seconds_per_image', 'abc'],
      ['seconds_per_image', '0'],
      ['seconds_per_image', '-1'],
      ['seconds_per_image', '1.5'],
      ['fps', '0'],
      ['fps', 'abc'],
      ['fps', '1000'],
      ['width', 'abc'],
      ['width', '-2'],
      ['height', '0'],
      ['height', '99999'],
    ];
    for (const [param, value] of cases) {
      const res = await server.post('/images-to-video/', { image_urls: one, [param]: value });
      assert.equal(res.status, 400, `${param}=${value}: ${JSON.stringify(res.body)}`);
      assert.ok(res.body.error!.includes(param), `${param}=${value}: ${res.body.error}`);
    }
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('answers an input that is not an image with 422, leaving no work files', async () => {
    for (const name of ['tone-2s-44k-stereo.mp3', 'not-media.txt']) {
      const res = await server.post('/images-to-video/', {
        image_urls: `${url('red-640x360.jpg')},${url(name)}`,
        seconds_per_image: '1',
      });
      assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
      assert.ok(!res.body.error!.includes(server.dataDir), res.body.error);
    }
    const res = await server.post('/images-to-video/', { image_urls: url('tone-2s-44k-stereo.mp3') });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not an image file/);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs from the CLI with local paths and URLs, printing the same JSON', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
    try {
      const local = await fixture('green-360x640.png');
      const result = await runCli([
        'images-to-video',
        '--image-urls',
        `${local},${url('red-640x360.jpg')}`,
        '--seconds-per-image',
        '1',
        '--format',
        'mov',
        '--out-dir',
        out,
      ]);
      assert.equal(result.exitCode, 0, result.stderr);
      const body = JSON.parse(result.stdout) as Record<string, string>;
      assert.equal(body.message, 'Video created successfully');
      assert.ok(body.output_file!.startsWith(out) && body.output_file!.endsWith('/output.mov'), body.output_file);
      await assertSlideshow(body.output_file!, { codec: 'h264', width: 360, height: 640, fps: 25, seconds: 2 });
      const boxes = await topLevelBoxes(body.output_file!);
      assert.ok(
        boxes.indexOf('moov') >= 0 && boxes.indexOf('moov') < boxes.indexOf('mdat'),
        `mov boxes in order: ${boxes.join(' ')}`,
      );
      assertPixels(await frameRgb(body.output_file!, 1.5), [[180, 320]], isRed, 'red');
      assertPixels(
        await frameRgb(body.output_file!, 1.5),
        [
          [180, 20],
          [180, 620],
        ],
        isBlack,
        'a black bar',
      );
      const bad = await runCli([
        'images-to-video',
        '--image-urls',
        local,
        '--seconds-per-image',
        '0',
        '--out-dir',
        out,
      ]);
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /seconds_per_image/);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
