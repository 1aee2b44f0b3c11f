/**
 * The n8n node in the real n8n 1.123.0, the whole application: the package packed from integrations/n8n and
 * installed the way that keeps its published type (`n8n-nodes-mediaflow.mediaflow`, in
 * `$N8N_USER_FOLDER/.n8n/nodes`, where Community Nodes puts it), then a workflow imported with its credential
 * and run by `n8n execute` against a real `mediaflow serve` with an API key. The workflow reads two files from
 * disk, gathers them on one item with the Code node of the node's README, merges them in Mediaflow (a list field
 * fed from two binaries), writes the result to disk and reads its metadata through a second Mediaflow node.
 *
 * Not part of `npm test`: n8n takes minutes to install. `npm run test:n8n-app` (scripts/n8n-app.ts) installs it
 * into a cache folder when missing and runs this file in a network namespace with nothing but loopback, so
 * nothing n8n or npm tries can send a packet out.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { IRun } from 'n8n-workflow';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture } from '../helpers/fixtures.js';
import { audioOf, durationOf, pcm, probe, toneLevel } from '../helpers/media.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const APP_DIR = process.env.MEDIAFLOW_N8N_APP_DIR;
const API_KEY = 'n8n-app-test-key';
const README = path.join(ROOT, 'integrations/n8n/README.md');
/** The two input files: a tone of each frequency, of different lengths, to tell them apart in the result. */
const TONES: Record<string, { fixture: string; hz: number; seconds: number }> = {
  'first.mp3': { fixture: 'tone-2s-44k-stereo.mp3', hz: 440, seconds: 2 },
  'second.mp3': { fixture: 'tone-3s-44k-stereo.mp3', hz: 550, seconds: 3 },
};

/** n8n with everything that would call n8n's servers off, listening on loopback only. */
const N8N_SETTINGS = {
  N8N_DIAGNOSTICS_ENABLED: 'false',
  N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
  N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
  N8N_TEMPLATES_ENABLED: 'false',
  N8N_PERSONALIZATION_ENABLED: 'false',
  N8N_DYNAMIC_BANNERS_ENABLED: 'false',
  N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
  N8N_VERIFIED_PACKAGES_ENABLED: 'false',
  N8N_AI_ENABLED: 'false',
  N8N_LISTEN_ADDRESS: '127.0.0.1',
  N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
  N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
};

/** Stops unless this process is in a network namespace of its own with nothing but loopback, then brings lo up. */
function assertIsolated(): void {
  const run = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });
  const links = run('-o', 'link', 'show')
    .trim()
    .split('\n')
    .map((line) => line.split(':')[1]?.trim().split('@')[0]);
  if (links.length !== 1 || links[0] !== 'lo' || run('route', 'show', 'default').trim() !== '') {
    throw new Error(`not in an isolated network namespace (${links.join(', ')}): run npm run test:n8n-app`);
  }
  run('link', 'set', 'lo', 'up');
}

/** The Code node of the README's "A list field fed from several binary files", run as the README shows it. */
async function readmeCodeNode(): Promise<string> {
  const text = await readFile(README, 'utf8');
  const code = /## A list field fed from several binary files[\s\S]*?```js\n([\s\S]*?)```/.exec(text)?.[1];
  assert.ok(code, 'the README shows the Code node');
  return code;
}

