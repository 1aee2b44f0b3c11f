import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { waitForJob } from './helpers/jobs.js';
import { audioOf, audioPacketHashes, pcm, probe, type Probed } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

/** Seconds of sound a file decodes to (its first audio stream, as 16 kHz samples). */
const soundSeconds = async (file: string) => (await pcm(file, 0, 3600)).length / 16000;

/** MD5 of all the stored bytes of a file's first audio stream, as one run (no decoding). */
const pcmDataHash = async (file: string) =>
  (await execa('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:a:0', '-c', 'copy', '-f', 'md5', 'pipe:1'])).stdout;

/** One frame of the 25 fps inputs. */
const FRAME = 0.04;

/** What ffprobe calls each format's container and codec when it reads the file back. */
const WRITTEN: Record<string, { container: string; codec: string }> = {
  mp3: { container: 'mp3', codec: 'mp3' },
  m4a: { container: 'mov,mp4,m4a,3gp,3g2,mj2', codec: 'aac' },
  aac: { container: 'aac', codec: 'aac' },
  wav: { container: 'wav', codec: 'pcm_s16le' },
  flac: { container: 'flac', codec: 'flac' },
  ogg: { container: 'ogg', codec: 'vorbis' },
  opus: { container: 'ogg', codec: 'opus' },
};

/** Videos made here, as the shared fixtures have no Matroska with MP3, FLAC or PCM sound, nor with subtitles. */
const MADE: Record<string, string[]> = {
  // H.264, MP3 and an SRT track: the subtitles must not reach the output.
  'mp3-subs.mkv': ['-c:a', 'libmp3lame', '-q:a', '4'],
  // Fastest compression: packets a re-encode at the default level would not reproduce.
  'flac.mkv': ['-c:a', 'flac', '-compression_level', '0'],
  // 24-bit: a copy keeps it, where an encode would write wav's 16 bits.
  'pcm.mkv': ['-c:a', 'pcm_s24le'],
};

