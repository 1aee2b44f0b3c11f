import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import { runCli } from './helpers/mediaflow.js';
import { startServeProcess } from './helpers/serve-process.js';
import { dashed } from '../src/engine/plugins/reserved.js';
import { BUILTIN_NAMES, loadBuiltins } from '../src/plugins/builtins.js';

/**
 * What a command loads is what it costs to start (docs/performance.md, "Start-up"): each front end's packages load
 * where they are needed, never for `--version`, `--help` or an operation run from the command line. Asserted on the
 * modules the real CLI loads (test/helpers/loaded-modules.mjs lists them), not on timings.
 */
const FRONT_ENDS_ONLY = [
  'fastify',
  '@fastify',
  '@aws-sdk',
  'bullmq',
  'ioredis',
  '@bull-board',
  '@modelcontextprotocol',
];
/** Loaded only by an operation's run: the plugin registry that `--help` and `--version` build has no use for them. */
const RUN_ONLY = ['sharp', 'execa', '@fugood', '@napi-rs'];
/** Loaded by a run only for a subtitle input, to tell its encoding. */
const SUBTITLE_ONLY = ['chardet', 'iconv-lite'];

const LOADED_MODULES = pathToFileURL(path.resolve(import.meta.dirname, 'helpers/loaded-modules.mjs')).href;
const PLUGIN = path.resolve(import.meta.dirname, 'fixtures/plugins/echo.js');

/** The package a module URL belongs to (`@scope/name` or `name`), or undefined for one of mediaflow's own. */
function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const [first, second] = url.slice(at + '/node_modules/'.length).split('/');
  return first!.startsWith('@') ? `${first}/${second}` : first;
}

