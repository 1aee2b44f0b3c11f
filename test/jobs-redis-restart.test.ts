import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { TEMP_PREFIX } from '../src/engine/storage/storage.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, submitJob, waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import {
  eventually,
  ffmpegChildren,
  startServeProcess,
  startWorkerProcess,
  type ServeProcess,
} from './helpers/serve-process.js';
import { startWebhookReceiver, type Behaviour, type WebhookReceiver } from './helpers/webhook-receiver.js';

const ASYNC = { prefer: 'respond-async' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A Redis restart (append-only file on) at each point of a job's life, with real API and worker
 * processes: every job ends exactly once and its webhook reaches the receiver once (by webhook-id).
 */
describe('Redis restarts at each point of a job', () => {
  let files: FileServer;
  let receiver: WebhookReceiver;
  /** How the receiver answers each path's n-th request (default 200). */
  const plans = new Map<string, (n: number) => Behaviour>();
  const started: ServeProcess[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  async function cluster(extra: Record<string, string> = {}) {
    const redis = await startRedis({ appendonly: true });
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-redis-restart-'));
    cleanups.push(
      () => redis.close(),
      () => rm(dataDir, { recursive: true, force: true }),
    );
    const env = {
      MEDIAFLOW_REDIS_URL: redis.url,
      MEDIAFLOW_WEBHOOK_BACKOFF: '1s',
      MEDIAFLOW_WEBHOOK_TIMEOUT: '3s',
      MEDIAFLOW_STALLED_INTERVAL: '2s',
      ...extra,
    };
    const api = await startServeProcess(dataDir, { ...env, MEDIAFLOW_WORKERS: '0' });
    started.push(api);
    const worker = async () => {
      const proc = await startWorkerProcess(dataDir, { ...env, MEDIAFLOW_CONCURRENCY: '1' });
      started.push(proc);
      return proc;
    };
    return { redis, dataDir, api, worker };
  }

  /** The lines a process logged with this message about this job. */
  const logged = (procs: ServeProcess[], msg: string, id: string) =>
    procs
      .flatMap((proc) => proc.output().split('\n'))
      .filter((line) => line.includes(`"msg":"${msg}"`) && line.includes(`"job":"${id}"`));

  /** Starts Redis again and waits until the API has reconnected (its /health answers 200). */
  async function restart(redis: TestRedis, api: ServeProcess) {
    await redis.start();
    assert.ok(
      await eventually(async () => (await fetch(`${api.base}/health`)).status === 200, 15_000),
      'the API reconnects',
    );
  }

  /**
   * The job ended once, as `status`, and its webhook was delivered: one webhook-id, one 2xx, the record says delivered.
   */
  async function endedOnce(base: string, procs: ServeProcess[], id: string, hook: string, status: string) {
    const job = await waitForJob(base, id, (view) => view.webhook?.delivered_at != null, { ms: 45_000 });
    assert.equal(job.status, status, JSON.stringify(job));
    assert.equal(logged(procs, 'job ended', id).length, 1, 'recorded as ended once');
    const mine = receiver.deliveries.filter((delivery) => delivery.path === hook);
    assert.deepEqual([...new Set(mine.map((delivery) => delivery.headers['webhook-id']))], [`msg_${id}`]);
    assert.equal(mine.filter((delivery) => delivery.answered === 200).length, 1, 'accepted once');
    for (const delivery of mine) assert.equal(delivery.json.status, status);
    return job;
  }

  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
    receiver = await startWebhookReceiver((hook, n) => plans.get(hook)?.(n) ?? 200);
  });
  after(async () => {
    for (const proc of started) if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all(started.map((proc) => proc.child));
    for (const cleanup of cleanups) await cleanup();
    await receiver?.close();
    await files?.close();
  });

  const resize = (width: number, hook: string) => ({
    image_url: files.url('/f/small-300x200.png'),
    width: String(width),
    height: '20',
    webhook_url: receiver.url(hook),
  });

  it(
    'finishing: Redis is down when the worker has published the output; ' + 'the end and the webhook wait for it',
    async () => {
      // The default lock (30 s) outlasts the outage: BullMQ does not hand the job to a second run.
      const { redis, dataDir, api, worker } = await cluster({ MEDIAFLOW_STALLED_INTERVAL: '30s' });
      const w = await worker();
      const hook = '/finishing';
      // Long enough to stop Redis while ffmpeg runs: a minute of slideshow at 25 fps.
      const fields = {
        image_urls: files.url('/f/small-300x200.png'),
        seconds_per_image: '60',
        fps: '25',
        webhook_url: receiver.url(hook),
      };
      const id = await submitJob(api.base, '/images-to-video/', fields, ASYNC);
      // Generous: on a loaded machine the worker may take a while to pick the job up and start ffmpeg.
      assert.ok(
        await eventually(async () => (await ffmpegChildren(w.child.pid!)).length > 0, 60_000),
        'the worker runs ffmpeg',
      );
      await redis.stop();
      const uploads = path.join(dataDir, 'uploads');
      const published = async () =>
        (await readdir(uploads).catch(() => [] as string[])).some((name) => !name.startsWith(TEMP_PREFIX));
      assert.ok(await eventually(published, 60_000), 'the output is published while Redis is down');
      // The worker now tries to record the end; Redis comes back a little later.
      await sleep(2_000);
      await restart(redis, api);
      await endedOnce(api.base, [w], id, hook, 'succeeded');
    },
  );

  it(
    'webhook pending: Redis goes down while an attempt is in flight; ' + 'its failure is recorded and retried',
    async () => {
      const { redis, api, worker } = await cluster();
      const w = await worker();
      const hook = '/pending';
      // The first attempt gets no answer (it times out after 3 s, Redis down by then); the next is accepted.
      plans.set(hook, (n) => (n === 0 ? 'hang' : 200));
      const id = await submitJob(api.base, '/resize_image/', resize(40, hook), ASYNC);
      assert.ok(
        await eventually(() => receiver.deliveries.some((delivery) => delivery.path === hook), 30_000),
        'the first attempt arrives',
      );
      await redis.stop();
      await sleep(5_000);
      await restart(redis, api);
      await endedOnce(api.base, [w], id, hook, 'succeeded');
      assert.equal(
        receiver.deliveries.filter((delivery) => delivery.path === hook).length,
        2,
        'one timed-out attempt, one accepted',
      );
    },
  );

  it(
    'queued and running: records that lost their queue entry across a restart run again, or fail past ' +
      'MEDIAFLOW_JOB_ATTEMPTS',
    async () => {
      const { redis, api, worker } = await cluster();
      // No worker yet: the three jobs wait in the queue.
      const queued = await submitJob(api.base, '/resize_image/', resize(41, '/q-queued'), ASYNC);
      const running = await submitJob(api.base, '/resize_image/', resize(42, '/q-running'), ASYNC);
      const spent = await submitJob(api.base, '/resize_image/', resize(43, '/q-spent'), ASYNC);
      // What a restart as a job was taken or ended can leave: records with no BullMQ job; two of them
      // `running` (one with runs to spare, one with MEDIAFLOW_JOB_ATTEMPTS' 2 spent) with no worker.
      const client = new Redis(redis.url, { maxRetriesPerRequest: null });
      const bull = new Queue('jobs', { connection: client, prefix: 'mediaflow' });
      for (const id of [queued, running, spent]) await bull.remove(id);
      for (const [id, attempts] of [
        [running, 1],
        [spent, 2],
      ] as const) {
        const record = JSON.parse((await client.get(`mediaflow:job:${id}`))!) as Record<string, unknown>;
        const orphan = { ...record, status: 'running', stage: 'process', progress: 10, attempts };
        await client.set(`mediaflow:job:${id}`, JSON.stringify(orphan));
      }
      await bull.close();
      client.disconnect();
      await redis.stop();
      await restart(redis, api);
      const w = await worker();
      await endedOnce(api.base, [w, api], queued, '/q-queued', 'succeeded');
      await endedOnce(api.base, [w, api], running, '/q-running', 'succeeded');
      const failed = await endedOnce(api.base, [w, api], spent, '/q-spent', 'failed');
      assert.equal(failed.error?.status, 500);
      assert.match(failed.error?.error ?? '', /interrupted 2 times .*Redis.*MEDIAFLOW_JOB_ATTEMPTS is 2/);
      assert.equal((await getJob(api.base, running)).progress, 100);
    },
  );

  it(
    'a restart while twenty short jobs run and finish: ' + 'every job ends once, every webhook is delivered once',
    async () => {
      const { redis, api, worker } = await cluster();
      const workers = [await worker(), await worker()];
      const ids: Array<{ id: string; hook: string }> = [];
      for (let n = 0; n < 20; n++) {
        const hook = `/many-${n}`;
        ids.push({ id: await submitJob(api.base, '/resize_image/', resize(50 + n, hook), ASYNC), hook });
      }
      // Down as soon as the first jobs end (some mid-way, some finishing), up again two seconds later.
      assert.ok(
        await eventually(() => receiver.deliveries.some((delivery) => delivery.path.startsWith('/many-')), 30_000),
      );
      await redis.stop();
      await sleep(2_000);
      await restart(redis, api);
      for (const { id, hook } of ids) await endedOnce(api.base, [...workers, api], id, hook, 'succeeded');
    },
  );
});
