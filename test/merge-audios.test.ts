import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { audioOf, durationOf, probe } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

describe('merge-audios', () => {
  let files: FileServer;
  let server: TestServer;

  before(async () => {
    await fixtures(
      'tone-2s-44k-stereo.mp3',
      'tone-3s-44k-stereo.mp3',
      'tone-1s-22k-mono.wav',
      'tone-1s-48k-stereo.m4a',
      'tone-2s-48k-stereo.aac',
    );
    files = await startFileServer();
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  it('joins inputs of different formats, rates and channel counts; duration is the sum', async () => {
    const urls = ['tone-2s-44k-stereo.mp3', 'tone-1s-22k-mono.wav', 'tone-1s-48k-stereo.m4a'].map((n) =>
      files.url(`/f/${n}`),
    );
    const res = await server.post('/merge-audios/', { audio_urls: urls.join(', '), format: 'wav' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Audios merged successfully');
    assert.match(res.body.output_file!, new RegExp(`^${server.base}/uploads/[0-9a-f-]{36}/merged_output\\.wav$`));
    const info = await probe(server.pathOf(res.body.output_file!));
    assert.equal(audioOf(info)?.codec_name, 'pcm_s16le');
    assert.equal(audioOf(info)?.channels, 2);
    assert.ok(Math.abs(durationOf(info) - 4) < 0.15, `duration ${durationOf(info)}`);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('joins inputs that already are the output codec by stream copy, keeping their parameters', async () => {
    const urls = ['tone-2s-44k-stereo.mp3', 'tone-3s-44k-stereo.mp3'].map((n) => files.url(`/f/${n}`));
    const res = await server.post('/merge-audios', { audio_urls: urls.join(',') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const info = await probe(server.pathOf(res.body.output_file!));
    const source = audioOf(await probe(await fixture('tone-2s-44k-stereo.mp3')))!;
    assert.equal(audioOf(info)?.codec_name, 'mp3');
    assert.equal(audioOf(info)?.sample_rate, source.sample_rate);
    assert.ok(Math.abs(durationOf(info) - 5) < 0.2, `duration ${durationOf(info)}`);
  });

  for (const format of ['mp3', 'aac', 'm4a', 'ogg', 'flac', 'opus']) {
    it(`writes ${format}`, async () => {
      const urls = ['tone-1s-22k-mono.wav', 'tone-2s-48k-stereo.aac'].map((n) => files.url(`/f/${n}`));
      const res = await server.post('/merge-audios/', { audio_urls: urls.join(','), format });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.ok(res.body.output_file!.endsWith(`/merged_output.${format}`));
      const info = await probe(server.pathOf(res.body.output_file!));
      const codec = { mp3: 'mp3', aac: 'aac', m4a: 'aac', ogg: 'vorbis', flac: 'flac', opus: 'opus' }[format];
      assert.equal(audioOf(info)?.codec_name, codec);
      assert.ok(Math.abs(durationOf(info) - 3) < 0.2, `duration ${durationOf(info)}`);
    });
  }

  it('answers the interface errors: unsupported format, fewer than two URLs, a failed download', async () => {
    const one = files.url('/f/tone-2s-44k-stereo.mp3');
    let res = await server.post('/merge-audios/', { audio_urls: `${one},${one}`, format: 'xyz' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'xyz'. Supported formats: mp3, wav, aac, m4a, ogg, flac, opus.");
    res = await server.post('/merge-audios/', { audio_urls: one });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'At least two audio URLs are required');
    const missing = files.url('/f/missing.mp3');
    res = await server.post('/merge-audios/', { audio_urls: `${one},${missing}` });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    res = await server.post('/merge-audios/', { audio_urls: `${one},${files.url('/f/landscape-1920x1080.jpg')}` });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not an audio file/);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs from the CLI with local paths and URLs, printing the same JSON', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
    try {
      const local = await fixture('tone-1s-22k-mono.wav');
      const result = await runCli([
        'merge-audios',
        '--audio-urls',
        `${local},${files.url('/f/tone-2s-44k-stereo.mp3')}`,
        '--format',
        'flac',
        '--out-dir',
        out,
      ]);
      assert.equal(result.exitCode, 0, result.stderr);
      const body = JSON.parse(result.stdout) as Record<string, string>;
      assert.equal(body.message, 'Audios merged successfully');
      assert.ok(body.output_file!.startsWith(out) && body.output_file!.endsWith('/merged_output.flac'));
      const info = await probe(body.output_file!);
      assert.equal(audioOf(info)?.codec_name, 'flac');
      assert.ok(Math.abs(durationOf(info) - 3) < 0.2);
      const bad = await runCli(['merge-audios', '--audio-urls', local, '--out-dir', out]);
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /At least two audio URLs are required/);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
