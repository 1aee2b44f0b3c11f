import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
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
});
