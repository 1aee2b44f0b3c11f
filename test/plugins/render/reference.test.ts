import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from '../../helpers/lifecycle.js';
import { withReference } from '../../../scripts/render-reference.js';
import { CLIP_TYPES } from '../../../src/plugins/render/schema.js';

const PAGE = path.resolve(import.meta.dirname, '../../../docs/render.md');

describe("docs/render.md's reference", () => {
  it('is the one the schema makes (run `npx tsx scripts/render-reference.ts` after changing the schema)', async () => {
    const page = await readFile(PAGE, 'utf8');
    assert.equal(page, withReference(page));
  });

  it('has a table for every clip type, listing every field of it', async () => {
    const page = await readFile(PAGE, 'utf8');
    for (const [type, schema] of Object.entries(CLIP_TYPES)) {
      const start = page.indexOf(`#### \`${type}\` clips`);
      assert.ok(start > 0, type);
      const table = page.slice(start, page.indexOf('\n\n', page.indexOf('|---', start)));
      const fields = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
      assert.deepEqual(fields, Object.keys(schema.properties), type);
    }
  });
});
