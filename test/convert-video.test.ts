import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import {
  audioOf,
  docType,
  durationOf,
  frameRgb,
  probe,
  videoOf,
  type Probed,
  videoPacketHashes,
} from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

/** The container as a player tells it: mp4 and mov share ffprobe's format name but not their brand. */
async function container(file: string, info: Probed): Promise<string> {
  if (info.format.format_name === 'avi') return 'avi';
  if (info.format.format_name.startsWith('matroska')) return (await docType(file)) ?? 'unknown matroska';
  if (info.format.format_name.startsWith('mov')) {
    const brand = (info.format as { tags?: Record<string, string> }).tags?.major_brand;
    return brand === 'qt  ' ? 'mov' : 'mp4';
  }
  return info.format.format_name;
}

/** Mean absolute difference (0..255) of two files' decoded pictures at `seconds`: small when it is the same picture. */
async function pictureDifference(a: string, b: string, seconds: number): Promise<number> {
  const [fa, fb] = await Promise.all([frameRgb(a, seconds), frameRgb(b, seconds)]);
  const width = Math.min(fa.width, fb.width);
  const height = Math.min(fa.height, fb.height);
  let sum = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const pa = fa.pixel(x, y);
      const pb = fb.pixel(x, y);
      sum += Math.abs(pa[0] - pb[0]) + Math.abs(pa[1] - pb[1]) + Math.abs(pa[2] - pb[2]);
    }
  return sum / (width * height * 3);
}

const close = (actual: number, expected: number, tolerance: number, what = 'duration') =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);

/** Codecs that suit each container, as the issue lists them. */
const SUITS: Record<string, { video: string[]; audio: string[] }> = {
  mp4: { video: ['h264'], audio: ['aac'] },
  mov: { video: ['h264'], audio: ['aac'] },
  avi: { video: ['mpeg4'], audio: ['mp3'] },
  webm: { video: ['vp9', 'vp8'], audio: ['opus', 'vorbis'] },
};