describe('what the CLI loads', () => {
  let tmp: string;
  let runs = 0;

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-startup-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** The environment that has a child list the modules it loads, and where it writes them. */
  function listing() {
    const list = path.join(tmp, `loaded-${++runs}.txt`);
    const env = { NODE_OPTIONS: `--import=${LOADED_MODULES}`, MEDIAFLOW_TEST_LOADED_MODULES: list };
    const loaded = async () => {
      const urls = (await readFile(list, 'utf8')).split('\n').filter(Boolean);
      return { urls, packages: new Set(urls.map(packageOf).filter((name): name is string => name !== undefined)) };
    };
    return { env, loaded };
  }

  /** Runs the CLI, and answers its output with the modules it loaded (file URLs) and their packages. */
  async function loading(args: string[]) {
    const { env, loaded } = listing();
    const result = await runCli(args, { cwd: tmp, env });
    return { ...result, ...(await loaded()) };
  }

  /** The packages of `packages` that belong to one of `families` (a name or a scope). */
  const among = (packages: Set<string>, families: readonly string[]) =>
    [...packages].filter((name) => families.some((family) => name === family || name.startsWith(`${family}/`)));

  it('a bare `--version` loads no operation and no front end, and runs its two probes without execa', async () => {
    const { exitCode, stdout, urls, packages } = await loading(['--version']);
    assert.equal(exitCode, 0);
    assert.match(stdout, /^mediaflow \d+\.\d+\.\d+\nffmpeg version .*\nffprobe version /);
    // The list is whole: the versions module is in it, and neither the CLI's program nor a plugin's schemas.
    assert.ok(urls.some((url) => url.endsWith('/dist/cli/versions.js')));
    assert.ok(!urls.some((url) => url.endsWith('/dist/cli/main.js') || url.includes('/dist/plugins/')));
    assert.ok(!packages.has('@sinclair/typebox') && !packages.has('commander'));
    assert.deepEqual(among(packages, [...FRONT_ENDS_ONLY, ...RUN_ONLY]), []);
  });

  it('`--help` of the program, an operation and `serve` loads no front end and nothing an operation runs', async () => {
    for (const args of [['--help'], ['trim-media', '--help'], ['serve', '--help']]) {
      const { exitCode, stdout, packages } = await loading(args);
      assert.equal(exitCode, 0, args.join(' '));
      assert.match(stdout, /^Usage: mediaflow /, args.join(' '));
      assert.deepEqual(among(packages, [...FRONT_ENDS_ONLY, ...RUN_ONLY]), [], args.join(' '));
    }
  });

  it('an operation run from the command line (a metadata read of a local file) loads no front end', async () => {
    const clip = await fixture('clip-2s-640x360-25fps.mp4');
    const { exitCode, stdout, stderr, urls, packages } = await loading([
      'media-metadata',
      '--media-url',
      clip,
      '--out-dir',
      tmp,
    ]);
    assert.equal(exitCode, 0, stderr);
    const { metadata } = JSON.parse(stdout) as { metadata: { duration: number; streams: unknown[] } };
    assert.equal(metadata.duration, 2);
    assert.equal(metadata.streams.length, 2);
    // The engine and the runtime did load: ES modules (p-queue) and CommonJS ones (tsyringe) are both seen.
    assert.ok(urls.some((url) => url.endsWith('/dist/engine/run/engine.js')));
    assert.ok(packages.has('p-queue') && packages.has('tsyringe'));
    assert.deepEqual(among(packages, FRONT_ENDS_ONLY), []);
    // MP4 headers are read in process: neither libvips nor a whisper binding has anything to do here.
    assert.deepEqual(among(packages, ['sharp', '@fugood', '@napi-rs', ...SUBTITLE_ONLY]), []);
    // Of the operations, its own module alone (the others' load for help and for the server).
    const operations = urls.filter(
      (url) => url.includes('/dist/plugins/') && !url.endsWith('/dist/plugins/builtins.js'),
    );
    assert.deepEqual(
      operations.map((url) => url.slice(url.indexOf('/dist/'))),
      ['/dist/plugins/media-metadata.js'],
    );
    // Its parameters' schemas come from TypeBox in one file (scripts/one-file-package.js), not its 200 modules.
    assert.ok(urls.some((url) => url.endsWith('/dist/vendor/typebox.js')));
    assert.ok(!packages.has('@sinclair/typebox'));
  });

  it("a run with a third-party plugin loads every operation, to check the plugin's name against them", async () => {
    const clip = await fixture('clip-2s-640x360-25fps.mp4');
    const duplicate = path.resolve(import.meta.dirname, 'fixtures/plugins/duplicate-name.js');
    const { exitCode, stderr, urls } = await loading([
      'media-metadata',
      ...['--plugin', duplicate, '--media-url', clip, '--out-dir', tmp],
    ]);
    assert.equal(exitCode, 1);
    assert.match(
      stderr,
      /^mediaflow: Plugin 'resize_image' .* the name is already taken by 'resize_image' \(built-in\)$/m,
    );
    assert.ok(urls.some((url) => url.endsWith('/dist/plugins/render/index.js')));
  });

  it('each built-in operation is listed under its command name, by which a run loads it alone', async () => {
    const plugins = await loadBuiltins();
    assert.deepEqual(
      plugins.map((plugin) => dashed(plugin.name)),
      BUILTIN_NAMES,
    );
  });

  it("a plugin that imports the package's entry (`mediaflow`) for the SDK loads no front end with it", async () => {
    const { exitCode, stdout, urls, packages } = await loading(['--plugin', PLUGIN, '--version']);
    assert.equal(exitCode, 0);
    assert.match(stdout, /^mediaflow /);
    assert.ok(urls.some((url) => url.endsWith('/dist/index.js')));
    assert.deepEqual(among(packages, [...FRONT_ENDS_ONLY, ...RUN_ONLY]), []);
  });

  it('`serve` loads Fastify and the MCP SDK, but without Redis or a bucket no BullMQ, ioredis or AWS SDK', async () => {
    const { env, loaded } = listing();
    const dataDir = path.join(tmp, 'serve-data');
    const serve = await startServeProcess(dataDir, env);
    assert.equal((await fetch(`${serve.base}/health`)).status, 200);
    serve.child.kill('SIGTERM');
    assert.equal((await serve.child).exitCode, 0, serve.output());
    const { packages } = await loaded();
    // The list sees a front end's packages when they load: the server's own are there.
    assert.deepEqual(among(packages, ['fastify', '@modelcontextprotocol']), ['fastify', '@modelcontextprotocol/sdk']);
    assert.deepEqual(among(packages, ['@aws-sdk', 'bullmq', 'ioredis', '@bull-board', 'sharp']), []);
  });
});
