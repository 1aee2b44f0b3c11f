import assert from 'node:assert/strict';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import { audioOf, durationOf, probe } from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';

describe('merge-audios', () => {
  const op = useOperation({
    fixtures: [
      'tone-2s-44k-stereo.mp3',
      'tone-3s-44k-stereo.mp3',
      'tone-1s-22k-mono.wav',
      'tone-1s-48k-stereo.m4a',
      'tone-2s-48k-stereo.aac',
    ],
  });

  it('joins inputs of different formats, rates and channel counts; duration is the sum', async () => {
    const urls = ['tone-2s-44k-stereo.mp3', 'tone-1s-22k-mono.wav', 'tone-1s-48k-stereo.m4a'].map((n) =>
      op.files.url(`/f/${n}`),
    );
    const { file } = await op.expectOutput(
      '/merge-audios/',
      { audio_urls: urls.join(', '), format: 'wav' },
      { message: 'Audios merged successfully', name: `${UUID}/merged_output\\.wav` },
    );
    const info = await probe(file);
    assert.equal(audioOf(info)?.codec_name, 'pcm_s16le');
    assert.equal(audioOf(info)?.channels, 2);
    assert.ok(Math.abs(durationOf(info) - 4) < 0.15, `duration ${durationOf(info)}`);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('joins inputs that already are the output codec by stream copy, keeping their parameters', async () => {
    const urls = ['tone-2s-44k-stereo.mp3', 'tone-3s-44k-stereo.mp3'].map((n) => op.files.url(`/f/${n}`));
    const res = await op.server.post('/merge-audios', { audio_urls: urls.join(',') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const info = await probe(op.server.pathOf(res.body.output_file!));
    const source = audioOf(await probe(await fixture('tone-2s-44k-stereo.mp3')))!;
    assert.equal(audioOf(info)?.codec_name, 'mp3');
    assert.equal(audioOf(info)?.sample_rate, source.sample_rate);
    assert.ok(Math.abs(durationOf(info) - 5) < 0.2, `duration ${durationOf(info)}`);
  });

  for (const format of ['mp3', 'aac', 'm4a', 'ogg', 'flac', 'opus']) {
    it(`writes ${format}`, async () => {
      const urls = ['tone-1s-22k-mono.wav', 'tone-2s-48k-stereo.aac'].map((n) => op.files.url(`/f/${n}`));
      const res = await op.server.post('/merge-audios/', { audio_urls: urls.join(','), format });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.ok(res.body.output_file!.endsWith(`/merged_output.${format}`));
      const info = await probe(op.server.pathOf(res.body.output_file!));
      const codec = { mp3: 'mp3', aac: 'aac', m4a: 'aac', ogg: 'vorbis', flac: 'flac', opus: 'opus' }[format];
      assert.equal(audioOf(info)?.codec_name, codec);
      assert.ok(Math.abs(durationOf(info) - 3) < 0.2, `duration ${durationOf(info)}`);
    });
  }

  it('answers the interface errors: unsupported format, fewer than two URLs, a failed download', async () => {
    const one = op.files.url('/f/tone-2s-44k-stereo.mp3');
    let res = await op.server.post('/merge-audios/', { audio_urls: `${one},${one}`, format: 'xyz' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'xyz'. Supported formats: mp3, wav, aac, m4a, ogg, flac, opus.");
    res = await op.server.post('/merge-audios/', { audio_urls: one });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'At least two audio URLs are required');
    const missing = op.files.url('/f/missing.mp3');
    res = await op.server.post('/merge-audios/', { audio_urls: `${one},${missing}` });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    res = await op.server.post('/merge-audios/', {
      audio_urls: `${one},${op.files.url('/f/landscape-1920x1080.jpg')}`,
    });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not an audio file/);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('runs from the CLI with local paths and URLs, printing the same JSON', async () => {
    const local = await fixture('tone-1s-22k-mono.wav');
    await assertCliParity({
      args: [
        'merge-audios',
        '--audio-urls',
        `${local},${op.files.url('/f/tone-2s-44k-stereo.mp3')}`,
        '--format',
        'flac',
      ],
      message: 'Audios merged successfully',
      output: /\/merged_output\.flac$/,
      check: async (file) => {
        const info = await probe(file);
        assert.equal(audioOf(info)?.codec_name, 'flac');
        assert.ok(Math.abs(durationOf(info) - 3) < 0.2);
      },
      refused: { args: ['merge-audios', '--audio-urls', local], stderr: /At least two audio URLs are required/ },
    });
  });
});
