import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, submitJob, waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startRedis } from './helpers/redis.js';
import {
  eventually,
  ffmpegChildren,
  startServeProcess,
  startWorkerProcess,
  type ServeProcess,
} from './helpers/serve-process.js';

const ASYNC = { prefer: 'respond-async' };

/** The finished jobs the queue dashboard shows for the `jobs` queue. */
async function finishedOnBoard(base: string, headers: Record<string, string>) {
  const board = (await (
    await fetch(`${base}/admin/queues/api/queues?activeQueue=jobs&status=completed`, { headers })
  ).json()) as { queues: Array<{ name: string; counts: { completed: number }; jobs: Array<{ id: string }> }> };
  return board.queues.find((queue) => queue.name === 'jobs')!;
}

/** Processes of Redis mode on one shared data directory; each test file starts its own Redis. */
describe('Redis mode across processes', () => {
  let files: FileServer;
  const started: ServeProcess[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  /**
   * A Redis (appendonly, so a restart keeps the queue) and a data directory of their own for one
   * test, so that what one test leaves in its queue never reaches another's workers.
   */
  async function cluster() {
    const redis = await startRedis({ appendonly: true });
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-redis-mode-'));
    cleanups.push(
      () => redis.close(),
      () => rm(dataDir, { recursive: true, force: true }),
    );
    const env = { MEDIAFLOW_REDIS_URL: redis.url };
    const api = async (extra: Record<string, string> = {}) => {
      const proc = await startServeProcess(dataDir, { ...env, MEDIAFLOW_WORKERS: '0', ...extra });
      started.push(proc);
      return proc;
    };
    const worker = async (extra: Record<string, string> = {}) => {
      const proc = await startWorkerProcess(dataDir, { ...env, MEDIAFLOW_CONCURRENCY: '1', ...extra });
      started.push(proc);
      return proc;
    };
    return { redis, dataDir, api, worker };
  }
  const stop = async (proc: ServeProcess) => {
    proc.child.kill('SIGKILL');
    await proc.child;
  };
  const resize = (width: number) => ({
    image_url: files.url('/f/small-300x200.png'),
    width: String(width),
    height: '20',
  });
  const endless = () => ({ image_urls: files.url('/f/small-300x200.png'), seconds_per_image: '3600', fps: '60' });

  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
  });
  after(async () => {
    for (const proc of started) if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all(started.map((proc) => proc.child));
    for (const cleanup of cleanups) await cleanup();
    await files?.close();
  });

  it('queues jobs on an API with no workers until a worker comes; any API answers for any job', async () => {
    const { api, worker } = await cluster();
    const first = await api();
    const id = await submitJob(first.base, '/resize_image/', resize(24), ASYNC);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await getJob(first.base, id)).status, 'queued', 'no worker: it waits');
    const health = (await (await fetch(`${first.base}/health`)).json()) as { role: string; queue: { waiting: number } };
    assert.equal(health.role, 'api');
    assert.equal(health.queue.waiting, 1);
    const second = await api();
    const w = await worker();
    const done = await waitForJob(second.base, id);
    assert.equal(done.status, 'succeeded');
    assert.match(String(done.result!.output_file), /\/uploads\/[0-9a-f-]{36}_resized\.jpg$/);
    assert.ok(!String(done.result!.output_file).includes(id), 'the output is named apart from the job');
    // A synchronous request on the second API is worked by the worker and answered as usual.
    const form = new FormData();
    for (const [key, value] of Object.entries(resize(30))) form.append(key, value);
    const res = await fetch(`${second.base}/resize_image/`, { method: 'POST', body: form });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { message: string }).message, 'Image resized successfully');
    // Idempotency holds across API processes.
    const key = { ...ASYNC, 'idempotency-key': 'across-processes-1' };
    const a = await submitJob(first.base, '/resize_image/', resize(26), key);
    const b = await submitJob(second.base, '/resize_image/', resize(26), key);
    assert.equal(a, b);
    const other = new FormData();
    for (const [k, v] of Object.entries(resize(27))) other.append(k, v);
    assert.equal(
      (await fetch(`${second.base}/resize_image/`, { method: 'POST', body: other, headers: key })).status,
      422,
    );
    await Promise.all([first, second, w].map(stop));
  });

  it(
    'serves the queue dashboard at /admin/queues only with the API key (X-API-Key or Basic), and /metrics ' +
      'counts the shared queue',
    async () => {
      const { api } = await cluster();
      const front = await api({ MEDIAFLOW_DASHBOARD: '1', MEDIAFLOW_API_KEY: 'dash-key' });
      const refused = await fetch(`${front.base}/admin/queues`);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Basic/);
      const basic = `Basic ${Buffer.from('anyone:dash-key').toString('base64')}`;
      const page = await fetch(`${front.base}/admin/queues`, { headers: { authorization: basic } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
      const queues = (await (
        await fetch(`${front.base}/admin/queues/api/queues`, { headers: { 'x-api-key': 'dash-key' } })
      ).json()) as { queues: Array<{ name: string }> };
      assert.deepEqual(queues.queues.map((queue) => queue.name).sort(), ['jobs', 'parts', 'webhooks']);
      assert.equal(
        (
          await fetch(`${front.base}/admin/queues/api/queues`, {
            headers: { authorization: `Basic ${Buffer.from('x:wrong').toString('base64')}` },
          })
        ).status,
        401,
      );
      await submitJob(front.base, '/resize_image/', resize(21), { ...ASYNC, 'x-api-key': 'dash-key' });
      // With an API key set, /metrics wants it too.
      const metrics = await (await fetch(`${front.base}/metrics`, { headers: { 'x-api-key': 'dash-key' } })).text();
      assert.match(metrics, /^mediaflow_queue_waiting 1$/m, 'no worker: the job waits in the shared queue');
      assert.match(metrics, /^mediaflow_queue_stalled 0$/m);
      await stop(front);
    },
  );

  it('keeps finished jobs for the dashboard, as many as MEDIAFLOW_DASHBOARD_KEEP_JOBS says', async () => {
    const { api, worker } = await cluster();
    const front = await api({
      MEDIAFLOW_DASHBOARD: '1',
      MEDIAFLOW_API_KEY: 'dash-key',
      MEDIAFLOW_DASHBOARD_KEEP_JOBS: '2',
    });
    const w = await worker({ MEDIAFLOW_DASHBOARD_KEEP_JOBS: '2' });
    const key = { 'x-api-key': 'dash-key' };
    const ids: string[] = [];
    for (const width of [22, 23, 24]) {
      const id = await submitJob(front.base, '/resize_image/', resize(width), { ...ASYNC, ...key });
      assert.equal((await waitForJob(front.base, id, undefined, { headers: key })).status, 'succeeded');
      ids.push(id);
    }
    const jobs = await finishedOnBoard(front.base, key);
    assert.equal(jobs.counts.completed, 2, 'the two newest finished jobs are kept, the oldest is gone');
    assert.deepEqual(jobs.jobs.map((job) => job.id).sort(), ids.slice(1).sort());
    await Promise.all([front, w].map(stop));
  });

  it('and for as long as MEDIAFLOW_DASHBOARD_KEEP_AGE says: an older one is gone when the next finishes', async () => {
    const { api, worker } = await cluster();
    // BullMQ counts the age in whole seconds, and drops what is older when a job finishes.
    const keep = { MEDIAFLOW_DASHBOARD_KEEP_AGE: '1s' };
    const front = await api({ MEDIAFLOW_DASHBOARD: '1', MEDIAFLOW_API_KEY: 'dash-key', ...keep });
    const w = await worker(keep);
    const key = { 'x-api-key': 'dash-key' };
    const finish = async (width: number) => {
      const id = await submitJob(front.base, '/resize_image/', resize(width), { ...ASYNC, ...key });
      assert.equal((await waitForJob(front.base, id, undefined, { headers: key })).status, 'succeeded');
      return id;
    };
    const first = await finish(22);
    assert.deepEqual(
      (await finishedOnBoard(front.base, key)).jobs.map((job) => job.id),
      [first],
      'kept after it finished',
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const second = await finish(23);
    const jobs = await finishedOnBoard(front.base, key);
    assert.deepEqual(
      jobs.jobs.map((job) => job.id),
      [second],
      'the first, finished 2 s before, is gone by age: the count alone (1000) would have kept it',
    );
    assert.equal(jobs.counts.completed, 1);
    await Promise.all([front, w].map(stop));
  });

  it('cancels a job from one process while another runs it: its ffmpeg is killed and its files removed', async () => {
    const { api, worker, dataDir } = await cluster();
    const front = await api();
    const w = await worker();
    const id = await submitJob(front.base, '/images-to-video/', endless(), ASYNC);
    assert.ok(
      await eventually(async () => (await ffmpegChildren(w.child.pid!)).length === 1, 20_000),
      'the worker runs ffmpeg',
    );
    const res = await fetch(`${front.base}/jobs/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { status: string }).status, 'cancelled');
    assert.deepEqual(await ffmpegChildren(w.child.pid!), []);
    assert.deepEqual(await readdir(path.join(dataDir, 'work', `pid-${w.child.pid}`)), [], 'the job folder is gone');
    await Promise.all([front, w].map(stop));
  });

  it('counts the shared queue for the 503, in every API process', async () => {
    const { api, worker } = await cluster();
    const one = await api({ MEDIAFLOW_MAX_QUEUE: '1' });
    const two = await api({ MEDIAFLOW_MAX_QUEUE: '1' });
    const w = await worker();
    const running = await submitJob(one.base, '/images-to-video/', endless(), ASYNC);
    await waitForJob(one.base, running, (job) => job.status === 'running');
    const waiting = await submitJob(one.base, '/resize_image/', resize(22), ASYNC);
    const form = new FormData();
    for (const [key, value] of Object.entries(resize(23))) form.append(key, value);
    const refused = await fetch(`${two.base}/resize_image/`, { method: 'POST', body: form, headers: ASYNC });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '5');
    for (const id of [waiting, running])
      assert.equal((await fetch(`${two.base}/jobs/${id}`, { method: 'DELETE' })).status, 200);
    await Promise.all([one, two, w].map(stop));
  });

  it('answers 503 while Redis is down, says why in /health, and recovers by itself; queued jobs survive', async () => {
    const { api, worker, redis } = await cluster();
    const front = await api();
    const queued = await submitJob(front.base, '/resize_image/', resize(28), ASYNC);
    await redis.stop();
    const form = new FormData();
    for (const [key, value] of Object.entries(resize(29))) form.append(key, value);
    const refused = await fetch(`${front.base}/resize_image/`, { method: 'POST', body: form, headers: ASYNC });
    assert.equal(refused.status, 503);
    assert.ok(refused.headers.get('retry-after'));
    assert.match(((await refused.json()) as { error: string }).error, /Redis/);
    assert.equal((await fetch(`${front.base}/jobs/${queued}`)).status, 503);
    const health = await fetch(`${front.base}/health`);
    assert.equal(health.status, 503);
    const body = (await health.json()) as { jobs: { ok: boolean; error?: string } };
    assert.equal(body.jobs.ok, false);
    assert.ok(body.jobs.error);
    await redis.start();
    assert.ok(
      await eventually(async () => (await fetch(`${front.base}/health`)).status === 200, 15_000),
      '/health recovers',
    );
    const w = await worker();
    assert.equal((await waitForJob(front.base, queued)).status, 'succeeded', 'the job queued before the outage ran');
    assert.equal(
      (await waitForJob(front.base, await submitJob(front.base, '/resize_image/', resize(31), ASYNC))).status,
      'succeeded',
    );
    await Promise.all([front, w].map(stop));
  });

  it(
    'on SIGTERM a worker finishes within its grace or hands its running job back, ' + 'uncounted, to another worker',
    async () => {
      const { api, worker, redis } = await cluster();
      const front = await api();
      const leaving = await worker();
      const id = await submitJob(front.base, '/images-to-video/', endless(), ASYNC);
      assert.ok(await eventually(async () => (await ffmpegChildren(leaving.child.pid!)).length === 1, 20_000));
      const staying = await worker();
      process.kill(leaving.child.pid!, 'SIGTERM');
      // An hour of video does not finish in the 25 s grace: the job goes back to the queue.
      const exit = await leaving.child;
      assert.equal(exit.exitCode, 0, leaving.output());
      assert.ok(
        await eventually(async () => (await ffmpegChildren(staying.child.pid!)).length === 1, 20_000),
        'the other worker took it up',
      );
      const client = new Redis(redis.url);
      const record = JSON.parse((await client.get(`mediaflow:job:${id}`))!) as { attempts: number; status: string };
      client.disconnect();
      assert.deepEqual([record.status, record.attempts], ['running', 1], 'the handed-back run was not counted');
      assert.equal((await fetch(`${front.base}/jobs/${id}`, { method: 'DELETE' })).status, 200);
      await Promise.all([front, staying].map(stop));
    },
  );
});
