import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from './helpers/lifecycle.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The test files vitest runs (vitest.config.ts's include), relative to the repository. */
async function testFiles(): Promise<string[]> {
  const examples = (await readdir(path.join(ROOT, 'examples'))).map((name) => path.join('examples', name, 'test'));
  const found: string[] = [];
  for (const folder of ['test', ...examples]) {
    const names = await readdir(path.join(ROOT, folder), { recursive: true }).catch(() => []);
    found.push(...names.filter((name) => name.endsWith('.test.ts')).map((name) => path.join(folder, name)));
  }
  return found;
}

describe('test file names', () => {
  // A report, a failure or `vitest run <name>` names a file by its last part: two files with one name are confused.
  it('are unique by their base name', async () => {
    const files = await testFiles();
    assert.ok(files.length > 100, `found ${files.length} test files`);
    const byName = new Map<string, string[]>();
    for (const file of files) byName.set(path.basename(file), [...(byName.get(path.basename(file)) ?? []), file]);
    const clashes = [...byName.values()].filter((same) => same.length > 1);
    assert.deepEqual(clashes, []);
  });
});
