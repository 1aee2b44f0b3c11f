/**
 * The `restarts` phase of `npm run load` (LOAD_MODE=restarts, `npm run load:restarts`): Redis mode,
 * one API process and two workers on a Redis with the append-only file, 50 asynchronous jobs with
 * webhooks. While they run, one worker is killed with -9 (a new one takes its place) and Redis is
 * stopped and started again. Then: every job ended exactly once (one `job ended` line in all the
 * processes' logs, a final status), every webhook reached the receiver (one webhook-id per job, at
 * least one 2xx; repeats, which receivers drop by webhook-id, are counted), and the API process's
 * memory and open descriptors came back to their baseline. Only 127.0.0.1 is contacted.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { FileServer } from '../test/helpers/file-server.js';
import { startRedis } from '../test/helpers/redis.js';
import { eventually, startServeProcess, startWorkerProcess, type ServeProcess } from '../test/helpers/serve-process.js';
import { startWebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { rssMiB } from '../bench/memory.js';

const JOBS = Number(process.env.LOAD_RESTART_JOBS ?? 50);
/** Memory counts as back when the end is within this of the baseline (V8 keeps some heap it grew into). */
const MEMORY_TOLERANCE_MIB = 24;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * One request to the API on a connection of its own, closed after it: the API's descriptors then
 * count only what the server itself keeps open, not this script's idle keep-alive sockets.
 */
