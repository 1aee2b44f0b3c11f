import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import {
  differingPixels,
  durationOf,
  frameRgb,
  probe,
  type Probed,
  probeLines,
  videoOf,
  videoPacketHashes,
} from './helpers/media.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { assertPixels, isBlack, isBlue, isGreen, isRed, isYellow } from './helpers/pixels.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { loadConfig } from '../src/engine/config.js';
import { anyLocalPath } from '../src/engine/run/job-run.js';
import { LocalOutputStore } from '../src/engine/storage/storage.js';
import imagesToVideo from '../src/plugins/images-to-video.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { cliServices } from '../src/runtime.js';
import type { LocalInput, Plan } from '../src/sdk.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** Frames of the video stream, counted by decoding. */
const frameCount = async (file: string): Promise<number> =>
  Number((await probeLines(file, 'stream=nb_read_frames', 'v:0', ['-count_frames']))[0]);

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
  const op = useOperation({
    fixtures: [
      'red-640x360.jpg',
      'green-360x640.png',
      'blue-640x480.webp',
      'yellow-333x251.jpg',
      'alpha-box-1080x1920.png',
      'red-alpha-400x300.png',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    ],
  });
  const url = (name: string) => op.files.url(`/f/${name}`);

  /** Posts a slideshow request, checks the response's shape, and returns the produced file's path. */
  async function slideshow(fields: Record<string, string>): Promise<string> {
    const res = await op.server.post('/images-to-video/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Video created successfully');
    const format = fields.format ?? 'mp4';
    assert.match(
      res.body.output_file!,
      new RegExp(
        `^${op.server.base}/uploads/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/output\\.` +
          `${format}$`,
      ),
    );
    return op.server.pathOf(res.body.output_file!);
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
    assertPixels(frame, [[90, 160]], ([r, g, b]) => r! > 200 && g! > 200 && b! > 200, 'white');
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
      const res = await op.server.post('/images-to-video/', fields);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.equal(res.body.error, 'No image URLs provided');
    }
    let res = await op.server.post('/images-to-video/', { image_urls: one, format: 'xyz' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'xyz'. Supported formats: mp4, avi, mov, mkv, webm.");
    const missing = url('missing.jpg');
    res = await op.server.post('/images-to-video/', { image_urls: `${one},${missing}`, seconds_per_image: '1' });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    assert.deepEqual(await op.server.workLeftovers(), []);
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
      const res = await op.server.post('/images-to-video/', { image_urls: one, [param]: value });
      assert.equal(res.status, 400, `${param}=${value}: ${JSON.stringify(res.body)}`);
      assert.ok(res.body.error!.includes(param), `${param}=${value}: ${res.body.error}`);
    }
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('answers an input that is not an image with 422, leaving no work files', async () => {
    for (const name of ['tone-2s-44k-stereo.mp3', 'not-media.txt']) {
      const res = await op.server.post('/images-to-video/', {
        image_urls: `${url('red-640x360.jpg')},${url(name)}`,
        seconds_per_image: '1',
      });
      assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
      assert.ok(!res.body.error!.includes(op.server.dataDir), res.body.error);
    }
    const res = await op.server.post('/images-to-video/', { image_urls: url('tone-2s-44k-stereo.mp3') });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not an image file/);
    assert.deepEqual(await op.server.workLeftovers(), []);
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

/** A still picture's input as the runtime hands it to build. */
const picture = (file: string, codec: string, pixFmt: string, width: number, height: number): LocalInput => ({
  file,
  source: file,
  facts: { formatName: 'image2', isImage: true, video: { codec, width, height, fps: 25, pixFmt } },
});

type Params = Parameters<typeof imagesToVideo.build>[0]['params'];

/** The plan images-to-video builds for two 2-second images with every other field at its default or `fields`. */
function defaultPlan(images: LocalInput[], fields: Partial<Params> = {}): Plan {
  const params = {
    image_urls: '',
    seconds_per_image: 2,
    format: 'mp4',
    quality: 'balanced',
    fps: 25,
    motion: 'none',
    transition: 'none',
    transition_seconds: 0.5,
    ...fields,
  } as Params;
  const built = imagesToVideo.build({
    params,
    inputs: { image_urls: images },
    output: 'out.mp4',
    outputs: ['out.mp4'],
    input: (input) => ['-i', input.file],
  });
  assert.ok(!Array.isArray(built));
  return built;
}

const IMAGE_DEMUXERS =
  'concat,image2,png_pipe,jpeg_pipe,webp_pipe,bmp_pipe,tiff_pipe,gif,gif_pipe,ppm_pipe,pgm_pipe,pam_pipe,qoi_pipe,' +
  'jpegxl_pipe,svg_pipe';
const STILL_H264 = [
  ...['-c:v', 'libx264', '-preset', 'superfast', '-tune', 'stillimage', '-crf', '26'],
  ...['-x264-params', 'bframes=0:ref=1:rc-lookahead=0', '-pix_fmt', 'yuv420p', '-movflags', '+faststart'],
  ...['-f', 'mp4', 'out.mp4'],
];
const FIT = 'scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2:color=black@0,setsar=1';
const concatImages = (filter: string) => [
  ...['-protocol_whitelist', 'file,pipe', '-format_whitelist', IMAGE_DEMUXERS, '-f', 'concat', '-safe', '1'],
  ...['-i', 'images.txt', '-vf', filter, '-fps_mode', 'cfr', '-r', '25', '-frames:v', '100', '-an', ...STILL_H264],
];
const flatten = (file: string, frame: string) => [
  ...['-i', file, '-filter_complex'],
  `color=c=black:s=640x360[bg];[0:v]${FIT},format=rgba[fg];[bg][fg]overlay=shortest=1:format=auto`,
  ...['-frames:v', '1', '-update', '1', '-c:v', 'png', '-pix_fmt', 'rgb24', '-f', 'image2', frame],
];

/** A 360x640 black picture with a white 120x120 square in its middle, to see a zoom by. */
const SQUARE = ['-f', 'lavfi', '-i', 'color=c=black:s=360x640,drawbox=x=120:y=260:w=120:h=120:c=white:t=fill'];

/** The width of the white run through the middle row of a frame: the square as it appears. */
const squareWidth = (frame: Frame) => {
  let count = 0;
  for (let x = 0; x < frame.width; x++) if (frame.pixel(x, frame.height >> 1)[0] > 128) count++;
  return count;
};

/**
 * The left edge of the white square of `square`, letterboxed and zoomed into a `width` x `height` slideshow, to a
 * fraction of a pixel: each frame's left half's brightness over 80 rows through the square (`rows`, by default
 * centred), as the square's left edge, against where the ideal zoom would put it (`half` pixels from the centre at
 * zoom 1). Returns each frame's error.
 */
async function edgeErrors(
  file: string,
  size: { width: number; height: number; frames: number; half: number },
  rows = { from: size.height / 2 - 40, count: 80 },
): Promise<number[]> {
  const { width, frames, half } = size;
  // The left half of the rows alone, decoded.
  const crop = `crop=${width / 2}:${rows.count}:0:${rows.from}`;
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-vf', crop, '-f', 'rawvideo', '-pix_fmt', 'gray', '-'],
    { encoding: 'buffer' },
  );
  const gray = stdout as unknown as Uint8Array;
  const area = (width / 2) * rows.count;
  assert.equal(gray.length, area * frames);
  return Array.from({ length: frames }, (_, i) => {
    let bright = 0;
    for (let p = i * area; p < (i + 1) * area; p++) bright += gray[p]! / 255;
    const edge = width / 2 - bright / rows.count;
    return edge - (width / 2 - half * (1 + (0.2 * i) / frames));
  });
}

/** How far errors stray from their mean (RMS): a zoom that steps by whole pixels strays by tenths of one. */
function spreadOf(errors: number[]): number {
  const mean = errors.reduce((a, b) => a + b) / errors.length;
  return Math.sqrt(errors.reduce((a, e) => a + (e - mean) ** 2, 0) / errors.length);
}

describe('images-to-video motion and transition', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  const url = (name: string) => files.url(`/f/${name}`);
  let square: string;

  before(async () => {
    await fixtures('red-640x360.jpg', 'yellow-333x251.jpg', 'green-360x640.png');
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-motion-'));
    const file = path.join(scratch, 'square.png');
    await execa('ffmpeg', ['-v', 'error', '-y', ...SQUARE, '-frames:v', '1', file]);
    files = await startFileServer({ '/local/square.png': serveFile(file, 'image/png') });
    square = files.url('/local/square.png');
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  async function slideshow(fields: Record<string, string>): Promise<string> {
    const res = await server.post('/images-to-video/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Video created successfully');
    return server.pathOf(res.body.output_file!);
  }

  it('builds, without motion or transition, the very commands of the plain slideshow', () => {
    const jpegs = [picture('a.jpg', 'mjpeg', 'yuvj420p', 640, 360), picture('b.jpg', 'mjpeg', 'yuvj420p', 320, 240)];
    assert.deepEqual(defaultPlan(jpegs), {
      files: { 'images.txt': "file 'a.jpg'\nduration 2\nfile 'b.jpg'\nduration 2\nfile 'b.jpg'\n" },
      expectedSeconds: 4,
      frameSize: { width: 640, height: 360 },
      commands: [concatImages(`${FIT},format=yuv420p`)],
    });
    const mixed = [picture('a.jpg', 'mjpeg', 'yuvj420p', 640, 360), picture('b.png', 'png', 'rgba', 320, 240)];
    assert.deepEqual(defaultPlan(mixed), {
      files: { 'images.txt': "file 'frame0.png'\nduration 2\nfile 'frame1.png'\nduration 2\nfile 'frame1.png'\n" },
      expectedSeconds: 4,
      frameSize: { width: 640, height: 360 },
      commands: [
        flatten('a.jpg', 'frame0.png'),
        flatten('b.png', 'frame1.png'),
        concatImages('setsar=1,format=yuv420p'),
      ],
    });
  });

  it('writes the same packets with motion=none and transition=none as without them', async () => {
    const base = { image_urls: [url('red-640x360.jpg'), url('yellow-333x251.jpg')].join(','), seconds_per_image: '1' };
    const plain = await slideshow(base);
    const none = await slideshow({ ...base, motion: 'none', transition: 'none', transition_seconds: '0.3' });
    assert.deepEqual(await videoPacketHashes(none), await videoPacketHashes(plain));
  });

  it('zooms slowly into each image: frames half a second apart differ and the picture grows', async () => {
    const file = await slideshow({
      image_urls: [square, square].join(','),
      seconds_per_image: '2',
      motion: 'zoom',
    });
    await assertSlideshow(file, { codec: 'h264', width: 360, height: 640, fps: 25, seconds: 4 });
    const widths: number[] = [];
    const frames: Frame[] = [];
    for (const t of [0.1, 0.6, 1.1, 1.9, 2.1]) {
      const frame = await frameRgb(file, t);
      frames.push(frame);
      widths.push(squareWidth(frame));
    }
    assert.ok(differingPixels(frames[0]!, frames[1]!, 0, 0, 360, 640) > 100, 'frames 0.5 s apart differ');
    // 120 pixels grow towards 1.2 times over the image's 2 seconds, steadily; the next image starts over.
    assert.ok(widths[0]! >= 118 && widths[0]! <= 124, `square at 0.1 s: ${widths[0]}`);
    assert.ok(widths[0]! < widths[1]! && widths[1]! < widths[2]! && widths[2]! < widths[3]!, widths.join(' '));
    assert.ok(widths[3]! >= 138 && widths[3]! <= 146, `square at 1.9 s: ${widths[3]}`);
    assert.ok(widths[4]! < widths[1]!, `the second image starts over: ${widths.join(' ')}`);
  });

  it('zooms without jitter: the edge of the square keeps to the ideal zoom, a tenth of a pixel RMS', async () => {
    // 4 seconds: the edge moves 0.12 pixels a frame, so whole-pixel crop steps would show as a stutter.
    const file = await slideshow({ image_urls: square, seconds_per_image: '4', motion: 'zoom' });
    const spread = spreadOf(await edgeErrors(file, { width: 360, height: 640, frames: 100, half: 60 }));
    // Scaled-up zoompan measured 0.17 here, this 0.05 (the encoder's own noise).
    assert.ok(spread < 0.1, `the edge strays ${spread.toFixed(3)} pixels from the ideal zoom`);
  });

  it('zooms a frame of two bands (1080p) as smoothly, and without a seam between them', async () => {
    // The square, 360x640 letterboxed into 1920x1080, is 202.5 pixels wide: its edge moves 0.4 pixels a frame.
    const file = await slideshow({
      image_urls: square,
      seconds_per_image: '2',
      motion: 'zoom',
      width: '1920',
      height: '1080',
    });
    await assertSlideshow(file, { codec: 'h264', width: 1920, height: 1080, fps: 25, seconds: 2 });
    const size = { width: 1920, height: 1080, frames: 50, half: 101.25 };
    const spread = spreadOf(await edgeErrors(file, size));
    assert.ok(spread < 0.1, `the edge strays ${spread.toFixed(3)} pixels from the ideal zoom`);
    // The bands meet at row 540: the edge just above it and just below it are one.
    const above = await edgeErrors(file, size, { from: 500, count: 40 });
    const below = await edgeErrors(file, size, { from: 540, count: 40 });
    const seam = Math.max(...above.map((error, i) => Math.abs(error - below[i]!)));
    assert.ok(seam < 0.1, `the edge differs by ${seam.toFixed(3)} pixels across the bands' seam`);
  });

  it('cross-fades between images, keeping the length seconds_per_image times the images', async () => {
    const file = await slideshow({
      image_urls: [url('red-640x360.jpg'), url('yellow-333x251.jpg'), url('red-640x360.jpg')].join(','),
      seconds_per_image: '2',
      transition: 'fade',
      transition_seconds: '1',
      width: '320',
      height: '180',
    });
    await assertSlideshow(file, { codec: 'h264', width: 320, height: 180, fps: 25, seconds: 6 });
    const at = async (t: number) => (await frameRgb(file, t)).pixel(160, 90);
    assert.ok(isRed(await at(1.9)), 'red before the fade');
    // Halfway through the fade from red (255,0,0) to yellow (255,255,0): green about half.
    const [r, g, b] = await at(2.5);
    assert.ok(r > 200 && g > 90 && g < 170 && b < 60, `a blend at 2.5 s: ${[r, g, b]}`);
    assert.ok(isYellow(await at(3.1)), 'yellow after the fade');
    assert.ok(isYellow(await at(3.9)), 'yellow until the next fade');
    assert.ok(isRed(await at(5.9)), 'red at the end');
  });

  it('zooms and fades together to the exact length', async () => {
    const file = await slideshow({
      image_urls: [square, url('green-360x640.png'), square].join(','),
      seconds_per_image: '1',
      motion: 'zoom',
      transition: 'fade',
      fps: '30',
    });
    await assertSlideshow(file, { codec: 'h264', width: 360, height: 640, fps: 30, seconds: 3 });
  });

  it('encodes each piece in the output codec and joins them by stream copy, decoding cleanly and exactly', async () => {
    const jpegs = [picture('a.jpg', 'mjpeg', 'yuvj420p', 640, 360), picture('b.jpg', 'mjpeg', 'yuvj420p', 320, 240)];
    const plan = defaultPlan(jpegs, { motion: 'zoom', transition: 'fade', format: 'webm' });
    const join = plan.commands.at(-1)!;
    assert.deepEqual(join.slice(join.indexOf('-c:v'), join.indexOf('-c:v') + 2), ['-c:v', 'copy'], join.join(' '));
    for (const piece of plan.commands.slice(0, -1)) assert.ok(piece.includes('libvpx-vp9'), piece.join(' '));
    const images = [square, url('green-360x640.png'), url('red-640x360.jpg')].join(',');
    for (const [format, codec] of [
      ['mp4', 'h264'],
      ['webm', 'vp9'],
      ['avi', 'mpeg4'],
    ] as const) {
      const fields = { image_urls: images, seconds_per_image: '1', motion: 'zoom', transition: 'fade', fps: '30' };
      const file = await slideshow({ ...fields, format });
      await assertSlideshow(file, { codec, width: 360, height: 640, fps: 30, seconds: 3 });
      assert.equal(await frameCount(file), 90, format);
      assert.equal(durationOf(await probe(file)), 3, format);
      // Pieces whose codec headers differed would decode with errors past the first piece.
      const decoded = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
      assert.equal(decoded.stderr, '', `${format} decodes without errors`);
    }
  });

  it('zooms and fades in an asynchronous job: 202, then the job at /jobs/<id> and its video', async () => {
    const fields = { image_urls: [square, url('green-360x640.png')].join(','), seconds_per_image: '2' };
    const id = await submitJob(
      server.base,
      '/images-to-video/',
      { ...fields, motion: 'zoom', transition: 'fade', transition_seconds: '0.5' },
      { prefer: 'respond-async' },
    );
    const job = await waitForJob(server.base, id, undefined, { ms: 120_000 });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    const result = job.result as { message: string; output_file: string };
    assert.equal(result.message, 'Video created successfully');
    const file = server.pathOf(result.output_file);
    await assertSlideshow(file, { codec: 'h264', width: 360, height: 640, fps: 25, seconds: 4 });
    assert.equal(await frameCount(file), 100);
    const [early, later] = [await frameRgb(file, 0.2), await frameRgb(file, 1.2)];
    assert.ok(differingPixels(early, later, 0, 0, 360, 640) > 100, 'the zoom moves the picture');
    assert.ok(squareWidth(early) < squareWidth(later), `${squareWidth(early)} then ${squareWidth(later)}`);
    // Halfway through the fade from the white square's middle (255,255,255) to green (0,255,0).
    const [r, g, b] = (await frameRgb(file, 2.25)).pixel(180, 320);
    assert.ok(r > 70 && r < 190 && g > 200 && b > 70 && b < 190, `a blend at 2.25 s: ${[r, g, b]}`);
    assert.ok(isGreen((await frameRgb(file, 2.6)).pixel(180, 320)), 'green after the fade');
  });

  it('moves its progress through each image, not only at the join that copies them', async () => {
    const { engine } = cliServices({
      config: loadConfig({ MEDIAFLOW_DATA_DIR: path.join(scratch, 'engine') }),
      registry: builtinRegistry(),
      store: new LocalOutputStore(path.join(scratch, 'engine', 'out')),
      workRoot: path.join(scratch, 'engine', 'work'),
    });
    const ratios: number[] = [];
    const images = await Promise.all(['red-640x360.jpg', 'yellow-333x251.jpg', 'green-360x640.png'].map(fixture));
    await engine.run(
      'images-to-video',
      { image_urls: images.join(','), seconds_per_image: 2, motion: 'zoom' },
      {
        localFiles: anyLocalPath,
        onProgress: (p) => void (p.stage === 'process' && p.ratio !== undefined && ratios.push(p.ratio)),
      },
    );
    // Each piece ends at least at its third of the work; the join adds nothing.
    assert.ok(ratios.filter((r) => r > 0.1 && r < 0.9).length >= 2, `progress: ${ratios.join(', ')}`);
    assert.ok(
      ratios.every((r, i) => i === 0 || r >= ratios[i - 1]!),
      `never back: ${ratios.join(', ')}`,
    );
    // The last piece's position is its last frame's start, a frame short of its end.
    assert.ok(ratios.at(-1)! > 0.95, `to the end: ${ratios.join(', ')}`);
  });

  it('refuses a bad motion, transition or transition_seconds with a 400, leaving no work files', async () => {
    const one = url('red-640x360.jpg');
    const cases: Array<Record<string, string>> = [
      { motion: 'spin' },
      { transition: 'wipe' },
      { transition: 'fade', transition_seconds: 'abc' },
      { transition: 'fade', transition_seconds: '0.05' },
      { transition: 'fade', transition_seconds: '1.5', seconds_per_image: '2' },
    ];
    for (const fields of cases) {
      const res = await server.post('/images-to-video/', { image_urls: `${one},${one}`, ...fields });
      assert.equal(res.status, 400, `${JSON.stringify(fields)}: ${JSON.stringify(res.body)}`);
      const name =
        Object.keys(fields).find((key) => key !== 'seconds_per_image' && key !== 'transition') ?? 'transition';
      assert.ok(res.body.error!.includes(fields.transition_seconds ? 'transition_seconds' : name), res.body.error);
    }
    const res = await server.post('/images-to-video/', {
      image_urls: `${one},${one}`,
      seconds_per_image: '2',
      transition: 'fade',
      transition_seconds: '1.5',
    });
    assert.equal(res.body.error, 'Expected `transition_seconds` to be at most half of seconds_per_image (1), got 1.5');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs in a pipeline with a zoom and fades', async () => {
    const out = await mkdtemp(path.join(scratch, 'pipeline-'));
    const definition = path.join(scratch, 'story.yaml');
    await writeFile(
      definition,
      [
        'name: story',
        'description: A moving slideshow',
        'inputs:',
        '  first: url',
        '  second: url',
        'steps:',
        '  show:',
        '    op: images-to-video',
        '    with:',
        '      image_urls: "{{ inputs.first }},{{ inputs.second }}"',
        '      seconds_per_image: 1',
        '      motion: zoom',
        '      transition: fade',
        '      transition_seconds: 0.4',
        'results:',
        '  show: "{{ steps.show.output }}"',
        '',
      ].join('\n'),
    );
    const first = await fixture('red-640x360.jpg');
    const second = await fixture('yellow-333x251.jpg');
    const result = await runCli([
      'run',
      definition,
      '--input',
      `first=${first}`,
      '--input',
      `second=${second}`,
      '--out-dir',
      out,
    ]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(await readdir(out), ['show.mp4']);
    const file = path.join(out, 'show.mp4');
    await assertSlideshow(file, { codec: 'h264', width: 640, height: 360, fps: 25, seconds: 2 });
    const [r, g] = (await frameRgb(file, 1.2)).pixel(320, 180);
    assert.ok(r > 200 && g > 60 && g < 200, `a blend at 1.2 s: ${r},${g}`);
  });
});