describe('convert-video', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  /** An AVI as other tools write it: MPEG-4 Part 2 (Xvid) and MP3, made here as fixtures.ts has no avi muxer. */
  let avi: string;

  before(async () => {
    await fixtures(
      'clip-2s-640x360-25fps.mp4',
      'clip-2s-320x240.webm',
      'clip-1s-320x240-30fps-silent.mp4',
      'clip-1s-321x241-odd.webm',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    );
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-convert-'));
    avi = path.join(scratch, 'xvid-mp3.avi');
    await execa('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x240:rate=25:duration=1',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=1:sample_rate=44100',
      '-c:v',
      'mpeg4',
      '-vtag',
      'XVID',
      '-q:v',
      '4',
      '-c:a',
      'libmp3lame',
      '-q:a',
      '4',
      '-shortest',
      '-f',
      'avi',
      avi,
    ]);
    files = await startFileServer({
      '/local/xvid-mp3.avi': serveFile(avi, 'video/x-msvideo'),
    });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const convert = async (url: string, format: string) => {
    const res = await server.post('/convert-video/', { video_url: url, format });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, `Conversion to .${format} successful`);
    assert.match(
      res.body.output_file!,
      new RegExp(
        `^${server.base}/uploads/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}_input_video\\.` +
          `${format}$`,
      ),
    );
    const file = server.pathOf(res.body.output_file!);
    return { file, info: await probe(file) };
  };

  // Each target from a source whose codecs it does not take as they are, so a renamed file fails.
  const cases: Array<{ source: string; format: string }> = [
    { source: 'clip-2s-320x240.webm', format: 'mp4' },
    { source: 'clip-2s-320x240.webm', format: 'mov' },
    { source: 'clip-2s-320x240.webm', format: 'avi' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'webm' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'avi' },
    { source: 'xvid-mp3.avi', format: 'mp4' },
  ];
  for (const { source, format } of cases) {
    it(`converts ${source} to ${format} with codecs ${format} suits, keeping picture, sound and duration`, async () => {
      const sourcePath = source === 'xvid-mp3.avi' ? avi : await fixture(source);
      const url = source === 'xvid-mp3.avi' ? files.url('/local/xvid-mp3.avi') : files.url(`/f/${source}`);
      const { file, info } = await convert(url, format);
      const input = await probe(sourcePath);
      assert.equal(await container(file, info), format);
      assert.ok(
        SUITS[format]!.video.includes(videoOf(info)!.codec_name),
        `video codec ${videoOf(info)!.codec_name} in ${format}`,
      );
      assert.ok(
        SUITS[format]!.audio.includes(audioOf(info)!.codec_name),
        `audio codec ${audioOf(info)!.codec_name} in ${format}`,
      );
      assert.equal(info.streams.filter((s) => s.codec_type === 'audio').length, 1);
      assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [videoOf(input)!.width, videoOf(input)!.height]);
      close(durationOf(info), durationOf(input), 0.1);
      const difference = await pictureDifference(sourcePath, file, 0.5);
      assert.ok(difference < 8, `picture differs from the source by ${difference}`);
    });
  }

  it('converts to mkv as Matroska, copying the H.264 and AAC it takes', async () => {
    const source = await fixture('clip-2s-640x360-25fps.mp4');
    const { file, info } = await convert(files.url('/f/clip-2s-640x360-25fps.mp4'), 'mkv');
    assert.equal(await container(file, info), 'matroska');
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.equal(audioOf(info)?.codec_name, 'aac');
    assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
    close(durationOf(info), 2, 0.1);
  });

  it('copies streams that already suit the target (mp4 to mp4 and to mov) instead of re-encoding', async () => {
    const source = await fixture('clip-2s-640x360-25fps.mp4');
    for (const format of ['mp4', 'mov']) {
      const { file, info } = await convert(files.url('/f/clip-2s-640x360-25fps.mp4'), format);
      assert.equal(await container(file, info), format);
      assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
      assert.equal(audioOf(info)?.codec_name, 'aac');
      assert.equal(audioOf(info)?.sample_rate, '48000');
    }
  });

  it('converts a video without sound, and adds none', async () => {
    for (const format of ['webm', 'avi']) {
      const { file, info } = await convert(files.url('/f/clip-1s-320x240-30fps-silent.mp4'), format);
      assert.equal(await container(file, info), format);
      assert.ok(SUITS[format]!.video.includes(videoOf(info)!.codec_name));
      assert.equal(info.streams.filter((s) => s.codec_type === 'audio').length, 0);
      close(durationOf(info), 1, 0.1);
    }
  });

  it('converts a video of odd width and height to H.264 (padded to even) and to MPEG-4', async () => {
    let { info } = await convert(files.url('/f/clip-1s-321x241-odd.webm'), 'mp4');
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.deepEqual([videoOf(info)?.width, videoOf(info)?.height], [322, 242]);
    close(durationOf(info), 1, 0.1);
    ({ info } = await convert(files.url('/f/clip-1s-321x241-odd.webm'), 'avi'));
    assert.equal(videoOf(info)?.codec_name, 'mpeg4');
    close(durationOf(info), 1, 0.1);
  });

  it('answers the errors: unsupported format, missing URL, a failed download, inputs that are not video', async () => {
    const video = files.url('/f/clip-2s-640x360-25fps.mp4');
    let res = await server.post('/convert-video/', { video_url: video, format: 'flv' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'flv'. Supported formats: mp4, mov, mkv, avi, webm.");
    res = await server.post('/convert-video/', { format: 'mp4' });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /video_url/);
    const missing = files.url('/f/missing.mp4');
    res = await server.post('/convert-video/', { video_url: missing, format: 'mp4' });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    res = await server.post('/convert-video/', { video_url: files.url('/f/tone-2s-44k-stereo.mp3'), format: 'mp4' });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not a video file/);
    res = await server.post('/convert-video/', { video_url: files.url('/f/not-media.txt'), format: 'webm' });
    assert.equal(res.status, 422);
    assert.ok(!res.body.error!.includes(server.dataDir), res.body.error);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs from the CLI with a local path, printing the same JSON', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
    try {
      const result = await runCli([
        'convert-video',
        '--video-url',
        await fixture('clip-2s-320x240.webm'),
        '--format',
        'avi',
        '--out-dir',
        out,
      ]);
      assert.equal(result.exitCode, 0, result.stderr);
      const body = JSON.parse(result.stdout) as Record<string, string>;
      assert.equal(body.message, 'Conversion to .avi successful');
      assert.ok(body.output_file!.startsWith(out) && body.output_file!.endsWith('_input_video.avi'), body.output_file);
      const info = await probe(body.output_file!);
      assert.equal(info.format.format_name, 'avi');
      assert.equal(videoOf(info)?.codec_name, 'mpeg4');
      assert.equal(audioOf(info)?.codec_name, 'mp3');
      const bad = await runCli([
        'convert-video',
        '--video-url',
        await fixture('clip-2s-320x240.webm'),
        '--format',
        'gif',
        '--out-dir',
        out,
      ]);
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /Unsupported format 'gif'/);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
