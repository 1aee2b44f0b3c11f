import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { audioOf, durationOf, probe, videoOf } from './helpers/media.js';
import { runCli, startMediaflow } from './helpers/mediaflow.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The README's first request: its curl command, and the answer it shows. */
async function readmeFirstRequest(): Promise<{ command: string; answer: Record<string, string> }> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const step = readme.slice(readme.indexOf('**3. A first request.**'));
  const command = /^curl .*$/m.exec(step)?.[0];
  const answer = /```json\n(.*)\n```/.exec(step)?.[1];
  assert.ok(command && answer, "the README's step 3 has a curl command and its answer");
  return { command, answer: JSON.parse(answer) as Record<string, string> };
}

describe('mediaflow quickstart', () => {
  let tmp: string;
  // As `npm run quickstart` makes it in the repository's folder: the README's requests name its samples from there.
  let outDir: string;
  let run: Awaited<ReturnType<typeof runCli>>;
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-quickstart-'));
    outDir = path.join(tmp, 'mediaflow-quickstart');
    // Private addresses refused, as by default: every input is a local file made on the spot.
    run = await runCli(['quickstart', '--out-dir', outDir], { env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' } });
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  it(
    'makes sample media, runs all ten operations on it without a network, ' + 'and prints where each result is',
    async () => {
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

  it("answers the README's first request: its curl command's fields, the quickstart's sample as the file", async () => {
    assert.equal(run.exitCode, 0, run.stderr);
    const { command, answer } = await readmeFirstRequest();
    // Plain words only, so that splitting at spaces is what the shell does.
    assert.doesNotMatch(command, /["'\\$]/, command);
    const [, ...words] = command.split(' ');
    const url = words.pop()!;
    assert.match(url, /^http:\/\/127\.0\.0\.1:8000\//, 'the server of `npm start`');
    const form = new FormData();
    for (const [at, word] of words.entries()) {
      if (word !== '-F') {
        assert.ok(word === '-s' || words[at - 1] === '-F', `curl option ${word}`);
        continue;
      }
      const [name, value] = words[at + 1]!.split(/=(.*)/s) as [string, string];
      if (!value.startsWith('@')) form.append(name, value);
      else {
        // Relative to the folder `npm run quickstart` ran in, here `tmp`.
        const file = path.join(tmp, value.slice(1));
        form.append(name, new Blob([await readFile(file)]), path.basename(file));
      }
    }
    const server = await startMediaflow({ MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' });
    try {
      const res = await fetch(url.replace('http://127.0.0.1:8000', server.base), { method: 'POST', body: form });
      const body = (await res.json()) as Record<string, string>;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.message, answer.message);
      const [field] = Object.keys(answer).filter((key) => key !== 'message');
      assert.ok(body[field!]?.startsWith(`${server.base}/uploads/`), JSON.stringify(body));
      // The result as a user gets it: over HTTP from its URL.
      const download = await fetch(body[field!]!);
      assert.equal(download.status, 200);
      const saved = path.join(tmp, path.basename(new URL(body[field!]!).pathname));
      await writeFile(saved, Buffer.from(await download.arrayBuffer()));
      const result = await probe(saved);
      assert.equal(path.extname(saved), `.${String(form.get('format'))}`);
      assert.ok(videoOf(result) && audioOf(result), 'picture and sound');
      assert.ok(Math.abs(durationOf(result) - 3) < 0.2, `the 3 s sample clip, got ${durationOf(result)}`);
    } finally {
      await server.close();
    }
  });

  it('an out-dir that is a file is a usage error (exit 2) that says so', async () => {
    const file = path.join(import.meta.dirname, 'quickstart.test.ts');
    const run = await runCli(['quickstart', '--out-dir', file]);
    assert.equal(run.exitCode, 2, run.stderr);
    assert.equal(run.stderr, `mediaflow: Cannot write to --out-dir ${file}: it is a file, not a folder`);
  });
});
