import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { assertNearRgb, audioPacketHashes, frameRgb, probe, videoOf } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';

/** A video made by lavfi: `source` for the picture, a 440 Hz tone for the sound, H.264/AAC in MP4. */
async function makeVideo(file: string, source: string, extra: string[] = []): Promise<string> {
  await execa('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', source, '-f', 'lavfi', '-i', 'sine=frequency=440:duration=3'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', ...extra],
    file,
  ]);
  return file;
}

/** A one-frame PNG drawn by lavfi in RGBA. */
async function makePng(file: string, source: string): Promise<string> {
  await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `${source},format=rgba`, '-frames:v', '1', file]);
  return file;
}

describe('overlay-image', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  let black: string;
  let blue: string;
  let portrait: string;
  let rotated: string;
  let halfRed: string;
  let halfClear: string;

  before(async () => {
    await fixtures('clip-1s-321x241-odd.webm', 'not-media.txt');
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-overlay-'));
    black = await makeVideo(path.join(scratch, 'black.mp4'), 'color=c=black:s=640x360:r=25:d=3');
    blue = await makeVideo(path.join(scratch, 'blue.mp4'), 'color=c=blue:s=640x360:r=25:d=3');
    portrait = await makeVideo(path.join(scratch, 'portrait.mp4'), 'color=c=black:s=360x640:r=25:d=3');
    // Stored 640x360 and turned a quarter by the display matrix, as phones write portrait videos: shown 360x640.
    rotated = path.join(scratch, 'rotated.mp4');
    await execa('ffmpeg', ['-v', 'error', '-i', black, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rotated]);
    // Red at half opacity, and red whose left half is fully transparent.
    halfRed = await makePng(path.join(scratch, 'half-red.png'), 'color=c=red@0.5:s=100x100');
    halfClear = await makePng(
      path.join(scratch, 'half-clear.png'),
      "color=c=red:s=100x100,format=rgba,geq=r='255':g='0':b='0':a='255*gte(X,50)'",
    );
    files = await startFileServer({
      '/local/black.mp4': serveFile(black, 'video/mp4'),
      '/local/blue.mp4': serveFile(blue, 'video/mp4'),
      '/local/portrait.mp4': serveFile(portrait, 'video/mp4'),
      '/local/rotated.mp4': serveFile(rotated, 'video/mp4'),
      '/local/half-red.png': serveFile(halfRed, 'image/png'),
      '/local/half-clear.png': serveFile(halfClear, 'image/png'),
      '/local/red.png': serveFile(await makePng(path.join(scratch, 'red.png'), 'color=c=red:s=100x100'), 'image/png'),
    });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const overlay = async (fields: Record<string, string>, ext = 'mp4') => {
    const res = await server.post('/overlay-image/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Image overlaid successfully');
    assert.match(res.body.output_file!, new RegExp(`^${server.base}/uploads/${UUID}/overlaid\\.${ext}$`));
    return server.pathOf(res.body.output_file!);
  };

  it('puts a half-transparent red logo at the top right of a black video as half red, 15% wide', async () => {
    const file = await overlay({
      video_url: files.url('/local/black.mp4'),
      image_url: files.url('/local/half-red.png'),
    });
    const frame = await frameRgb(file, 1);
    // 640 wide: the logo is 96 px (0.15), 19 px (0.03) from the top and right edges: x 525 to 620, y 19 to 114.
    assertNearRgb(frame.pixel(572, 66), [128, 0, 0], 24, 'the middle of the logo');
    assertNearRgb(frame.pixel(530, 24), [128, 0, 0], 24, "the logo's top-left corner");
    assertNearRgb(frame.pixel(615, 109), [128, 0, 0], 24, "the logo's bottom-right corner");
    for (const [x, y] of [
      [515, 66],
      [630, 66],
      [572, 10],
      [572, 124],
      [40, 40],
      [40, 320],
      [600, 320],
      [320, 180],
    ] as const) {
      assertNearRgb(frame.pixel(x, y), [0, 0, 0], 24, `outside the logo at ${x},${y}`);
    }
  });

  it("keeps a PNG's transparency: its clear pixels show the video, at any opacity", async () => {
    const file = await overlay({
      video_url: files.url('/local/blue.mp4'),
      image_url: files.url('/local/half-clear.png'),
      position: 'bottom-left',
      width: '0.25',
      margin: '0',
    });
    const frame = await frameRgb(file, 1);
    // 160 px wide at the bottom-left corner: its left half clear, its right half red.
    assertNearRgb(frame.pixel(40, 300), [0, 0, 255], 40, 'a clear pixel of the logo');
    assertNearRgb(frame.pixel(120, 300), [255, 0, 0], 40, 'an opaque pixel of the logo');
    const faint = await overlay({
      video_url: files.url('/local/blue.mp4'),
      image_url: files.url('/local/half-clear.png'),
      position: 'bottom-left',
      width: '0.25',
      margin: '0',
      opacity: '0.5',
    });
    const half = await frameRgb(faint, 1);
    assertNearRgb(half.pixel(40, 300), [0, 0, 255], 40, 'a clear pixel at half opacity');
    assertNearRgb(half.pixel(120, 300), [128, 0, 128], 40, 'an opaque pixel at half opacity');
  });

  it('shows the logo from start to end only, at each position', async () => {
    const file = await overlay({
      video_url: files.url('/local/black.mp4'),
      image_url: files.url('/local/red.png'),
      position: 'center',
      start: '1',
      end: '00:00:02',
    });
    assertNearRgb((await frameRgb(file, 0.5)).pixel(320, 180), [0, 0, 0], 24, 'before start');
    assertNearRgb((await frameRgb(file, 1.5)).pixel(320, 180), [255, 0, 0], 40, 'between start and end');
    assertNearRgb((await frameRgb(file, 2.5)).pixel(320, 180), [0, 0, 0], 24, 'after end');
    const spots = { 'top-left': [30, 30], 'bottom-right': [610, 330] } as const;
    for (const [position, [x, y]] of Object.entries(spots)) {
      const placed = await frameRgb(
        await overlay({ video_url: files.url('/local/black.mp4'), image_url: files.url('/local/red.png'), position }),
        0.5,
      );
      assertNearRgb(placed.pixel(x, y), [255, 0, 0], 40, position);
      assertNearRgb(placed.pixel(640 - x, 360 - y), [0, 0, 0], 24, `${position}: the opposite corner`);
    }
  });

  it("scales to a portrait video's width, and to a rotated video's width as shown", async () => {
    for (const video of ['portrait', 'rotated']) {
      const file = await overlay({
        video_url: files.url(`/local/${video}.mp4`),
        image_url: files.url('/local/red.png'),
        position: 'bottom-left',
      });
      const frame = await frameRgb(file, 1);
      assert.deepEqual([frame.width, frame.height], [360, 640], video);
      // 360 wide as shown: the logo is 54 px, 11 px from the left and bottom edges: x 11 to 64, y 575 to 628.
      assertNearRgb(frame.pixel(14, 578), [255, 0, 0], 40, `${video}: the logo's top-left corner`);
      assertNearRgb(frame.pixel(61, 625), [255, 0, 0], 40, `${video}: the logo's bottom-right corner`);
      assertNearRgb(frame.pixel(70, 600), [0, 0, 0], 24, `${video}: right of the logo`);
      assertNearRgb(frame.pixel(30, 568), [0, 0, 0], 24, `${video}: above the logo`);
      // The picture is turned once, by the decoder; the output has no rotation left to apply.
      const info = await probe(file);
      assert.equal(
        JSON.stringify(videoOf(info)).includes('rotation'),
        false,
        `${video}: no display matrix in the output`,
      );
    }
  });

  it("copies the audio packets unchanged, keeps the input's container or takes another", async () => {
    const file = await overlay({ video_url: files.url('/local/black.mp4'), image_url: files.url('/local/red.png') });
    assert.deepEqual(await audioPacketHashes(file), await audioPacketHashes(black));
    const mkv = await overlay(
      { video_url: files.url('/local/black.mp4'), image_url: files.url('/local/red.png'), format: 'mkv' },
      'mkv',
    );
    assert.equal((await probe(mkv)).format.format_name.split(',')[0], 'matroska');
    assert.deepEqual(await audioPacketHashes(mkv), await audioPacketHashes(black));
    // A WebM stays WebM; as MP4 (H.264 in 4:2:0) an odd size gets a black column and row.
    const odd = { video_url: files.url('/f/clip-1s-321x241-odd.webm'), image_url: files.url('/local/red.png') };
    const webm = videoOf(await probe(await overlay(odd, 'webm')))!;
    assert.deepEqual([webm.codec_name, webm.width, webm.height], ['vp9', 321, 241]);
    const mp4 = videoOf(await probe(await overlay({ ...odd, format: 'mp4' })))!;
    assert.deepEqual([mp4.codec_name, mp4.width, mp4.height], ['h264', 322, 242]);
  });

  it('refuses an image that is not one, an opacity of 2 and an end before the start, leaving nothing', async () => {
    const before = await readdir(path.join(server.dataDir, 'uploads')).catch(() => []);
    const base = { video_url: files.url('/local/black.mp4'), image_url: files.url('/local/red.png') };
    const notImages = {
      '/local/black.mp4': /black\.mp4 is not an image file: found mov with video h264 and audio aac$/,
      '/f/not-media.txt': /not-media\.txt is not readable media/,
    };
    for (const [image, error] of Object.entries(notImages)) {
      const res = await server.post('/overlay-image/', { ...base, image_url: files.url(image) });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(res.body.error!, error);
    }
    const cases: Array<[Record<string, string>, string]> = [
      [{ opacity: '2' }, 'Expected `opacity` to be a number from 0 to 1, got `2`'],
      [{ start: '2', end: '1' }, 'Expected `end` (1 s) to be after `start` (2 s)'],
      [{ end: '9' }, '`end` is 9 s, past the end of the input, which lasts 3 s'],
      [
        { position: 'middle' },
        'Expected `position` to be one of top-right, top-left, bottom-left, bottom-right, center',
      ],
    ];
    for (const [fields, error] of cases) {
      const res = await server.post('/overlay-image/', { ...base, ...fields });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.ok(res.body.error!.startsWith(error), `${res.body.error} should start with ${error}`);
    }
    assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')).catch(() => []), before);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const id = await submitJob(
      server.base,
      '/overlay-image/',
      { video_url: files.url('/local/black.mp4'), image_url: files.url('/local/half-red.png') },
      { Prefer: 'respond-async' },
    );
    const job = await waitForJob(server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    const result = job.result as Record<string, string>;
    assert.equal(result.message, 'Image overlaid successfully');
    assertNearRgb((await frameRgb(server.pathOf(result.output_file!), 1)).pixel(572, 66), [128, 0, 0], 24, 'the logo');
  });

  it('runs from the CLI on local files, and as a pipeline step', async () => {
    const out = await mkdtemp(path.join(scratch, 'cli-'));
    const result = await runCli([
      ...['overlay-image', '--video-url', black, '--image-url', halfRed, '--position', 'top-left'],
      ...['-o', path.join(out, 'logo.mp4')],
    ]);
    assert.equal(result.exitCode, 0, result.stderr);
    assertNearRgb((await frameRgb(path.join(out, 'logo.mp4'), 1)).pixel(66, 66), [128, 0, 0], 24, 'CLI: the logo');
    assert.deepEqual(await readdir(out), ['logo.mp4']);

    const definition = path.join(scratch, 'branded.yaml');
    await writeFile(
      definition,
      [
        'name: branded',
        'description: A logo over a video, then the same logo again at the opposite corner',
        'inputs:',
        '  clip: url',
        '  logo: url',
        'steps:',
        '  first:',
        '    op: overlay-image',
        '    with: { video_url: "{{ inputs.clip }}", image_url: "{{ inputs.logo }}" }',
        '  second:',
        '    op: overlay-image',
        '    with: { video_url: "{{ steps.first.output }}", image_url: "{{ inputs.logo }}", position: bottom-left }',
        'results:',
        '  video: "{{ steps.second.output }}"',
        '',
      ].join('\n'),
    );
    const piped = await mkdtemp(path.join(scratch, 'pipeline-'));
    const red = await makePng(path.join(scratch, 'pipeline-red.png'), 'color=c=red:s=100x100');
    const run = await runCli([
      'run',
      definition,
      '--input',
      `clip=${black}`,
      '--input',
      `logo=${red}`,
      '--out-dir',
      piped,
    ]);
    assert.equal(run.exitCode, 0, run.stderr);
    assert.deepEqual(await readdir(piped), ['video.mp4']);
    const frame = await frameRgb(path.join(piped, 'video.mp4'), 1);
    assertNearRgb(frame.pixel(572, 66), [255, 0, 0], 40, 'pipeline: the first logo');
    assertNearRgb(frame.pixel(66, 300), [255, 0, 0], 40, 'pipeline: the second logo');
    assertNearRgb(frame.pixel(320, 180), [0, 0, 0], 24, 'pipeline: the middle');
  });
});
