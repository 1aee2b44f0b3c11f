import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { audioOf, durationOf, probe, videoOf } from './helpers/media.js';
import { runCli } from './helpers/mediaflow.js';

describe('mediaflow quickstart', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-quickstart-'));
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  it(
    'makes sample media, runs all ten operations on it without a network, ' + 'and prints where each result is',
    async () => {
      const outDir = path.join(tmp, 'first-try');
      // Private addresses refused, as by default: every input is a local file made on the spot.
      const run = await runCli(['quickstart', '--out-dir', outDir], { env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' } });
      assert.equal(run.exitCode, 0, run.stderr);
      const results = new Map(
        run.stdout.split('\n').flatMap((line) => {
          const [, operation, file] = /^([a-z_-]+)\s+(\/\S+)$/.exec(line) ?? [];
          return operation && file ? [[operation, file] as const] : [];
        }),
      );
      assert.match(run.stdout, new RegExp(`^samples: ${path.join(outDir, 'samples')}$`, 'm'));
      assert.deepEqual([...results.keys()].sort(), [
        'add-subtitles',
        'convert-video',
        'convert_image_from_url',
        'crop_image_to_short',
        'generate-subtitles',
        'images-to-video',
        'merge-audio-video',
        'merge-audios',
        'merge-videos',
        'resize_image',
      ]);
      for (const file of results.values())
        assert.ok(file.startsWith(path.join(outDir, 'results')) && existsSync(file), file);

      assert.match(
        await readFile(results.get('generate-subtitles')!, 'utf8'),
        /^1\r?\n00:00:00,000 --> 00:00:01,000\r?\nMade on this machine\./,
      );
      const burned = await probe(results.get('add-subtitles')!);
      assert.equal(videoOf(burned)?.codec_name, 'h264');
      assert.ok(Math.abs(durationOf(burned) - 3) < 0.2, `3 s clip, got ${durationOf(burned)}`);
      const merged = await probe(results.get('merge-audios')!);
      assert.equal(audioOf(merged)?.codec_name, 'mp3');
      assert.ok(Math.abs(durationOf(merged) - 5) < 0.2, `3 s + 2 s, got ${durationOf(merged)}`);
      const resized = videoOf(await probe(results.get('resize_image')!));
      assert.deepEqual([resized?.width, resized?.height], [320, 180]);
      assert.equal(videoOf(await probe(results.get('convert-video')!))?.codec_name, 'vp9');
    },
  );

  it('an out-dir that is a file is a usage error (exit 2) that says so', async () => {
    const file = path.join(import.meta.dirname, 'quickstart.test.ts');
    const run = await runCli(['quickstart', '--out-dir', file]);
    assert.equal(run.exitCode, 2, run.stderr);
    assert.equal(run.stderr, `mediaflow: Cannot write to --out-dir ${file}: it is a file, not a folder`);
  });
});