describe('extract-audio', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  /** Local paths of every input by the name it is served under (/f/<name> or /local/<name>). */
  const inputs = new Map<string, string>();
  const urlOf = (name: string) => files.url(MADE[name] ? `/local/${name}` : `/f/${name}`);

  before(async () => {
    const shared = ['clip-2s-640x360-25fps.mp4', 'clip-2s-320x240.webm', 'clip-1s-320x240-30fps-silent.mp4'];
    await fixtures(...shared, 'tone-2s-44k-stereo.mp3', 'hello.srt');
    for (const name of shared) inputs.set(name, await fixture(name));
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-extract-audio-'));
    for (const [name, audio] of Object.entries(MADE)) {
      const file = path.join(scratch, name);
      const subtitles = name.includes('subs') ? ['-i', await fixture('hello.srt'), '-map', '2', '-c:s', 'srt'] : [];
      await execa('ffmpeg', [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=160x120:rate=25:duration=2',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:duration=2:sample_rate=44100',
        ...subtitles,
        '-map',
        '0',
        '-map',
        '1',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        ...audio,
        '-shortest',
        '-f',
        'matroska',
        file,
      ]);
      inputs.set(name, file);
    }
    const routes = Object.fromEntries(
      Object.keys(MADE).map((name) => [`/local/${name}`, serveFile(inputs.get(name)!, 'video/x-matroska')]),
    );
    files = await startFileServer(routes);
    // The pipeline of the last case, from a folder of its own.
    await writeFile(
      path.join(scratch, 'soundtrack.yaml'),
      [
        'name: soundtrack',
        'description: A video converted to WebM, and its sound taken out of the result',
        'inputs:',
        '  clip:',
        '    type: url',
        'steps:',
        '  webm:',
        '    op: convert-video',
        '    with:',
        '      video_url: "{{ inputs.clip }}"',
        '      format: webm',
        '  sound:',
        '    op: extract-audio',
        '    with:',
        '      video_url: "{{ steps.webm.output }}"',
        '      format: opus',
        'results:',
        '  video: "{{ steps.webm.output }}"',
        '  sound: "{{ steps.sound.output }}"',
        '',
      ].join('\n'),
    );
    server = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: scratch });
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** Extracts over HTTP, checks the answer's message and path, and returns the file with ffprobe's view of it. */
  const extract = async (name: string, format?: string) => {
    const res = await server.post('/extract-audio/', { video_url: urlOf(name), ...(format ? { format } : {}) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Audio extracted successfully');
    assert.match(
      res.body.output_file!,
      new RegExp(
        `^${server.base}/uploads/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/audio\\.` +
          `${format ?? 'mp3'}$`,
      ),
    );
    const file = server.pathOf(res.body.output_file!);
    return { file, info: await probe(file) };
  };

  /** The output is one audio stream, in the container and codec the format names. */
  const assertWritten = (info: Probed, format: string) => {
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
      `only sound in the ${format} (no picture, subtitles or data)`,
    );
    assert.equal(info.format.format_name, WRITTEN[format]!.container);
    assert.equal(audioOf(info)!.codec_name, WRITTEN[format]!.codec);
  };

  // The source's audio codec fits the format: its packets are copied.
  const copies: Array<{ source: string; format?: string }> = [
    { source: 'clip-2s-640x360-25fps.mp4', format: 'm4a' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'aac' },
    { source: 'clip-2s-320x240.webm', format: 'opus' },
    { source: 'clip-2s-320x240.webm', format: 'ogg' },
    { source: 'mp3-subs.mkv' },
    { source: 'flac.mkv', format: 'flac' },
    { source: 'pcm.mkv', format: 'wav' },
  ];
  for (const { source, format } of copies) {
    it(`copies the sound of ${source} into ${format ?? 'mp3 (the default)'}, byte for byte`, async () => {
      const { file, info } = await extract(source, format);
      const sourceInfo = await probe(inputs.get(source)!);
      const original = audioOf(sourceInfo)!;
      assert.ok(sourceInfo.streams.some((s) => s.codec_type === 'video'));
      if (source === 'mp3-subs.mkv') assert.ok(sourceInfo.streams.some((s) => s.codec_type === 'subtitle'));
      assert.equal(info.format.format_name, WRITTEN[format ?? 'mp3']!.container);
      assert.deepEqual(
        info.streams.map((s) => [s.codec_type, s.codec_name]),
        [['audio', original.codec_name]],
      );
      if (format === 'wav') {
        // PCM packets are slices of one run of samples, cut differently by each container: compare the whole run.
        assert.equal(await pcmDataHash(file), await pcmDataHash(inputs.get(source)!));
        return;
      }
      const [copied, packets] = await Promise.all([audioPacketHashes(file), audioPacketHashes(inputs.get(source)!)]);
      assert.ok(copied.length > 10, `${copied.length} packets`);
      assert.deepEqual(copied, packets);
    });
  }

  // The codec does not fit: the sound is encoded, and lasts as long as the source's.
  const encodes: Array<{ source: string; format: string }> = [
    { source: 'clip-2s-640x360-25fps.mp4', format: 'mp3' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'wav' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'flac' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'ogg' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'opus' },
    { source: 'clip-2s-320x240.webm', format: 'm4a' },
    { source: 'clip-2s-320x240.webm', format: 'aac' },
  ];
  for (const { source, format } of encodes) {
    it(`encodes the sound of ${source} as ${format}, as long as the source's within a frame`, async () => {
      const { file, info } = await extract(source, format);
      assertWritten(info, format);
      const [out, original] = await Promise.all([soundSeconds(file), soundSeconds(inputs.get(source)!)]);
      // A bare AAC stream (ADTS) cannot say how many samples the encoder put before the sound: they play too.
      const priming = format === 'aac' ? 1024 / Number(audioOf(info)!.sample_rate) : 0;
      assert.ok(
        Math.abs(out - original - priming) <= FRAME,
        `${out} s of sound, the source has ${original} s (and ${priming} s of priming)`,
      );
    });
  }

  it('refuses a video without sound with a 422 naming the field, and leaves no file behind', async () => {
    const uploads = path.join(server.dataDir, 'uploads');
    const before = await readdir(uploads).catch(() => []);
    const url = urlOf('clip-1s-320x240-30fps-silent.mp4');
    const res = await server.post('/extract-audio/', { video_url: url, format: 'wav' });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error, `Input ${url} has no audio stream: \`video_url\` must be a video with sound`);
    assert.deepEqual(await server.workLeftovers(), []);
    assert.deepEqual(await readdir(uploads).catch(() => []), before);
  });

  it('answers the errors of the other fields: an unknown format, no video_url, a sound file', async () => {
    const video = urlOf('clip-2s-640x360-25fps.mp4');
    let res = await server.post('/extract-audio/', { video_url: video, format: 'wma' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'wma'. Supported formats: mp3, wav, aac, m4a, ogg, flac, opus.");
    res = await server.post('/extract-audio/', { format: 'mp3' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'Missing required parameter `video_url`');
    // `video_url` takes a video: a file of sound alone is not one.
    res = await server.post('/extract-audio/', { video_url: urlOf('tone-2s-44k-stereo.mp3') });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not a video file: found mp3 with audio mp3/);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs from the CLI on a local file, and fails there too on a silent one', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
    try {
      const local = inputs.get('clip-2s-640x360-25fps.mp4')!;
      const result = await runCli(['extract-audio', '--video-url', local, '--format', 'm4a', '--out-dir', out]);
      assert.equal(result.exitCode, 0, result.stderr);
      const body = JSON.parse(result.stdout) as Record<string, string>;
      assert.equal(body.message, 'Audio extracted successfully');
      assert.ok(body.output_file!.startsWith(out) && body.output_file!.endsWith('/audio.m4a'), body.output_file);
      assert.deepEqual(await audioPacketHashes(body.output_file!), await audioPacketHashes(local));
      const silent = inputs.get('clip-1s-320x240-30fps-silent.mp4')!;
      const bad = await runCli(['extract-audio', '--video-url', silent, '--out-dir', path.join(out, 'silent')]);
      assert.equal(bad.exitCode, 1);
      assert.match(bad.stderr, /has no audio stream: `video_url` must be a video with sound/);
      assert.deepEqual(await readdir(path.join(out, 'silent')).catch(() => []), []);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('runs asynchronously: 202, then the job at /jobs/<id> with the same answer', async () => {
    const form = new FormData();
    form.append('video_url', urlOf('clip-2s-320x240.webm'));
    form.append('format', 'flac');
    const res = await fetch(`${server.base}/extract-audio`, {
      method: 'POST',
      body: form,
      headers: { prefer: 'respond-async' },
    });
    const accepted = (await res.json()) as { job_id: string };
    assert.equal(res.status, 202, JSON.stringify(accepted));
    const job = await waitForJob(server.base, accepted.job_id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    const result = job.result as { message: string; output_file: string };
    assert.equal(result.message, 'Audio extracted successfully');
    assert.match(result.output_file, /\/audio\.flac$/);
    assertWritten(await probe(server.pathOf(result.output_file)), 'flac');
  });

  it('runs as a pipeline step, on the output of the step before', async () => {
    const res = await server.post('/pipelines/soundtrack', { clip: urlOf('clip-2s-640x360-25fps.mp4') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outputs = res.body.outputs as unknown as Record<string, string>;
    assert.match(outputs.sound!, /\/sound\.opus$/);
    const sound = server.pathOf(outputs.sound!);
    assertWritten(await probe(sound), 'opus');
    // The WebM step wrote Opus, so the second step copied it.
    assert.deepEqual(await audioPacketHashes(sound), await audioPacketHashes(server.pathOf(outputs.video!)));
  });
});