/** Read two files → gather them (Code) → Merge Audios (Mediaflow) → write the result, and read its metadata. */
function workflow(inputs: string, output: string, jsCode: string, credential: { id: string; name: string }) {
  const mediaflow = 'n8n-nodes-mediaflow.mediaflow';
  const credentials = { mediaflowApi: credential };
  const node = (name: string, type: string, typeVersion: number, parameters: object, x: number, y = 0) => ({
    id: `node-${x}-${y}`,
    name,
    type,
    typeVersion,
    position: [x, y],
    parameters,
    ...(type === mediaflow ? { credentials } : {}),
  });
  const to = (...names: string[]) => ({ main: [names.map((name) => ({ node: name, type: 'main', index: 0 }))] });
  return {
    id: 'mediaflowE2eWf01',
    name: 'mediaflow in n8n',
    active: false,
    versionId: '7d0f3b52-51f1-4cf4-9a3e-2b0e1f6c9a41',
    settings: {},
    nodes: [
      node('Start', 'n8n-nodes-base.manualTrigger', 1, {}, 0),
      node('Read Files', 'n8n-nodes-base.readWriteFile', 1, { fileSelector: `${inputs}/*.mp3`, options: {} }, 200),
      node('Gather Files', 'n8n-nodes-base.code', 2, { jsCode }, 400),
      node(
        'Merge Audios',
        mediaflow,
        1,
        {
          operation: 'merge-audios',
          merge_audios__audio_urls__source: 'binary',
          merge_audios__audio_urls__binary: '={{ $json.files }}',
          merge_audios__more: { format: 'wav' },
          downloadResult: true,
        },
        600,
      ),
      node('Write File', 'n8n-nodes-base.readWriteFile', 1, { operation: 'write', fileName: output, options: {} }, 800),
      node(
        'Read Metadata',
        mediaflow,
        1,
        { operation: 'media-metadata', media_metadata__media_url: '={{ $json.output_file }}' },
        800,
        200,
      ),
    ],
    connections: {
      Start: to('Read Files'),
      'Read Files': to('Gather Files'),
      'Gather Files': to('Merge Audios'),
      'Merge Audios': to('Write File', 'Read Metadata'),
    },
  };
}

