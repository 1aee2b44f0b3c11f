import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { serveFile, startFileServer, type FileServer } from '../../helpers/file-server.js';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { useScratch } from '../../helpers/scratch.js';
import { runCli } from '../../helpers/mediaflow.js';
import { writeToneVoice } from '../../helpers/piper-onnx.js';

/** `mediaflow voices`, run as a user runs it (the built CLI), with a generated Piper voice served from 127.0.0.1. */
const HIDE = path.resolve(import.meta.dirname, '../../helpers/hide-packages.cjs');
const scratch = useScratch('mediaflow-voices-cli-');
let model: string;
let hashes: string;
let server: FileServer;

before(async () => {
  model = path.join(scratch.dir, 'tone.onnx');
  await writeToneVoice(model);
  const sha256 = async (file: string) =>
    createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  hashes = `${await sha256(model)}+${await sha256(`${model}.json`)}`;
  server = await startFileServer({ '/tone.onnx': serveFile(model), '/tone.onnx.json': serveFile(`${model}.json`) });
});

after(async () => {
  await server?.close();
});

describe('mediaflow voices', () => {
  it('lists the voices installed, and says why an engine cannot speak', async () => {
    const dataDir = await mkdtemp(path.join(scratch.dir, 'data-'));
    const run = await runCli(['voices'], { env: { MEDIAFLOW_DATA_DIR: dataDir } });
    assert.equal(run.exitCode, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(lines[0]!, /^ID +ENGINE +LANGUAGE$/);
    assert.ok(lines.some((line) => /^espeak:en-us +espeak +en-US$/.test(line)));
    assert.ok(lines.some((line) => /^flite:slt +flite +en-US$/.test(line)));
    assert.match(run.stderr, /mediaflow: piper: no piper model is configured \(MEDIAFLOW_TTS_MODELS/);
    const json = await runCli(['voices', 'list', '--engine', 'flite', '--json', '--data-dir', dataDir]);
    const listed = JSON.parse(json.stdout) as { engines: Array<{ engine: string }>; voices: Array<{ id: string }> };
    assert.deepEqual(
      listed.engines.map((engine) => engine.engine),
      ['piper', 'kokoro', 'espeak', 'flite'],
    );
    assert.deepEqual(listed.voices.map((voice) => voice.id).sort(), [
      'flite:awb',
      'flite:kal',
      'flite:kal16',
      'flite:rms',
      'flite:slt',
    ]);
  });

  it('fetches a model by URL, checked against its SHA-256, and verifies it', async () => {
    const dataDir = await mkdtemp(path.join(scratch.dir, 'data-'));
    const env = {
      MEDIAFLOW_DATA_DIR: dataDir,
      MEDIAFLOW_TTS_MODELS: `piper:web=${server.url('/tone.onnx')}#sha256=${hashes}`,
    };
    const fetched = await runCli(['voices', 'fetch', 'piper:web'], { env });
    assert.equal(fetched.exitCode, 0, fetched.stderr);
    const kept = path.join(dataDir, 'voices/piper/web/model.onnx');
    assert.equal(fetched.stdout, kept);
    assert.match(fetched.stderr, /fetching http:\/\/127\.0\.0\.1:\d+\/tone\.onnx\n/);
    assert.match(fetched.stderr, /piper:web \(en-US\)/);
    const listed = await runCli(['voices', 'list', '--engine', 'piper'], { env });
    assert.match(listed.stdout, /^piper:web +piper +en-US$/m);
    const verified = await runCli(['voices', 'verify'], { env });
    assert.equal(verified.exitCode, 0, verified.stderr);
    const [onnx, json] = hashes.split('+');
    assert.equal(
      verified.stdout,
      `${kept}: OK (piper:web, as MEDIAFLOW_TTS_MODELS names it), SHA-256 ${onnx}\n` +
        `${kept}.json: OK (piper:web, as MEDIAFLOW_TTS_MODELS names it), SHA-256 ${json}`,
    );
    await writeFile(kept, 'tampered');
    const tampered = await runCli(['voices', 'verify', 'piper:web'], { env });
    assert.equal(tampered.exitCode, 1);
    assert.match(tampered.stderr, /model\.onnx is not the file MEDIAFLOW_TTS_MODELS names: its SHA-256 is/);
    const unknown = await runCli(['voices', 'fetch', 'piper:other'], { env });
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /'piper:other' is not a model of MEDIAFLOW_TTS_MODELS: configured are piper:web/);
  });

  it('says what to install where sherpa-onnx is missing', async () => {
    const run = await runCli(['voices', 'list', '--engine', 'piper', '--tts-models', `piper:tone=${model}`], {
      env: {
        MEDIAFLOW_DATA_DIR: await mkdtemp(path.join(scratch.dir, 'data-')),
        NODE_OPTIONS: `--require ${HIDE}`,
        HIDE_PACKAGES: 'sherpa-onnx-node',
      },
    });
    assert.equal(run.exitCode, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'ID  ENGINE  LANGUAGE');
    assert.match(
      run.stderr,
      /piper: Piper voices are not available on this server: sherpa-onnx is not installed \(npm install sherpa-onnx-node@1\.13\.8/,
    );
  });
});
