import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { audioOf, beepAt, docType, flashAt, pcm, probe, toneLevel, videoOf, type Probed } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';
const FRAME = 1 / 25;

const streamSeconds = (stream: Probed['streams'][number] | undefined) => Number(stream?.duration);
const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);

describe('change-speed', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  /** Black, with a white flash and a 1 kHz beep that both start at exactly 1 s: sync is visible in both. */
  let flashBeep: string;

  before(async () => {
    await fixtures(
      'clip-2s-640x360-25fps.mp4',
      'clip-1s-321x241-odd.webm',
      'tone-2s-44k-stereo.mp3',
      'small-300x200.png',
    );
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-speed-'));
    flashBeep = path.join(scratch, 'flash-beep.mp4');
    await execa('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      "color=c=black:s=160x120:r=25:d=3,drawbox=c=white:t=fill:enable='between(t,1,1.39)'",
      '-f',
      'lavfi',
      '-i',
      "aevalsrc=exprs='if(between(t,1,1.4),0.8*sin(2*PI*1000*t),0)':s=48000:d=3",
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-f',
      'mp4',
      flashBeep,
    ]);
    files = await startFileServer({
      '/local/flash-beep.mp4': serveFile(flashBeep, 'video/mp4'),
    });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const speed = async (fields: Record<string, string>, ext: string) => {
    const res = await server.post('/change-speed/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Speed changed successfully');
    assert.match(res.body.output_file!, new RegExp(`^${server.base}/uploads/${UUID}/speed\\.${ext}$`));
    const file = server.pathOf(res.body.output_file!);
    return { file, info: await probe(file) };
  };

  for (const factor of [2, 0.5, 4, 0.25]) {
    it(`at speed ${factor} a video lasts its length / ${factor} within a frame, pitch and container kept`, async () => {
      const url = files.url('/f/clip-2s-640x360-25fps.mp4');
      const { file, info } = await speed({ media_url: url, speed: String(factor) }, 'mp4');
      assert.equal(info.format.format_name.split(',')[0], 'mov');
      close(streamSeconds(videoOf(info)), 2 / factor, FRAME, 'video duration');
      // AAC frames are 1024 samples (21 ms at 48 kHz): the sound ends within one of them, and one of priming.
      close(streamSeconds(audioOf(info)), 2 / factor, 0.05, 'audio duration');
      assert.equal(videoOf(info)!.avg_frame_rate, '25/1');
      // The 440 Hz tone is still 440 Hz: atempo stretches time, not pitch.
      const samples = await pcm(file, 0.2, 0.4);
      const at440 = toneLevel(samples, 440);
      assert.ok(at440 > 0.05 && at440 > 10 * toneLevel(samples, 440 * factor), `440 Hz level ${at440}`);
    });
  }

  it('keeps a beep and a flash that start together within one frame of each other', async () => {
    for (const factor of [2, 0.5, 3, 0.25, 4]) {
      const { file } = await speed({ media_url: files.url('/local/flash-beep.mp4'), speed: String(factor) }, 'mp4');
      const flash = await flashAt(file);
      const beep = await beepAt(file);
      close(flash, 1 / factor, FRAME, `flash at speed ${factor}`);
      close(beep, flash, FRAME, `beep against the flash at speed ${factor}`);
    }
  });

  it('keeps an audio-only input audio-only, in its own container', async () => {
    const { info } = await speed({ media_url: files.url('/f/tone-2s-44k-stereo.mp3'), speed: '2' }, 'mp3');
    assert.equal(info.format.format_name, 'mp3');
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
    );
    assert.equal(audioOf(info)!.sample_rate, '44100');
    const input = Number((await probe(await fixture('tone-2s-44k-stereo.mp3'))).format.duration);
    // An MP3 frame is 26 ms at 44.1 kHz: the encoder pads to whole frames.
    close(Number(info.format.duration), input / 2, 0.03, 'duration');
  });

  it('keeps a WebM input as WebM, pads an odd size for H.264 when asked for mp4, and takes a format', async () => {
    const webm = await speed({ media_url: files.url('/f/clip-1s-321x241-odd.webm'), speed: '0.5' }, 'webm');
    let { info } = webm;
    assert.equal(await docType(webm.file), 'webm');
    assert.equal(videoOf(info)!.codec_name, 'vp9');
    close(streamSeconds(videoOf(info)) || Number(info.format.duration), 2, 0.1, 'duration');
    ({ info } = await speed(
      { media_url: files.url('/f/clip-1s-321x241-odd.webm'), speed: '0.5', format: 'mp4' },
      'mp4',
    ));
    assert.equal(videoOf(info)!.codec_name, 'h264');
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [322, 242]);
    ({ info } = await speed({ media_url: files.url('/f/tone-2s-44k-stereo.mp3'), speed: '2', format: 'mkv' }, 'mkv'));
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
    );
  });

  it('refuses a speed of 0 or 5, or none, with a 400 and leaves no file behind', async () => {
    const before = await readdir(path.join(server.dataDir, 'uploads')).catch(() => []);
    for (const value of ['0', '5', 'fast', '']) {
      const res = await server.post('/change-speed/', {
        media_url: files.url('/f/clip-2s-640x360-25fps.mp4'),
        speed: value,
      });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(
        res.body.error,
        value === ''
          ? 'Missing required parameter `speed`'
          : `Expected \`speed\` to be a number from 0.25 to 4, got \`${value}\``,
      );
    }
    const res = await server.post('/change-speed/', {
      media_url: files.url('/f/clip-2s-640x360-25fps.mp4'),
      speed: '2',
      format: 'mp3',
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'mp3'. Supported formats: mp4, mov, mkv, avi, webm.");
    // A picture is media to the input check, but has no time to change.
    const picture = await server.post('/change-speed/', { media_url: files.url('/f/small-300x200.png'), speed: '2' });
    assert.equal(picture.status, 422);
    assert.match(picture.body.error!, /small-300x200\.png is a picture: its speed cannot change$/);
    assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')).catch(() => []), before);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const id = await submitJob(
      server.base,
      '/change-speed/',
      { media_url: files.url('/f/clip-2s-640x360-25fps.mp4'), speed: '2' },
      { Prefer: 'respond-async' },
    );
    const job = await waitForJob(server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    const result = job.result as Record<string, string>;
    assert.equal(result.message, 'Speed changed successfully');
    const info = await probe(server.pathOf(result.output_file!));
    close(streamSeconds(videoOf(info)), 1, FRAME, 'video duration');
  });

  it('runs from the CLI on a local file, naming the output after the input container', async () => {
    const out = await mkdtemp(path.join(scratch, 'cli-'));
    const tone = await fixture('tone-2s-44k-stereo.mp3');
    let result = await runCli([
      'change-speed',
      '--media-url',
      tone,
      '--speed',
      '0.5',
      '-o',
      path.join(out, 'slow.mp3'),
    ]);
    assert.equal(result.exitCode, 0, result.stderr);
    const info = await probe(path.join(out, 'slow.mp3'));
    assert.equal(info.format.format_name, 'mp3');
    close(Number(info.format.duration), Number((await probe(tone)).format.duration) / 0.5, 0.03, 'duration');
    // The name is checked against the input's container, before anything runs.
    result = await runCli(['change-speed', '--media-url', tone, '--speed', '2', '-o', path.join(out, 'fast.mp4')]);
    assert.equal(result.exitCode, 2);
    assert.match(
      result.stderr,
      /^mediaflow: Expected `--output` to end in \.mp3, the kind of file change-speed makes here, got `.*fast\.mp4` \(--format chooses another\)$/m,
    );
    assert.deepEqual(await readdir(out), ['slow.mp3']);
  });

  it('runs in a pipeline: twice as fast, then half as fast, gives the input length back', async () => {
    const out = await mkdtemp(path.join(scratch, 'pipeline-'));
    const definition = path.join(scratch, 'there-and-back.yaml');
    await writeFile(
      definition,
      [
        'name: there-and-back',
        'description: Speeds a clip up, then down again',
        'inputs:',
        '  clip: url',
        'steps:',
        '  fast:',
        '    op: change-speed',
        '    with: { media_url: "{{ inputs.clip }}", speed: 2 }',
        '  back:',
        '    op: change-speed',
        '    with: { media_url: "{{ steps.fast.output }}", speed: 0.5 }',
        'results:',
        '  back: "{{ steps.back.output }}"',
        '',
      ].join('\n'),
    );
    const tone = await fixture('tone-2s-44k-stereo.mp3');
    const result = await runCli(['run', definition, '--input', `clip=${tone}`, '--out-dir', out]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(await readdir(out), ['back.mp3']);
    const info = await probe(path.join(out, 'back.mp3'));
    close(Number(info.format.duration), 2, 0.1, 'duration');
  });
});
