import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { cachePolicy } from '../src/engine/inputs/input-cache.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';

describe('cachePolicy', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('follows max-age, Expires, no-cache, no-store, private and Last-Modified', () => {
    assert.deepEqual(cachePolicy({ 'cache-control': 'public, max-age=60' }, now), { freshUntil: now + 60_000 });
    assert.deepEqual(cachePolicy({ expires: 'Thu, 01 Jan 2026 01:00:00 GMT' }, now), { freshUntil: now + 3_600_000 });
    assert.deepEqual(cachePolicy({ 'cache-control': 'no-cache', etag: '"v1"' }, now), {
      freshUntil: now,
      etag: '"v1"',
    });
    assert.equal(cachePolicy({ 'cache-control': 'no-store', etag: '"v1"' }, now), undefined);
    assert.equal(cachePolicy({ 'cache-control': 'private, max-age=600' }, now), undefined);
    assert.equal(cachePolicy({}, now), undefined, 'neither freshness nor a validator: not kept');
    // Heuristic: 10% of the age since Last-Modified (here 10 days), at most one day.
    const lastModified = new Date(now - 10 * 86_400_000).toUTCString();
    assert.deepEqual(cachePolicy({ 'last-modified': lastModified }, now), {
      freshUntil: now + 86_400_000,
      lastModified,
    });
  });
});

describe('repeated inputs are fetched once', () => {
  let files: FileServer;
  let server: TestServer;
  const bodies = { full: 0, notModified: 0 };
  let version = 'v1';
  let active = 0;
  let maxActive = 0;

  /** Serves a PNG (white for v1, small for v2) with the given caching headers, answering If-None-Match. */
  const cachable =
    (headers: Record<string, string>): import('./helpers/file-server.js').Route =>
    async (req: http.IncomingMessage, res: http.ServerResponse) => {
      const etag = `"${version}"`;
      if (req.headers['if-none-match'] === etag) {
        bodies.notModified++;
        res.writeHead(304, { etag, ...headers }).end();
        return;
      }
      bodies.full++;
      const file = await fixture(version === 'v1' ? 'white-800x600.png' : 'small-300x200.png');
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': (await stat(file)).size, etag, ...headers });
      createReadStream(file).pipe(res);
    };

  before(async () => {
    await fixtures('white-800x600.png', 'small-300x200.png');
    files = await startFileServer({
      '/fresh.png': cachable({ 'cache-control': 'max-age=600' }),
      '/fresh-too.png': cachable({ 'cache-control': 'max-age=600' }),
      '/revalidate.png': cachable({ 'cache-control': 'no-cache' }),
      '/no-store.png': cachable({ 'cache-control': 'no-store' }),
      // Counts how many fetches of it are under way at once.
      '/slow-no-store.png': async (req, res) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 300));
        active--;
        await cachable({ 'cache-control': 'no-store' })(req, res, new URL('http://127.0.0.1'));
      },
    });
    // Room for one 800x600 PNG but not two, to see the bound at work.
    const size = (await stat(await fixture('white-800x600.png'))).size;
    server = await startMediaflow({
      MEDIAFLOW_CACHE_BYTES: String(Math.floor(size * 1.5)),
      MEDIAFLOW_CONCURRENCY: '4',
    });
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  const convert = async (route: string) => {
    const res = await server.post('/convert_image_from_url/', { image_url: files.url(route), target_format: 'bmp' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const video = videoOf(await probe(server.pathOf(res.body.output_file!)))!;
    return `${video.width}x${video.height}`;
  };
  const reset = () => Object.assign(bodies, { full: 0, notModified: 0 });

  it('reuses a fresh body across jobs, sequential and concurrent, without asking the server', async () => {
    reset();
    assert.equal(await convert('/fresh.png'), '800x600');
    assert.equal(await convert('/fresh.png'), '800x600');
    assert.deepEqual(await Promise.all([convert('/fresh.png'), convert('/fresh.png'), convert('/fresh.png')]), [
      '800x600',
      '800x600',
      '800x600',
    ]);
    assert.deepEqual(bodies, { full: 1, notModified: 0 });
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('revalidates a no-cache body with If-None-Match and takes a changed one', async () => {
    reset();
    version = 'v1';
    assert.equal(await convert('/revalidate.png'), '800x600');
    assert.equal(await convert('/revalidate.png'), '800x600');
    assert.deepEqual(bodies, { full: 1, notModified: 1 });
    version = 'v2';
    assert.equal(await convert('/revalidate.png'), '300x200', 'a new ETag brings the new body');
    assert.deepEqual(bodies, { full: 2, notModified: 1 });
    version = 'v1';
  });

  it('never keeps a no-store body', async () => {
    reset();
    await convert('/no-store.png');
    await convert('/no-store.png');
    assert.deepEqual(bodies, { full: 2, notModified: 0 });
  });

  it('fetches a URL it may not keep in parallel, not one job after another', async () => {
    await convert('/slow-no-store.png');
    maxActive = 0;
    await Promise.all([convert('/slow-no-store.png'), convert('/slow-no-store.png'), convert('/slow-no-store.png')]);
    assert.equal(maxActive, 3);
  });

  it('stays within MEDIAFLOW_CACHE_BYTES, evicting the least recently used body', async () => {
    await convert('/fresh.png');
    reset();
    await convert('/fresh.png');
    assert.equal(bodies.full, 0, 'cached');
    await convert('/fresh-too.png');
    assert.equal(bodies.full, 1);
    const cacheDir = path.join(server.dataDir, 'cache');
    const bodiesOnDisk = (await readdir(cacheDir)).filter((name) => name.endsWith('.body'));
    let total = 0;
    for (const name of bodiesOnDisk) total += (await stat(path.join(cacheDir, name))).size;
    assert.ok(total <= server.config.cacheBytes, `${total} bytes cached, limit ${server.config.cacheBytes}`);
    await convert('/fresh.png');
    assert.equal(bodies.full, 2, 'the older entry was evicted, so it is fetched again');
  });
});
