import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startMediaflow } from './helpers/mediaflow.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { startServeProcess, type ServeProcess } from './helpers/serve-process.js';

/** `GET /jobs/` (docs/jobs.md#listing-jobs): a key's asynchronous jobs, newest first, a page at a time. */

const ASYNC = { prefer: 'respond-async' };

/** A server as these tests call it: its base URL. */
type TestServer = { base: string };

/** GET /jobs/ with a query and headers: its status and JSON body. */
async function list(server: TestServer, query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.base}/jobs/${query}`, { headers });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown> & { jobs: Array<{ job_id: string }> },
  };
}

/** Submits a quick job (subtitles from text) as `key`, waits for its end, and answers its id. */
async function quickJob(server: TestServer, key: string, text: string): Promise<string> {
  const headers = { ...ASYNC, 'x-api-key': key };
  const id = await submitJob(server.base, '/generate-subtitles/', { text }, headers);
  await waitForJob(server.base, id, undefined, { headers: { 'x-api-key': key } });
  return id;
}

describe('GET /jobs/ with one API key', () => {
  let server: Awaited<ReturnType<typeof startMediaflow>>;
  const ids: string[] = [];
  before(async () => {
    server = await startMediaflow({ MEDIAFLOW_API_KEY: 'one' });
    for (const text of ['First.', 'Second.', 'Third.']) ids.push(await quickJob(server, 'one', text));
    // A synchronous request's job: its client had the answer, never its id.
    assert.equal(
      (await server.post('/generate-subtitles/', { text: 'Sync.' }, { headers: { 'x-api-key': 'one' } })).status,
      200,
    );
  });
  after(() => server?.close());

  it('lists the asynchronous jobs, newest first, as GET /jobs/<id> shows each', async () => {
    const { status, body } = await list(server, '', { 'x-api-key': 'one' });
    assert.equal(status, 200);
    assert.deepEqual(
      body.jobs.map((job) => job.job_id),
      [...ids].reverse(),
    );
    assert.equal(body.next, null);
    const single = await (await fetch(`${server.base}/jobs/${ids[0]}`, { headers: { 'x-api-key': 'one' } })).json();
    assert.deepEqual(body.jobs.at(-1), single);
  });

  it('pages with limit and before, `next` naming where the next page starts', async () => {
    const first = await list(server, '?limit=2', { 'x-api-key': 'one' });
    assert.deepEqual(
      first.body.jobs.map((job) => job.job_id),
      [ids[2], ids[1]],
    );
    assert.equal(first.body.next, ids[1]);
    const second = await list(server, `?limit=2&before=${first.body.next}`, { 'x-api-key': 'one' });
    assert.deepEqual(
      second.body.jobs.map((job) => job.job_id),
      [ids[0]],
    );
    assert.equal(second.body.next, null);
  });

  it('refuses a bad limit or cursor, and a request without the key', async () => {
    for (const limit of ['0', '101', 'ten', '2.5']) {
      const { status, body } = await list(server, `?limit=${limit}`, { 'x-api-key': 'one' });
      assert.equal(status, 400, limit);
      assert.match(String(body.error), /Expected `limit` to be a whole number from 1 to 100/);
    }
    const gone = await list(server, '?before=00000000-0000-4000-8000-000000000000', { 'x-api-key': 'one' });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'MF_ERR_NOT_FOUND');
    assert.equal((await list(server, '')).status, 401);
    assert.equal((await list(server, '', { 'x-api-key': 'two' })).status, 401);
  });
});

describe('GET /jobs/ with several API keys, and with none', () => {
  let keyed: Awaited<ReturnType<typeof startMediaflow>>;
  let open: Awaited<ReturnType<typeof startMediaflow>>;
  before(async () => {
    keyed = await startMediaflow({ MEDIAFLOW_API_KEYS: 'alpha,beta' });
    open = await startMediaflow();
  });
  after(async () => {
    await keyed?.close();
    await open?.close();
  });

  it("lists each key's own jobs only; another key's job is no cursor for it", async () => {
    const alpha = [await quickJob(keyed, 'alpha', 'A one.'), await quickJob(keyed, 'alpha', 'A two.')];
    const beta = await quickJob(keyed, 'beta', 'B one.');
    assert.deepEqual(
      (await list(keyed, '', { 'x-api-key': 'alpha' })).body.jobs.map((job) => job.job_id),
      [...alpha].reverse(),
    );
    assert.deepEqual(
      (await list(keyed, '', { 'x-api-key': 'beta' })).body.jobs.map((job) => job.job_id),
      [beta],
    );
    assert.equal((await list(keyed, `?before=${alpha[0]}`, { 'x-api-key': 'beta' })).status, 404);
  });

  it('lists nothing without a key on the server: a job is read only by whoever holds its id', async () => {
    await quickJob(open, '', 'Open.');
    const { status, body } = await list(open, '');
    assert.equal(status, 501);
    assert.equal(body.code, 'MF_ERR_UNAVAILABLE');
    assert.match(String(body.error), /Listing jobs needs an API key: set MEDIAFLOW_API_KEY/);
    assert.equal(body.jobs, undefined);
  });
});

describe('GET /jobs/ in Redis mode', () => {
  let redis: TestRedis;
  let serve: ServeProcess;
  let dataDir: string;
  before(async () => {
    [redis, dataDir] = await Promise.all([startRedis(), mkdtemp(path.join(os.tmpdir(), 'mediaflow-jobs-list-'))]);
    serve = await startServeProcess(dataDir, { MEDIAFLOW_REDIS_URL: redis.url, MEDIAFLOW_API_KEYS: 'alpha,beta' });
  });
  after(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.child;
    await redis?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("lists each key's jobs from the shared store, newest first", async () => {
    const alpha = [await quickJob(serve, 'alpha', 'One.'), await quickJob(serve, 'alpha', 'Two.')];
    const beta = await quickJob(serve, 'beta', 'Three.');
    const page = await list(serve, '?limit=1', { 'x-api-key': 'alpha' });
    assert.deepEqual(
      page.body.jobs.map((job) => job.job_id),
      [alpha[1]],
    );
    assert.equal(page.body.next, alpha[1]);
    const rest = await list(serve, `?before=${alpha[1]}`, { 'x-api-key': 'alpha' });
    assert.deepEqual(
      rest.body.jobs.map((job) => job.job_id),
      [alpha[0]],
    );
    assert.deepEqual(
      (await list(serve, '', { 'x-api-key': 'beta' })).body.jobs.map((job) => job.job_id),
      [beta],
    );
  });
});
