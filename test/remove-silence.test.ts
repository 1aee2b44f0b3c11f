import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { audioOf, audioPacketHashes, beepAt, docType, flashAt, pcm, probe, videoOf } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';
const FRAME = 1 / 25;

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);

/** Seconds of an output's first stream of a kind, as its container states them. */
const streamSeconds = (stream: { duration?: string } | undefined) => Number(stream?.duration);

/**
 * Sound with known pauses: 1 s of tone, 1.5 s of silence, 1 s of tone, 2 s of silence, 1 s of tone (6.5 s).
 * Each part a lavfi source of its own, joined: the silences are digital zeros.
 */
const GAPS = [1.5, 2];
const GAPS_GRAPH =
  'sine=f=440:r=44100:d=1[a];anullsrc=r=44100:cl=mono:d=1.5[b];sine=f=440:r=44100:d=1[c];' +
  'anullsrc=r=44100:cl=mono:d=2[d];sine=f=440:r=44100:d=1[e];[a][b][c][d][e]concat=n=5:v=0:a=1';

const EDGES_GRAPH =
  'anullsrc=r=44100:cl=mono:d=1[a];sine=f=440:r=44100:d=1[b];anullsrc=r=44100:cl=mono:d=1[c];' +
  'sine=f=440:r=44100:d=1[d];anullsrc=r=44100:cl=mono:d=1.5[e];[a][b][c][d][e]concat=n=5:v=0:a=1';

