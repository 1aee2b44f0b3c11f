import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { SETTINGS } from '../src/engine/config.js';
import { describe, it } from './helpers/lifecycle.js';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('the README', () => {
  it('documents every setting in its configuration table, with the flag that mirrors it', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Command line'));
    const rows = new Map(table.split('\n').filter((line) => line.startsWith('| `')).map((line) => [/^\| `([A-Z0-9_]+)`/.exec(line)?.[1], line]));
    for (const setting of SETTINGS) {
      const row = rows.get(setting.env);
      assert.ok(row, `${setting.env} has a row`);
      assert.ok(row.includes(`\`--${setting.flag}\``), `${setting.env}'s row names --${setting.flag}`);
    }
  });

  it('and the docs cite no file outside the repository, and every file they link to exists', async () => {
    const pages = ['README.md', ...(await readdir(path.join(ROOT, 'docs'))).map((name) => `docs/${name}`), 'examples/plugin-thumbnail/README.md'];
    for (const page of pages) {
      const text = await readFile(path.join(ROOT, page), 'utf8');
      // The design documents the project was built from are not shipped with it.
      assert.doesNotMatch(text, /CONTRACT\.md|ARCHITECTURE\.md|STYLE\.md|\.\.\/shared\//, `${page} cites a file outside the repository`);
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const file = path.resolve(ROOT, path.dirname(page), target!);
        assert.ok(file.startsWith(ROOT + path.sep) && existsSync(file), `${page} links to ${target}, which is not a file of the repository`);
      }
    }
  });
});
