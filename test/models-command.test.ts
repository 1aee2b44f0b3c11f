import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startFileServer, serveFile, type FileServer } from './helpers/file-server.js';
import { runCli } from './helpers/mediaflow.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useScratch } from './helpers/scratch.js';
import { writeScriptedModel } from './helpers/whisper-model.js';

/**
 * `mediaflow models`, run as a user runs it (the built CLI). The published models cannot be downloaded here, so
 * `fetch` is shown refusing a generated model served in tiny.en's place from 127.0.0.1: not the published file.
 */
const scratch = useScratch('mediaflow-models-cli-');
let model: string;
let sha256: string;
let size: number;
let server: FileServer;

before(async () => {
  model = path.join(scratch.dir, 'scripted.bin');
  await writeScriptedModel(model, { segments: [{ start: 0, end: 2, text: 'Hello world.' }] });
  const bytes = await readFile(model);
  size = bytes.length;
  sha256 = createHash('sha256').update(bytes).digest('hex');
  server = await startFileServer({ '/models/ggml-tiny.en.bin': serveFile(model) });
});

after(async () => {
  await server?.close();
});

/** A fresh data directory, with `ggml-tiny.en.bin` holding `planted` when given. */
async function dataDir(planted?: string): Promise<string> {
  const dir = await mkdtemp(path.join(scratch.dir, 'data-'));
  if (planted !== undefined) {
    await mkdir(path.join(dir, 'models'));
    await writeFile(path.join(dir, 'models', 'ggml-tiny.en.bin'), planted);
  }
  return dir;
}

describe('mediaflow models', () => {
  it('lists the known models: size, languages, whether fetched, path', async () => {
    const dir = await dataDir('a file');
    const run = await runCli(['models'], { env: { MEDIAFLOW_DATA_DIR: dir } });
    assert.equal(run.exitCode, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAME +SIZE +LANGUAGES +PRESENT +PATH$/);
    const row = (name: string) => lines.find((line) => line.startsWith(`${name} `))?.split(/ {2,}/);
    assert.deepEqual(row('tiny.en'), [
      'tiny.en',
      '74.1 MiB',
      'English',
      'yes',
      path.join(dir, 'models/ggml-tiny.en.bin'),
    ]);
    assert.deepEqual(row('large-v3'), [
      'large-v3',
      '2.88 GiB',
      'multilingual',
      'no',
      path.join(dir, 'models/ggml-large-v3.bin'),
    ]);
    const json = await runCli(['models', 'list', '--json', '--data-dir', dir]);
    const listed = JSON.parse(json.stdout) as Array<{ name: string; bytes: number; sha256: string; present: boolean }>;
    assert.deepEqual(
      listed.find((entry) => entry.name === 'base.en'),
      {
        name: 'base.en',
        bytes: 147_964_211,
        sha256: 'a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002',
        path: path.join(dir, 'models/ggml-base.en.bin'),
        present: false,
      },
    );
  });

  it('verify checks a model file: whole, and which known model it is', async () => {
    const run = await runCli(['models', 'verify', model]);
    assert.equal(run.exitCode, 0, run.stderr);
    assert.equal(run.stdout, `${model}: OK (a ggml model, not one of the known models), SHA-256 ${sha256}`);
    const cut = path.join(scratch.dir, 'cut.bin');
    await copyFile(model, cut);
    await truncate(cut, size - 1);
    const short = await runCli(['models', 'verify', cut]);
    assert.equal(short.exitCode, 1);
    assert.match(
      short.stderr,
      /^mediaflow: .*cut\.bin is cut short: it ends at byte \d+, inside its tensor 50 of 50$/m,
    );
  });

  it('verify checks a fetched name against its published SHA-256', async () => {
    const dir = await dataDir('not tiny.en');
    const run = await runCli(['models', 'verify', 'tiny.en', '--data-dir', dir]);
    assert.equal(run.exitCode, 1);
    assert.match(
      run.stderr,
      /^mediaflow: .*ggml-tiny\.en\.bin is not the published ggml-tiny\.en\.bin: its SHA-256 is [0-9a-f]{64}, not 921e4cf8/m,
    );
    // Every fetched model when none is named.
    const all = await runCli(['models', 'verify', '--data-dir', dir]);
    assert.equal(all.exitCode, 1);
    const missing = await runCli(['models', 'verify', 'base', '--data-dir', dir]);
    assert.equal(missing.exitCode, 2);
    assert.match(
      missing.stderr,
      /Model base is not fetched \(no .*ggml-base\.bin\): run `mediaflow models fetch base`/,
    );
  });

  it('fetch refuses a file that is not the published one, leaving nothing behind', async () => {
    const dir = await dataDir('an old, wrong file');
    const url = server.url('/models');
    const run = await runCli(['models', 'fetch', 'tiny.en'], {
      env: { MEDIAFLOW_DATA_DIR: dir, MEDIAFLOW_WHISPER_MODEL_URL: url },
    });
    assert.equal(run.exitCode, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /ggml-tiny\.en\.bin is not the published ggml-tiny\.en\.bin: .*: fetching it again$/m);
    assert.match(
      run.stderr,
      new RegExp(`^mediaflow: fetching tiny\\.en \\(74\\.1 MiB\\) from ${url}/ggml-tiny\\.en\\.bin$`, 'm'),
    );
    assert.match(
      run.stderr,
      new RegExp(
        `^mediaflow: Failed to download ${url}/ggml-tiny\\.en\\.bin: it sent ${size} bytes, not the 77704715 `,
        'm',
      ),
    );
    assert.deepEqual(await readdir(path.join(dir, 'models')), []);
    assert.equal(server.hits.get('/models/ggml-tiny.en.bin'), 1);

    const refused = await runCli(['models', 'fetch', 'tiny.en', '--data-dir', dir, '--whisper-model-url', url], {
      env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' },
    });
    assert.equal(refused.exitCode, 2);
    assert.match(
      refused.stderr,
      /is not allowed: it resolves to a loopback address \(127\.0\.0\.1\)\n.*--allow-private-urls/,
    );
    assert.equal(server.hits.get('/models/ggml-tiny.en.bin'), 1);

    const unknown = await runCli(['models', 'fetch', 'huge', '--data-dir', dir]);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /^mediaflow: 'huge' is not a known model name: see `mediaflow models`$/m);
  });
});