describe('the n8n node in the real n8n 1.123.0', () => {
  let scratch: string;
  let server: ServeProcess;
  let run: IRun;
  let output: string;

  /** The n8n command line, on this test's user folder, its output written to `stdout` when named. */
  const n8n = (args: string[], stdout?: string) =>
    execa('node', [path.join(APP_DIR!, 'node_modules/n8n/bin/n8n'), ...args], {
      env: { ...N8N_SETTINGS, N8N_USER_FOLDER: path.join(scratch, 'user') },
      reject: false,
      all: true,
      ...(stdout ? { stdout: { file: stdout } } : {}),
    });

  /** The items a node output in the run. */
  const itemsOf = (name: string) => {
    const data = run.data.resultData.runData[name]?.[0]?.data?.main?.[0];
    assert.ok(data, `${name} ran and output items`);
    return data;
  };

  before(async () => {
    assert.ok(APP_DIR, 'MEDIAFLOW_N8N_APP_DIR names the n8n install: run npm run test:n8n-app');
    assertIsolated();
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-n8n-app-'));
    const inputs = path.join(scratch, 'in');
    await mkdir(inputs);
    await mkdir(path.join(scratch, 'out'));
    for (const [name, tone] of Object.entries(TONES))
      await copyFile(await fixture(tone.fixture), path.join(inputs, name));

    // The install of the README: the package packed, then npm-installed in an npm project in ~/.n8n/nodes
    // (offline: this namespace reaches no registry, and npm reads the optional peer's metadata from its cache).
    await execa('npm', ['pack', '-w', 'n8n-nodes-mediaflow', '--pack-destination', scratch], { cwd: ROOT });
    const tarball = (await readdir(scratch)).find((name) => name.endsWith('.tgz'))!;
    const nodes = path.join(scratch, 'user/.n8n/nodes');
    await mkdir(nodes, { recursive: true });
    await execa('npm', ['init', '-y'], { cwd: nodes });
    await execa('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(scratch, tarball)], {
      cwd: nodes,
    });

    server = await startServeProcess(path.join(scratch, 'data'), { MEDIAFLOW_API_KEY: API_KEY });
    const credential = { id: 'mediaflowCred001', name: 'mediaflow' };
    await writeFile(
      path.join(scratch, 'credentials.json'),
      JSON.stringify([{ ...credential, type: 'mediaflowApi', data: { baseUrl: server.base, apiKey: API_KEY } }]),
    );
    output = path.join(scratch, 'out/merged.wav');
    const flow = workflow(inputs, output, await readmeCodeNode(), credential);
    await writeFile(path.join(scratch, 'workflow.json'), JSON.stringify(flow));
    for (const kind of ['credentials', 'workflow']) {
      const imported = await n8n([`import:${kind}`, '--input', path.join(scratch, `${kind}.json`)]);
      assert.equal(imported.exitCode, 0, imported.all);
    }
    // The run (megabytes, with its binary data) goes to a file: n8n exits once it has written it, which cuts short
    // what a pipe had not taken yet.
    const runFile = path.join(scratch, 'run.json');
    const executed = await n8n(['execute', '--id', flow.id, '--rawOutput'], runFile);
    const text = await readFile(runFile, 'utf8');
    assert.equal(executed.exitCode, 0, `${executed.all}\n${text.slice(0, 10_000)}`);
    run = JSON.parse(text) as IRun;
  });

  after(async () => {
    server?.child.kill('SIGKILL');
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('loads the node under its published type from ~/.n8n/nodes and runs the workflow through', () => {
    assert.equal(run.data.resultData.error, undefined);
    assert.deepEqual(Object.keys(run.data.resultData.runData).sort(), [
      'Gather Files',
      'Merge Audios',
      'Read Files',
      'Read Metadata',
      'Start',
      'Write File',
    ]);
  });

  /** The files in the order Read/Write Files listed them (the folder's order, not sorted), as the Code node kept it. */
  const gatheredNames = () => Object.values(itemsOf('Gather Files')[0]!.binary!).map((binary) => binary.fileName!);

  it("gathers two files on one item with the README's Code node, for the list field", () => {
    const read = itemsOf('Read Files').map((item) => item.binary!.data!.fileName);
    assert.deepEqual([...read].sort(), Object.keys(TONES));
    const [gathered, ...others] = itemsOf('Gather Files');
    assert.deepEqual(others, []);
    assert.equal(gathered!.json.files, 'file_0,file_1');
    assert.deepEqual(gatheredNames(), read);
  });

  it('uploads both files as one list field, waits for the job and downloads the result', async () => {
    const [merged] = itemsOf('Merge Audios');
    assert.match(String(merged!.json.job_id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(merged!.json.result_urls, [merged!.json.output_file]);
    assert.equal(merged!.binary!.data!.mimeType, 'audio/wav');
    // Written to disk by n8n's Read/Write Files node from the binary the node downloaded.
    const probed = await probe(output);
    assert.equal(audioOf(probed)!.codec_name, 'pcm_s16le');
    assert.ok(Math.abs(durationOf(probed) - 5) < 0.2, `2 s and 3 s make 5 s: ${durationOf(probed)}`);
    // Joined in the item's order: the first file's tone, then the second's.
    const [first, second] = gatheredNames().map((name) => TONES[name]!);
    const head = await pcm(output, 0.5, 1);
    const tail = await pcm(output, first!.seconds + 0.5, 1);
    assert.ok(toneLevel(head, first!.hz) > 10 * toneLevel(head, second!.hz), 'the first file first');
    assert.ok(toneLevel(tail, second!.hz) > 10 * toneLevel(tail, first!.hz), 'the second file second');
  });

  it("submits jobs with the credential's API key and polls them, as the server's log shows", () => {
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { req?: { method: string; url: string }; res?: { statusCode: number } });
    const requests = lines.flatMap((line) => (line.req ? [`${line.req.method} ${line.req.url}`] : []));
    assert.ok(requests.includes('POST /merge-audios/'), requests.join('\n'));
    assert.ok(requests.includes('POST /media-metadata/'), requests.join('\n'));
    assert.ok(requests.some((request) => /^GET \/jobs\/[0-9a-f-]{36}$/.test(request)));
    // The server has an API key: an answer of 401 would mean n8n did not send the credential's.
    assert.ok(lines.every((line) => line.res?.statusCode !== 401));
  });

  it("chains a second Mediaflow node on the first one's result URL", () => {
    const [read] = itemsOf('Read Metadata');
    const metadata = read!.json.metadata as { duration: number };
    assert.ok(Math.abs(metadata.duration - 5) < 0.2, JSON.stringify(metadata));
  });
});