describe('remove-silence', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  /** Local files made here, by name: served under /local/<name>. */
  const made: Record<string, string> = {};

  before(async () => {
    await fixtures('tone-2s-44k-stereo.mp3', 'clip-1s-320x240-30fps-silent.mp4');
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-silence-'));
    const recipes: Record<string, string[]> = {
      'gaps.mp3': ['-filter_complex', GAPS_GRAPH, '-ac', '2', '-c:a', 'libmp3lame', '-q:a', '4'],
      // Black picture, 25 fps: a quiet tone from 0 to 1 s (below what `beepAt` takes for the beep), silence,
      // then a white flash and a 1 kHz beep together from 3 to 3.4 s, silence, and the tone from 4.4 to 5.4 s.
      'flash-beep.mp4': [
        '-f',
        'lavfi',
        '-i',
        "color=c=black:s=160x120:r=25:d=5.4,drawbox=c=white:t=fill:enable='between(t,3,3.39)'",
        '-f',
        'lavfi',
        '-i',
        "aevalsrc=exprs='0.05*sin(2*PI*440*t)*(lt(t,1)+gte(t,4.4))+0.8*sin(2*PI*1000*t)*between(t,3,3.4)'" +
          ':s=48000:d=5.4',
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
      ],
      'silence.wav': ['-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=stereo:d=3', '-c:a', 'pcm_s16le'],
      // Silent at both ends: 1 s of silence, 1 s of tone, 1 s of silence, 1 s of tone, 1.5 s of silence.
      'edges.wav': ['-filter_complex', EDGES_GRAPH, '-c:a', 'pcm_s16le'],
      // VP9 and Opus at an odd size, 4 s: a tone in the first half of every 2 s, silence in the second.
      'odd.webm': [
        '-f',
        'lavfi',
        '-i',
        'testsrc=size=321x241:rate=25:duration=4',
        '-f',
        'lavfi',
        '-i',
        "aevalsrc=exprs='0.3*sin(2*PI*440*t)*lt(mod(t\\,2)\\,1)':s=48000:d=4",
        '-c:v',
        'libvpx-vp9',
        '-deadline',
        'realtime',
        '-cpu-used',
        '8',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'libopus',
        '-shortest',
      ],
    };
    for (const [name, args] of Object.entries(recipes)) {
      made[name] = path.join(scratch, name);
      await execa('ffmpeg', ['-v', 'error', ...args, made[name]]);
    }
    files = await startFileServer(
      Object.fromEntries(Object.entries(made).map(([name, file]) => [`/local/${name}`, serveFile(file)])),
    );
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const removeSilence = async (fields: Record<string, string>, ext: string) => {
    const res = await server.post('/remove-silence/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Silence removed successfully');
    assert.match(res.body.output_file!, new RegExp(`^${server.base}/uploads/${UUID}/no_silence\\.${ext}$`));
    const removed = res.body.removed_seconds as unknown as number;
    return { file: server.pathOf(res.body.output_file!), removed };
  };

  for (const padding of [0.15, 0]) {
    it(`removes the pauses of a recording less ${padding} s of padding each side, within 0.1 s`, async () => {
      const { file, removed } = await removeSilence(
        { media_url: files.url('/local/gaps.mp3'), ...(padding ? {} : { padding: '0' }) },
        'mp3',
      );
      const expected = GAPS.reduce((sum, gap) => sum + gap - 2 * padding, 0);
      close(removed, expected, 0.1, 'removed_seconds');
      const info = await probe(file);
      assert.equal(info.format.format_name, 'mp3');
      // An MP3 frame is 26 ms: the encoder pads the end to a whole one.
      close(Number(info.format.duration), 6.5 - removed, 0.05, 'duration');
    });
  }

  it('removes a pause at the start or the end up to the edge, keeping padding only next to the sound', async () => {
    const { file, removed } = await removeSilence({ media_url: files.url('/local/edges.wav') }, 'wav');
    close(removed, 0.85 + 0.7 + 1.35, 0.1, 'removed_seconds');
    const info = await probe(file);
    close(Number(info.format.duration), 5.5 - removed, 0.01, 'duration');
    // The tone starts 0.15 s in: the padding kept before it.
    const samples = await pcm(file, 0, 0.3);
    const firstSound = samples.findIndex((sample) => Math.abs(sample) > 0.01) / 16000;
    close(firstSound, 0.15, 0.01, 'first sound');
  });

  it('cuts picture and sound together: a flash and a beep stay within one frame of each other', async () => {
    const { file, removed } = await removeSilence({ media_url: files.url('/local/flash-beep.mp4') }, 'mp4');
    // 2 s less 0.3 s of padding, 1 s less 0.3 s: the sound on both sides keeps 0.15 s of each pause.
    close(removed, 1.7 + 0.7, 0.1, 'removed_seconds');
    const info = await probe(file);
    close(streamSeconds(videoOf(info)), 5.4 - removed, FRAME, 'video duration');
    // AAC frames are 1024 samples (21 ms at 48 kHz): the sound ends within one of them, and one of priming.
    close(streamSeconds(audioOf(info)), streamSeconds(videoOf(info)), 0.05, 'audio duration against the video');
    const [flash, beep] = await Promise.all([flashAt(file), beepAt(file)]);
    // The first tone and 0.15 s of the first pause, then 0.15 s before the beep.
    close(flash, 1 + 0.15 + 0.15, FRAME, 'flash');
    close(beep, flash, FRAME, 'beep against the flash');
  });

  it('keeps a WebM as WebM, and pads an odd size for H.264 when `format` asks for mp4', async () => {
    const webm = await removeSilence({ media_url: files.url('/local/odd.webm') }, 'webm');
    let info = await probe(webm.file);
    assert.equal(await docType(webm.file), 'webm');
    assert.deepEqual([videoOf(info)!.codec_name, videoOf(info)!.width, videoOf(info)!.height], ['vp9', 321, 241]);
    // The pause from 1 to 2 s less 0.3 s, and the one from 3 s to the end less 0.15 s.
    close(webm.removed, 0.7 + 0.85, 0.1, 'removed_seconds');
    const mp4 = await removeSilence({ media_url: files.url('/local/odd.webm'), format: 'mp4' }, 'mp4');
    info = await probe(mp4.file);
    assert.deepEqual([videoOf(info)!.codec_name, videoOf(info)!.width, videoOf(info)!.height], ['h264', 322, 242]);
    assert.equal(mp4.removed, webm.removed);
  });

  it('copies an input with no pause long enough as it is, and answers 0 s removed', async () => {
    const { file, removed } = await removeSilence({ media_url: files.url('/f/tone-2s-44k-stereo.mp3') }, 'mp3');
    assert.equal(removed, 0);
    const source = await fixture('tone-2s-44k-stereo.mp3');
    assert.deepEqual(await audioPacketHashes(file), await audioPacketHashes(source));
    // Pauses of 1.5 and 2 s are not pauses when only those of 3 s or more count.
    const longer = await removeSilence({ media_url: files.url('/local/gaps.mp3'), min_silence: '3' }, 'mp3');
    assert.equal(longer.removed, 0);
  });

  it('refuses bad fields with a 400, and a video without sound or a silent file with a 422', async () => {
    const uploads = path.join(server.dataDir, 'uploads');
    const before = await readdir(uploads).catch(() => []);
    const tone = files.url('/f/tone-2s-44k-stereo.mp3');
    for (const [field, value, range] of [
      ['threshold', '0', '-90 to -10'],
      ['threshold', 'quiet', '-90 to -10'],
      ['min_silence', '0', '0.1 to 60'],
      ['padding', '-1', '0 to 5'],
    ] as const) {
      const res = await server.post('/remove-silence/', { media_url: tone, [field]: value });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error, `Expected \`${field}\` to be a number from ${range}, got \`${value}\``);
    }
    const mute = files.url('/f/clip-1s-320x240-30fps-silent.mp4');
    let res = await server.post('/remove-silence/', { media_url: mute });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error, `Input ${mute} has no audio stream: there is no sound to find silences in`);
    const silence = files.url('/local/silence.wav');
    res = await server.post('/remove-silence/', { media_url: silence });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error, `Input ${silence} is silent throughout (below -40 dB): nothing would be left`);
    assert.deepEqual(await readdir(uploads).catch(() => []), before);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs asynchronously as a job, its result the synchronous answer with removed_seconds', async () => {
    const id = await submitJob(
      server.base,
      '/remove-silence/',
      { media_url: files.url('/local/gaps.mp3'), padding: '0.25' },
      { Prefer: 'respond-async' },
    );
    const job = await waitForJob(server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    const result = job.result as { message: string; output_file: string; removed_seconds: number };
    assert.equal(result.message, 'Silence removed successfully');
    close(result.removed_seconds, 3.5 - 4 * 0.25, 0.1, 'removed_seconds');
    close(Number((await probe(server.pathOf(result.output_file))).format.duration), 4, 0.1, 'duration');
  });

  it('runs from the CLI on a local file', async () => {
    const out = await mkdtemp(path.join(scratch, 'cli-'));
    const result = await runCli(['remove-silence', '--media-url', made['flash-beep.mp4']!, '--out-dir', out]);
    assert.equal(result.exitCode, 0, result.stderr);
    const body = JSON.parse(result.stdout) as { output_file: string; removed_seconds: number };
    assert.ok(body.output_file.startsWith(out) && body.output_file.endsWith('/no_silence.mp4'), body.output_file);
    close(body.removed_seconds, 2.4, 0.1, 'removed_seconds');
    close(Number((await probe(body.output_file)).format.duration), 3, 0.1, 'duration');
  });

  it('runs in a pipeline: pauses removed, then the loudness brought to a podcast target', async () => {
    const out = await mkdtemp(path.join(scratch, 'pipeline-'));
    const definition = path.join(scratch, 'tighten.yaml');
    await writeFile(
      definition,
      [
        'name: tighten',
        'description: Pauses cut out of a recording, then its loudness levelled',
        'inputs:',
        '  recording: url',
        'steps:',
        '  tight:',
        '    op: remove-silence',
        '    with: { media_url: "{{ inputs.recording }}", padding: 0.1 }',
        '  level:',
        '    op: normalize-audio',
        '    with: { media_url: "{{ steps.tight.output }}", loudness: -16 }',
        'results:',
        '  episode: "{{ steps.level.output }}"',
        '',
      ].join('\n'),
    );
    const result = await runCli(['run', definition, '--input', `recording=${made['gaps.mp3']}`, '--out-dir', out]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(await readdir(out), ['episode.mp3']);
    close(Number((await probe(path.join(out, 'episode.mp3'))).format.duration), 6.5 - 3.5 + 4 * 0.1, 0.1, 'duration');
  });
});
