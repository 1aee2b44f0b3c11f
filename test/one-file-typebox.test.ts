import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as typebox from '@sinclair/typebox';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { loadBuiltins } from '../src/plugins/builtins.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const ONE_FILE = path.join(ROOT, 'dist/vendor/typebox.js');

/** Runs scripts/one-file-package.js on package `name` of `dir`'s node_modules in a child: its text, or its error. */
async function oneFile(name: string, dir: string) {
  const script = `import { oneFilePackage } from ${JSON.stringify(path.join(ROOT, 'scripts/one-file-package.js'))};
process.stdout.write(oneFilePackage(process.argv[1], process.argv[2]));`;
  return execa(process.execPath, ['--input-type=module', '-e', script, name, dir], { reject: false });
}

/**
 * dist/ imports TypeBox from one file the build writes (scripts/one-file-package.js; docs/performance.md,
 * "Start-up"), while src/, the tests and the server's routes import the package: both must build the same schemas.
 */
describe('TypeBox in one file (npm run build)', () => {
  let tmp: string;

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-one-file-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('exports every name the package exports, with the same symbols', async () => {
    const oneFile = (await import(ONE_FILE)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(oneFile).sort(), Object.keys(typebox).sort());
    assert.equal(oneFile.Kind, typebox.Kind);
    assert.equal(oneFile.OptionalKind, typebox.OptionalKind);
    // dist/ imports the file and not the package: the contract's module names it.
    const contract = await readFile(path.join(ROOT, 'dist/engine/contract/plugin.js'), 'utf8');
    assert.match(contract, /from '\.\.\/\.\.\/vendor\/typebox\.js'/);
    assert.doesNotMatch(contract, /@sinclair\/typebox/);
  });

  it("builds every built-in operation's parameters as the package does", async () => {
    const fromPackage = await loadBuiltins();
    const distBuiltins = (await import(path.join(ROOT, 'dist/plugins/builtins.js'))) as {
      loadBuiltins: typeof loadBuiltins;
    };
    const fromOneFile = await distBuiltins.loadBuiltins();
    assert.equal(fromOneFile.length, fromPackage.length);
    for (const [index, plugin] of fromPackage.entries()) {
      // deepStrictEqual compares the symbol keys too (TypeBox's Kind and OptionalKind).
      assert.deepEqual(fromOneFile[index]!.params, plugin.params, plugin.name);
    }
  });

  it('runs each module once, in the order Node would, through cycles and exports named after globals', async () => {
    const pkg = path.join(tmp, 'node_modules/cyclic');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'cyclic', main: 'index.js' }));
    await writeFile(
      path.join(pkg, 'index.js'),
      `"use strict";
globalThis.cyclicRuns = (globalThis.cyclicRuns ?? 0) + 1;
exports.early = 'index';
const b = require('./lib/b');
exports.Object = Object.keys({ made: 1 });
exports.fromB = b.seen;
exports.self = this === exports;`,
    );
    await mkdir(path.join(pkg, 'lib'));
    await writeFile(path.join(pkg, 'lib/b.js'), `"use strict";\nexports.seen = require("../index").early;\n`);
    const made = await oneFile('cyclic', tmp);
    assert.equal(made.exitCode, 0, made.stderr);
    const file = path.join(tmp, 'cyclic.mjs');
    await writeFile(file, made.stdout);
    const check = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(file)}); await import(${JSON.stringify(file)});
console.log(JSON.stringify({ ...m, runs: globalThis.cyclicRuns }));`,
      ],
      { reject: false },
    );
    assert.equal(check.exitCode, 0, check.stderr);
    assert.deepEqual(JSON.parse(check.stdout), {
      Object: ['made'],
      early: 'index',
      fromB: 'index',
      runs: 1,
      self: true,
    });
  });

  it('fails the build on a require outside the package, naming it', async () => {
    const pkg = path.join(tmp, 'node_modules/leaky');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'leaky', main: 'index.js' }));
    await writeFile(path.join(pkg, 'index.js'), `exports.fs = require('node:fs');\n`);
    const made = await oneFile('leaky', tmp);
    assert.notEqual(made.exitCode, 0);
    assert.match(made.stderr, /leaky: .*index\.js requires node:fs, outside the package/);
    assert.equal(made.stdout, '');
  });
});
