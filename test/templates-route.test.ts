import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';

/**
 * `GET /templates/<name>` (docs/render.md#templates), with which the studio opens a template, beside `GET /templates/`
 * (templates-route.ts, whose own tests are the render templates').
 */

const CARD = {
  description: 'A card: a picture and a title',
  merge: { TITLE: 'Hello', SECONDS: 3 },
  tracks: [
    { clips: [{ type: 'image', src: '{{PHOTO}}', duration: '{{SECONDS}}' }] },
    { clips: [{ type: 'text', text: '{{TITLE}} and {{SUBTITLE}}', start: 0, duration: 2 }] },
  ],
};

describe('the templates routes', () => {
  let server: TestServer;
  let dir: string;
  const key = { 'x-api-key': 'templates-key' };
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-templates-route-'));
    await writeFile(path.join(dir, 'card.json'), JSON.stringify(CARD));
    await writeFile(path.join(dir, 'broken.json'), '{ not json');
    server = await startMediaflow({ MEDIAFLOW_TEMPLATES: dir, MEDIAFLOW_API_KEY: key['x-api-key'] });
  });
  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists each template with its description and merge fields, their kinds and defaults', async () => {
    const res = await fetch(`${server.base}/templates/`, { headers: key });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      templates: [
        {
          name: 'card',
          description: 'A card: a picture and a title',
          merge: [
            { name: 'PHOTO', kind: 'url' },
            { name: 'SUBTITLE', kind: 'text' },
            { name: 'SECONDS', kind: 'number', default: '3' },
            { name: 'TITLE', kind: 'text', default: 'Hello' },
          ],
        },
      ],
    });
  });

  it('answers one template with its document as written, and a 404 for an unknown name', async () => {
    const res = await fetch(`${server.base}/templates/card`, { headers: key });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { name: 'card', description: CARD.description, edit: CARD });
    for (const name of ['poster', 'broken', '..%2Fcard']) {
      const missing = await fetch(`${server.base}/templates/${name}`, { headers: key });
      assert.equal(missing.status, name === 'broken' ? 500 : 404, name);
    }
  });

  it('needs the API key, as /render/ does', async () => {
    assert.equal((await fetch(`${server.base}/templates/`)).status, 401);
    assert.equal((await fetch(`${server.base}/templates/card`, { headers: { 'x-api-key': 'wrong' } })).status, 401);
  });
});
