import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * mediaflow as `npm pack` packs it, which is what a plugin author installs (docs/plugins.md): the built dist/ is in it,
 * though git ignores dist/, and what it needs runs from the unpacked package alone. The package is unpacked into a
 * folder inside this checkout, so that its dependencies resolve from the checkout's node_modules as they would from a
 * project's, while its own files resolve from the package and not from this checkout.
 */
describe('the package npm packs', () => {
  let scratch: string;
  let installed: string;
  let files: string[];

  before(async () => {
    await mkdir(path.join(ROOT, 'node_modules/.cache'), { recursive: true });
    scratch = await mkdtemp(path.join(ROOT, 'node_modules/.cache/mediaflow-packed-'));
    // dist/ as `npm test` built it; offline, and without npm's check for a newer npm: no packet leaves the machine.
    const packed = await execa(
      'npm',
      ['pack', '--ignore-scripts', '--offline', '--json', '--pack-destination', scratch],
      { cwd: ROOT, env: { npm_config_update_notifier: 'false' } },
    );
    const [manifest] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    files = manifest!.files.map((file) => file.path);
    installed = path.join(scratch, 'node_modules/mediaflow');
    await mkdir(installed, { recursive: true });
    await execa('tar', ['-xzf', path.join(scratch, manifest!.filename), '-C', installed, '--strip-components=1']);
  }, 60_000);
  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('holds the built entry, its types, the CLI, pipelines and templates, and no sources or tests', () => {
    for (const needed of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/mediaflow.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/vendor/typebox.js',
      'dist/cli/main.js',
    ])
      assert.ok(files.includes(needed), `the package holds ${needed}`);
    assert.ok(files.some((file) => file.startsWith('pipelines/') && file.endsWith('.yaml')));
    assert.ok(files.some((file) => file.startsWith('templates/')));
    const strays = files.filter((file) => /^(src|test|bench|scripts|examples|integrations|studio)\//.test(file));
    assert.deepEqual(strays, []);
  });

  it("gives a plugin the SDK from its own dist/, with TypeBox's builder", async () => {
    const plugin = path.join(scratch, 'plugin.mjs');
    await writeFile(
      plugin,
      `import { CONTRACT_VERSION, Optional, Param, Type } from 'mediaflow';
const params = Type.Object({ at: Optional(Param.time({ description: 'when' })) });
const required = params.required ?? [];
console.log(JSON.stringify({ entry: import.meta.resolve('mediaflow'), CONTRACT_VERSION, required }));`,
    );
    const run = await execa(process.execPath, [plugin], { cwd: scratch, reject: false });
    assert.equal(run.exitCode, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as { entry: string; CONTRACT_VERSION: number; required: string[] };
    assert.equal(answer.entry, pathToFileURL(path.join(installed, 'dist/index.js')).href);
    assert.equal(answer.CONTRACT_VERSION, 1);
    assert.deepEqual(answer.required, []);
  });

  it("runs an operation from the package's own CLI", async () => {
    const clip = await fixture('clip-2s-640x360-25fps.mp4');
    const run = await execa(
      process.execPath,
      [path.join(installed, 'bin/mediaflow.js'), 'media-metadata', '--media-url', clip, '--out-dir', scratch],
      { cwd: scratch, reject: false, env: { MEDIAFLOW_DATA_DIR: path.join(scratch, 'data') } },
    );
    assert.equal(run.exitCode, 0, run.stderr);
    const { metadata } = JSON.parse(run.stdout) as { metadata: { duration: number } };
    assert.equal(metadata.duration, 2);
  });
});