function call(
  base: string,
  method: string,
  pathname: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { connection: 'close', prefer: 'respond-async' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const req = http.request(`${base}${pathname}`, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = text;
        try {
          json = JSON.parse(text);
        } catch {
          // kept as text
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
const openFds = async (pid: number) => (await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])).length;

export async function runRestarts(files: FileServer, seconds: number): Promise<boolean> {
  const redis = await startRedis({ appendonly: true });
  const receiver = await startWebhookReceiver();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-load-restarts-'));
  const env = {
    MEDIAFLOW_REDIS_URL: redis.url,
    MEDIAFLOW_STALLED_INTERVAL: '2s',
    MEDIAFLOW_WEBHOOK_BACKOFF: '0.5s',
    MEDIAFLOW_MAX_QUEUE: String(JOBS),
  };
  const api = await startServeProcess(dataDir, { ...env, MEDIAFLOW_WORKERS: '0' });
  const worker = () => startWorkerProcess(dataDir, { ...env, MEDIAFLOW_CONCURRENCY: '1' });
  const workers: ServeProcess[] = [await worker(), await worker()];
  const pid = api.child.pid!;
  // Baseline: the API warmed by one job, so that what the first request loads is not counted as growth.
  const submit = async (n: number) => {
    const fields = {
      image_url: files.url('/f/landscape-1920x1080.jpg'),
      width: String(320 + n),
      height: '180',
      webhook_url: receiver.url(`/hook/${n}`),
    };
    const res = await call(api.base, 'POST', '/resize_image/', fields);
    if (res.status !== 202) throw new Error(`job ${n}: ${res.status} ${JSON.stringify(res.json)}`);
    return (res.json as { job_id: string }).job_id;
  };
  type View = { status: string; webhook: { delivered_at: string | null } | null };
  const view = async (id: string) => {
    const res = await call(api.base, 'GET', `/jobs/${id}`).catch(() => undefined);
    return res?.status === 200 ? (res.json as View) : undefined;
  };
  const warm = await submit(-1);
  await eventually(async () => Boolean((await view(warm))?.webhook?.delivered_at), 30_000);
  await sleep(1000);
  const baseline = { rssMiB: Math.round(await rssMiB(pid)), fds: await openFds(pid) };
  let peakRss = baseline.rssMiB;
  let peakFds = baseline.fds;
  const sampler = setInterval(() => {
    void rssMiB(pid).then((mib) => (peakRss = Math.max(peakRss, Math.round(mib))));
    void openFds(pid).then((n) => (peakFds = Math.max(peakFds, n)));
  }, 200);

  const started = performance.now();
  const ids = await Promise.all(Array.from({ length: JOBS }, (_, n) => submit(n)));
  const deliveredJobs = () =>
    new Set(
      receiver.deliveries
        .filter((d) => d.answered === 200 && d.headers['webhook-id'] !== `msg_${warm}`)
        .map((d) => d.headers['webhook-id']),
    ).size;
  // A worker killed with -9 after the first tenth of the webhooks, Redis restarted after the first third.
  await eventually(() => deliveredJobs() >= JOBS / 10, 60_000, 50);
  const killed = workers[0]!;
  killed.child.kill('SIGKILL');
  await killed.child;
  workers.push(await worker());
  await eventually(() => deliveredJobs() >= JOBS / 3, 60_000, 50);
  await redis.stop();
  const outageMs = 3000;
  await sleep(outageMs);
  await redis.start();

  const deadline = Date.now() + seconds * 1000;
  const views = new Map<string, Awaited<ReturnType<typeof view>>>();
  for (;;) {
    for (const id of ids) if (!views.get(id)?.webhook?.delivered_at) views.set(id, await view(id));
    if ([...views.values()].every((v) => v?.webhook?.delivered_at) || Date.now() > deadline) break;
    await sleep(250);
  }
  const elapsed = (performance.now() - started) / 1000;
  clearInterval(sampler);
  // Connections the API holds for a while after its last job (webhook sockets, Redis reconnects) may take a moment.
  const settled = Date.now();
  await eventually(async () => (await openFds(pid)) <= baseline.fds, 15_000, 250);
  const end = {
    rssMiB: Math.round(await rssMiB(pid)),
    fds: await openFds(pid),
    afterSeconds: Number(((Date.now() - settled) / 1000).toFixed(1)),
  };

  const logs = [api, ...workers].flatMap((proc) => proc.output().split('\n'));
  const endedLines = (id: string) =>
    logs.filter((line) => line.includes('"msg":"job ended"') && line.includes(`"job":"${id}"`)).length;
  const statuses: Record<string, number> = {};
  let endedTwice = 0;
  let notEnded = 0;
  let endedUnlogged = 0;
  let undelivered = 0;
  let repeats = 0;
  for (const id of ids) {
    const v = views.get(id);
    statuses[v?.status ?? 'missing'] = (statuses[v?.status ?? 'missing'] ?? 0) + 1;
    const lines = endedLines(id);
    if (lines > 1) endedTwice++;
    // A worker killed with -9 may take its last log lines with it: the record is what says a job ended.
    if (!['succeeded', 'failed', 'cancelled'].includes(v?.status ?? '')) notEnded++;
    if (lines === 0) endedUnlogged++;
    const mine = receiver.deliveries.filter((d) => d.headers['webhook-id'] === `msg_${id}`);
    if (!mine.some((d) => d.answered === 200) || !v?.webhook?.delivered_at) undelivered++;
    repeats += Math.max(0, mine.length - 1);
  }
  const healthAfter = (await call(api.base, 'GET', '/health')).status;
  for (const proc of [api, ...workers]) if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
  await Promise.all([api, ...workers].map((proc) => proc.child));
  await receiver.close();
  await redis.close();
  await rm(dataDir, { recursive: true, force: true });

  const report = {
    mode: 'restarts',
    jobs: JOBS,
    events: [
      'worker killed with -9 after 10% of the webhooks (a new one started)',
      `Redis stopped for ${outageMs / 1000} s after a third`,
    ],
    seconds: Number(elapsed.toFixed(1)),
    statuses,
    endedTwice,
    notEnded,
    endedUnlogged,
    undelivered,
    webhookRequests: receiver.deliveries.filter((d) => d.headers['webhook-id'] !== `msg_${warm}`).length,
    webhookRepeats: repeats,
    stalledAfterKill: logs.filter((line) => line.includes('a worker stopped during this job')).length,
    takenUpBySweep: logs.filter((line) => line.includes('no worker or queue holds this job')).length,
    endRetriedAfterOutage: logs.filter((line) => line.includes('done once Redis was back')).length,
    apiServer: { baseline, peak: { rssMiB: peakRss, fds: peakFds }, end },
    healthAfter,
  };
  console.log(JSON.stringify(report, null, 2));
  const problems: string[] = [];
  if (notEnded > 0) problems.push(`${notEnded} jobs did not end`);
  if (endedTwice > 0) problems.push(`${endedTwice} jobs ended twice`);
  if (undelivered > 0) problems.push(`${undelivered} webhooks not delivered`);
  if (end.rssMiB > baseline.rssMiB + MEMORY_TOLERANCE_MIB)
    problems.push(`API memory ${end.rssMiB} MiB after, ${baseline.rssMiB} MiB before`);
  if (end.fds > baseline.fds) problems.push(`API descriptors ${end.fds} after, ${baseline.fds} before`);
  if (healthAfter !== 200) problems.push(`/health answered ${healthAfter} afterwards`);
  console.log(
    problems.length === 0
      ? `all ${JOBS} jobs ended once and their webhooks were delivered; memory and descriptors back to baseline`
      : problems.join('\n'),
  );
  return problems.length === 0;
}
