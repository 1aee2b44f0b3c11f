import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixtures } from '../helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { durationOf, probe, videoOf } from '../helpers/media.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';
import { watchFfmpeg } from '../helpers/process-tree.js';
import { expectRefused, ready } from './hostile.js';

/**
 * The pixel limit (MEDIAFLOW_MAX_PIXELS) holds for the pictures an operation makes, not only for those it reads: a
 * frame scaled up from a small input, a logo scaled to the video's width, a picture scaled on its way to a crop. Where
 * memory is the point, it is measured on the ffmpeg processes the server starts.
 */

const refusal = (width: number, height: number, limit = 100_000_000) =>
  `The output's pictures would be ${width}x${height} pixels, more than the limit of ${limit} pixels ` +
  '(MEDIAFLOW_MAX_PIXELS)';

describe('the sizes of the pictures an operation makes', () => {
  let files: FileServer;
  let server: TestServer;
  let small: TestServer;
  let scratch: string;

  /** A 0.4 s H.264 video of ffmpeg's test pattern at `size`. */
  const video = async (name: string, size: string) => {
    const file = path.join(scratch, name);
    await execa('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=25`, '-t', '0.4'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file],
    ]);
    return serveFile(file, 'video/mp4');
  };

  before(async () => {
    await fixtures('clip-2s-640x360-25fps.mp4', 'red-640x360.jpg');
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-sizes-'));
    const logo = path.join(scratch, 'tall.png');
    await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=16x4000', '-frames:v', '1', logo]);
    // Two different 7680x4320 pictures of the test pattern, a second apart.
    const uhd = path.join(scratch, 'uhd%d.png');
    await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=7680x4320:r=1', '-frames:v', '2', uhd]);
    files = await startFileServer({
      '/local/uhd1.png': serveFile(path.join(scratch, 'uhd1.png'), 'image/png'),
      '/local/uhd2.png': serveFile(path.join(scratch, 'uhd2.png'), 'image/png'),
      '/local/narrow.mp4': await video('narrow.mp4', '16x70'),
      '/local/tall.mp4': await video('tall.mp4', '16x2000'),
      '/local/tall.png': serveFile(logo, 'image/png'),
    });
    server = await startMediaflow();
    small = await startMediaflow({ MEDIAFLOW_MAX_PIXELS: '1000000' });
    await ready(server, small);
  });
  after(async () => {
    await server?.close();
    await small?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('refuses frames 7680 wide of a 16x70 video (258 megapixels each) before ffmpeg runs: 422', async () => {
    const watch = watchFfmpeg();
    await expectRefused(
      server,
      '/extract-frames/',
      { video_url: files.url('/local/narrow.mp4'), width: '7680', count: '10' },
      { status: 422, error: refusal(7680, 33600) },
    );
    assert.deepEqual((await watch.stop()).commands, []);
  });

  it('takes frames scaled up to 8K one to a command, within 400 MiB of ffmpeg memory', async () => {
    const watch = watchFfmpeg();
    const res = await server.post('/extract-frames/', {
      video_url: files.url('/f/clip-2s-640x360-25fps.mp4'),
      width: '7680',
      count: '4',
    });
    const { peakMiB } = await watch.stop();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const frames = res.body.output_files as unknown as string[];
    assert.equal(frames.length, 4);
    for (const frame of frames) {
      const picture = videoOf(await probe(server.pathOf(frame)))!;
      assert.deepEqual([picture.width, picture.height], [7680, 4320]);
    }
    // Four in one command took 800 MB; a frame of 7680x4320 alone takes about a quarter of it.
    assert.ok(peakMiB > 0 && peakMiB < 400, `ffmpeg's peak: ${peakMiB.toFixed(0)} MiB`);
  });

  it('crops a 16x2000 video to 1024x1024 without scaling it to 1024x128000 first', async () => {
    const watch = watchFfmpeg();
    const res = await server.post('/crop-video/', {
      video_url: files.url('/local/tall.mp4'),
      width: '1024',
      height: '1024',
    });
    const { peakMiB } = await watch.stop();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const picture = videoOf(await probe(server.pathOf(res.body.output_file!)))!;
    assert.deepEqual([picture.width, picture.height], [1024, 1024]);
    // Scaled whole first, the 131-megapixel picture took ffmpeg to 550 MB.
    assert.ok(peakMiB > 0 && peakMiB < 256, `ffmpeg's peak: ${peakMiB.toFixed(0)} MiB`);
  });

  it('makes an 8K slideshow with zoom and fades from two 8K pictures within 1 GiB of ffmpeg memory', async () => {
    const watch = watchFfmpeg();
    const res = await server.post('/images-to-video/', {
      image_urls: [files.url('/local/uhd1.png'), files.url('/local/uhd2.png')].join(','),
      seconds_per_image: '1',
      fps: '2',
      motion: 'zoom',
      transition: 'fade',
    });
    const { peakMiB } = await watch.stop();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const file = server.pathOf(res.body.output_file!);
    const probed = await probe(file);
    assert.deepEqual([videoOf(probed)!.width, videoOf(probed)!.height], [7680, 4320]);
    assert.ok(Math.abs(durationOf(probed) - 2) < 0.05, `lasts ${durationOf(probed)} s`);
    // One command of 25 frames took 4.8 GB: x264's threads and look-ahead, perspective's table of the whole frame.
    assert.ok(peakMiB > 0 && peakMiB < 1024, `ffmpeg's peak: ${peakMiB.toFixed(0)} MiB`);
  });

  it('refuses a 16x4000 logo that the video width would scale to 640x160000: 422', async () => {
    await expectRefused(
      server,
      '/overlay-image/',
      { video_url: files.url('/f/clip-2s-640x360-25fps.mp4'), image_url: files.url('/local/tall.png'), width: '1' },
      { status: 422, error: refusal(640, 160_000) },
    );
  });

  it('holds every output picture to a lowered limit: 400 from the fields, 422 from the probed input', async () => {
    const clip = files.url('/f/clip-2s-640x360-25fps.mp4');
    const image = files.url('/f/red-640x360.jpg');
    const limited = (width: number, height: number) => refusal(width, height, 1_000_000);
    await expectRefused(
      small,
      '/resize_image/',
      { image_url: image, width: '2000', height: '1000' },
      { status: 400, error: limited(2000, 1000) },
    );
    await expectRefused(
      small,
      '/images-to-video/',
      { image_urls: image, width: '1920', height: '1080' },
      { status: 400, error: limited(1920, 1080) },
    );
    await expectRefused(
      small,
      '/crop-video/',
      { video_url: clip, width: '1080', height: '1920' },
      { status: 400, error: limited(1080, 1920) },
    );
    await expectRefused(
      small,
      '/extract-frames/',
      { video_url: clip, width: '1920' },
      { status: 422, error: limited(1920, 1080) },
    );
    await expectRefused(
      small,
      '/extract-frames/',
      { video_url: clip, count: '12', sheet: 'true' },
      { status: 422, error: limited(2560, 1080) },
    );
    // Within the limit, the same operations work.
    const res = await small.post('/extract-frames/', { video_url: clip, width: '1280' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });
});
