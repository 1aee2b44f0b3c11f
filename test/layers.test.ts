import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from './helpers/lifecycle.js';
import { importsOf } from './helpers/source-imports.js';

const SRC = path.resolve(import.meta.dirname, '../src');

/**
 * The engine's floors, lowest first, after what all of them share at its root (docs/architecture.md, "The engine's
 * floors"): a folder of engine/ that is not here belongs to no layer until it is given its place.
 */
const ENGINE_FLOORS = [
  'contract',
  'exec',
  'probe',
  'storage',
  'inputs',
  'subtitles',
  'speech',
  'voice',
  'plugins',
  'run',
];

/**
 * The layers of docs/architecture.md ("Layers, and no cycles"), lowest first: a module may import from
 * its own layer or an earlier one, never a later one, not even with `import type`. madge (npm test's
 * check:cycles) finds loops; this finds an arrow that points back without closing one yet.
 */
const LAYERS: Array<{ name: string; holds: (relative: string) => boolean }> = [
  { name: 'engine/ (its root)', holds: (f) => /^engine\/[^/]+$/.test(f) },
  ...ENGINE_FLOORS.map((floor) => ({
    name: `engine/${floor}/`,
    holds: (f: string) => f.startsWith(`engine/${floor}/`),
  })),
  {
    name: 'sdk and built-in plugins',
    holds: (f) => f === 'sdk.ts' || f.startsWith('sdk/') || f.startsWith('plugins/'),
  },
  { name: 'pipelines', holds: (f) => f.startsWith('pipelines/') },
  { name: 'jobs', holds: (f) => f.startsWith('jobs/') },
  { name: 'composition root', holds: (f) => f === 'runtime.ts' },
  {
    name: 'front ends',
    holds: (f) => f.startsWith('server/') || f.startsWith('cli/') || f.startsWith('mcp/') || f === 'index.ts',
  },
];

const layerOf = (relative: string): number => LAYERS.findIndex((layer) => layer.holds(relative));

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(SRC, path.join(entry.parentPath, entry.name)));
}

/** The files of src/ a module imports (type-only imports too), as paths relative to src/. */
async function localImportsOf(relative: string): Promise<string[]> {
  const specifiers = (await importsOf(path.join(SRC, relative))).filter((specifier) => specifier.startsWith('.'));
  return specifiers.map((specifier) =>
    path.relative(SRC, path.resolve(SRC, path.dirname(relative), specifier)).replace(/\.js$/, '.ts'),
  );
}

describe('the layers of src/', () => {
  it('every module of src/ belongs to one layer', async () => {
    const unplaced = (await sourceFiles(SRC)).filter((file) => layerOf(file) < 0);
    assert.deepEqual(unplaced, []);
  });

  it('no module imports from a later layer', async () => {
    const backwards: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      for (const imported of await localImportsOf(file)) {
        if (layerOf(imported) > layerOf(file)) {
          backwards.push(
            `${file} (${LAYERS[layerOf(file)]!.name}) imports ${imported} (${LAYERS[layerOf(imported)]!.name})`,
          );
        }
      }
    }
    assert.deepEqual(backwards, []);
  });
});
