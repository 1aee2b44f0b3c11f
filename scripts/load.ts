/**
 * `npm run load`: drives a real `mediaflow serve` on loopback with many concurrent clients, bounded
 * in count and time. Only 127.0.0.1 is ever contacted.
 *
 * LOAD_MODE picks the run:
 * - `sync` (the default): synchronous requests; reports throughput, latency percentiles, 503s,
 *   errors, lost requests and the server's peak memory.
 * - `async` (`npm run load:async`): asynchronous jobs with a `webhook_url` and a `metadata` echo,
 *   through a small queue, delivered to a flapping receiver (every 3rd request answered 500, every
 *   7th connection reset, a job turned away at most 3 times in a row) with signed webhooks and
 *   retries (back-off 0.5 s). Clients honour 503 + Retry-After (waiting at most 0.5 s) and
 *   resubmit under the same Idempotency-Key. Then every job is checked (`GET /jobs/<id>`, its
 *   output downloaded) and every webhook verified with the `standardwebhooks` package; reports
 *   accepted, 503s, succeeded/failed, delivered, duplicates, lost, webhook attempts, throughput and
 *   the server's memory at start, peak and end, and while the first and the second half of the jobs
 *   finished. Exits non-zero when a job is lost, fails or goes unsubmitted, or memory grows.
 * - `both`: `sync`, then `async`.
 * - `connections` (`npm run load:connections`): a connection flood, slow bodies and multipart bodies
 *   that never end, against a server with a lowered open-file limit (scripts/load-connections.ts has the
 *   phases and their options), then an MP3 with a 60 MB tag read again and again (scripts/load-big-tag.ts).
 * - `restarts` (`npm run load:restarts`): kill -9 and a Redis restart during 50 asynchronous jobs
 *   with webhooks, in Redis mode (scripts/load-restarts.ts).
 *
 * Options (environment): LOAD_MODE (sync), LOAD_REQUESTS (default 240, sync), LOAD_JOBS (200,
 * async), LOAD_CLIENTS (24), LOAD_SECONDS (120: bounds the requests, and in async mode the wait
 * for the last jobs and webhooks once more), LOAD_MAX_QUEUE (4), LOAD_CONCURRENCY (2).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { fixtures } from '../test/helpers/fixtures.js';
import { startFileServer, type FileServer } from '../test/helpers/file-server.js';
import { startServeProcess } from '../test/helpers/serve-process.js';
import { startWebhookReceiver, type Behaviour } from '../test/helpers/webhook-receiver.js';
import { rssMiB } from '../bench/memory.js';
import { runBigTag } from './load-big-tag.js';
import { runConnections } from './load-connections.js';
import { runRestarts } from './load-restarts.js';

const mode = process.env.LOAD_MODE ?? 'sync';
const total = Number(process.env.LOAD_REQUESTS ?? 240);
const jobCount = Number(process.env.LOAD_JOBS ?? 200);
const clients = Number(process.env.LOAD_CLIENTS ?? 24);
const seconds = Number(process.env.LOAD_SECONDS ?? 120);
const maxQueue = Number(process.env.LOAD_MAX_QUEUE ?? 4);
const concurrency = Number(process.env.LOAD_CONCURRENCY ?? 2);

/** An asynchronous client waits what Retry-After says, but never longer than this, so the run stays short. */
const RETRY_AFTER_CAP_MS = 500;
/**
 * Webhook retries: the first after 0.5 s (±20%), then about twice the previous wait; 8 attempts in all (the default).
 */
const WEBHOOK_BACKOFF = '0.5s';
const WEBHOOK_ATTEMPTS = 8;
/** The flapping receiver turns a job's webhook away at most this many times in a row. */
const MAX_REFUSALS = 3;
/**
 * The flapping receiver, deterministic in the order requests arrive (each job posts to its own
 * path, so `attempt` is that job's n-th request): every 7th request is cut off by a connection reset
 * before any answer, every other 3rd is answered 500 (9 of every 21 fail), the rest 200. A flapping
 * receiver is not a dead one: a job's 4th attempt always gets through, so no job waits out the long
 * end of the back-off (its 8th attempt would come a minute after its first) and the run stays short.
 */
function flappingPlan(): (path: string, attempt: number) => Behaviour {
  let request = 0;
  return (_path, attempt) => {
    const n = request++;
    if (attempt >= MAX_REFUSALS) return 200;
    return n % 7 === 6 ? 'reset' : n % 3 === 2 ? 500 : 200;
  };
}
/**
 * Memory counts as flat when the peak while the second half of the jobs finished is within this of the first half's.
 */
const FLAT_TOLERANCE = { ratio: 1.15, mib: 16 };

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (n: number) => Number(n.toFixed(1));

// A mix of work: a heavy image resize, a light crop, and text-only subtitles.
const workMix = (files: FileServer) => [
  {
    route: '/resize_image/',
    fields: { image_url: files.url('/f/landscape-1920x1080.jpg'), width: '640', height: '360' },
  },
  { route: '/crop_image_to_short/', fields: { image_url: files.url('/f/small-300x200.png') } },
  {
    route: '/generate-subtitles/',
    fields: { text: 'One two three. Four five six seven! Eight nine ten?', words_per_line: '4' },
  },
];

/** Samples a process's resident memory every `everyMs`, keeping every sample with its time. */
function sampleRss(pid: number, everyMs: number) {
  const samples: Array<{ at: number; mib: number }> = [];
  const take = () =>
    rssMiB(pid).then((mib) => {
      if (mib > 0) samples.push({ at: Date.now(), mib });
    });
  const timer = setInterval(() => void take(), everyMs);
  return {
    samples,
    take,
    stop: () => clearInterval(timer),
    peak: (from = -Infinity, to = Infinity) =>
      Math.max(0, ...samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.mib)),
  };
}

async function runSync(files: FileServer): Promise<boolean> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-load-'));
  const serve = await startServeProcess(dataDir, {
    MEDIAFLOW_MAX_QUEUE: String(maxQueue),
    MEDIAFLOW_CONCURRENCY: String(concurrency),
    MEDIAFLOW_LOG_LEVEL: 'warn',
    // The server's own defaults, the event-loop guard included.
    MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '1000',
  });
  const pid = serve.child.pid!;
  const requests = workMix(files);
  const outcomes: Array<{ status: number; ms: number }> = [];
  let peakRss = await rssMiB(pid);
  const sampler = setInterval(() => void rssMiB(pid).then((rss) => (peakRss = Math.max(peakRss, rss))), 100);
  const deadline = Date.now() + seconds * 1000;
  let issued = 0;
  const started = performance.now();

  async function client() {
    while (issued < total && Date.now() < deadline) {
      const { route, fields } = requests[issued++ % requests.length]!;
      const body = new FormData();
      for (const [k, v] of Object.entries(fields)) body.append(k, v);
      const t0 = performance.now();
      try {
        const res = await fetch(`${serve.base}${route}`, { method: 'POST', body, signal: AbortSignal.timeout(60_000) });
        await res.arrayBuffer();
        outcomes.push({ status: res.status, ms: performance.now() - t0 });
        // A 503 says when to come back; a well-behaved client waits a little.
        if (res.status === 503) await sleep(200);
      } catch {
        outcomes.push({ status: 0, ms: performance.now() - t0 });
      }
    }
  }
  await Promise.all(Array.from({ length: clients }, client));
  const elapsed = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const healthAfter = (await fetch(`${serve.base}/health`)).status;
  serve.child.kill('SIGTERM');
  await serve.child;
  await rm(dataDir, { recursive: true, force: true });

  const ok = outcomes.filter((o) => o.status === 200);
  const busy = outcomes.filter((o) => o.status === 503).length;
  const lost = outcomes.filter((o) => o.status === 0).length;
  const errors = outcomes.length - ok.length - busy - lost;
  const latencies = ok.map((o) => o.ms).sort((a, b) => a - b);
  const report = {
    mode: 'sync',
    requests: outcomes.length,
    clients,
    maxQueue,
    concurrency,
    seconds: round1(elapsed),
    ok: ok.length,
    busy503: busy,
    errors,
    lost,
    throughputOkPerSecond: Number((ok.length / elapsed).toFixed(2)),
    latencyMs: {
      p50: Math.round(percentile(latencies, 50)),
      p95: Math.round(percentile(latencies, 95)),
      p99: Math.round(percentile(latencies, 99)),
      max: Math.round(latencies.at(-1) ?? NaN),
    },
    serverPeakRssMiB: Math.round(peakRss),
    healthAfter,
  };
  console.log(JSON.stringify(report, null, 2));
  const answered = ok.length + busy === outcomes.length;
  console.log(answered ? 'every request got a result or a 503; none lost' : `${errors} errors, ${lost} lost`);
  return answered && healthAfter === 200;
}

/** One job as the client knows it: what it sent, and what the server answered. */
interface Submitted {
  seq: number;
  metadata: string;
  jobId?: string;
  /** 202 answers for this seq; more than one only after a resubmission under the same Idempotency-Key. */
  accepted: number;
  /** A non-202, non-503 answer that ended the submission. */
  refused?: string;
}

async function runAsync(files: FileServer): Promise<boolean> {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const receiver = await startWebhookReceiver(flappingPlan());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-load-async-'));
  const serve = await startServeProcess(dataDir, {
    MEDIAFLOW_MAX_QUEUE: String(maxQueue),
    MEDIAFLOW_CONCURRENCY: String(concurrency),
    MEDIAFLOW_LOG_LEVEL: 'warn',
    MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '1000',
    MEDIAFLOW_WEBHOOK_SECRET: secret,
    MEDIAFLOW_WEBHOOK_BACKOFF: WEBHOOK_BACKOFF,
    MEDIAFLOW_WEBHOOK_ATTEMPTS: String(WEBHOOK_ATTEMPTS),
  });
  const pid = serve.child.pid!;
  const rss = sampleRss(pid, 200);
  await rss.take();
  const rssStart = rss.samples[0]?.mib ?? NaN;
  const requests = workMix(files);
  const run = randomUUID().slice(0, 8);
  // Signatures are checked as requests arrive: the verifier refuses timestamps more than 5 minutes old.
  const verifier = new Webhook(secret);
  const signatures = { bad: 0, tamperedAccepted: 0 };
  let verified = 0;
  const verifyArrived = () => {
    for (const d of receiver.deliveries.slice(verified)) {
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(d.headers[h] ?? '')]),
      );
      try {
        verifier.verify(d.body, headers);
      } catch {
        signatures.bad++;
      }
      // The check itself must be able to fail: one changed byte is refused.
      try {
        verifier.verify(`${d.body} `, headers);
        signatures.tamperedAccepted++;
      } catch {
        // refused, as it should be
      }
    }
    verified = receiver.deliveries.length;
  };
  const verifying = setInterval(verifyArrived, 200);
  const jobs: Submitted[] = Array.from({ length: jobCount }, (_, seq) => ({
    seq,
    metadata: JSON.stringify({ client: 'load', run, seq }),
    accepted: 0,
  }));
  const counts = { busy503: 0, busy503WithoutRetryAfter: 0, networkErrors: 0, replays: 0 };
  const started = performance.now();
  const startedAt = Date.now();
  const submitDeadline = Date.now() + seconds * 1000;
  let next = 0;

  /**
   * Submits one job until it is accepted, refused, or time is up; a 503 or a lost answer is retried under the same key.
   */
  async function submit(job: Submitted) {
    const { route, fields } = requests[job.seq % requests.length]!;
    while (Date.now() < submitDeadline) {
      const body = new FormData();
      for (const [k, v] of Object.entries(fields)) body.append(k, v);
      body.append('webhook_url', receiver.url(`/hook/${job.seq}`));
      body.append('metadata', job.metadata);
      let res: Response;
      try {
        res = await fetch(`${serve.base}${route}`, {
          method: 'POST',
          body,
          headers: { 'idempotency-key': `load-${run}-${job.seq}` },
          signal: AbortSignal.timeout(30_000),
        });
      } catch {
        // No answer: the job may or may not exist. The same Idempotency-Key makes asking again safe.
        counts.networkErrors++;
        await sleep(RETRY_AFTER_CAP_MS);
        continue;
      }
      const text = await res.text();
      if (res.status === 202) {
        const { job_id: jobId } = JSON.parse(text) as { job_id: string };
        if (job.jobId !== undefined && job.jobId !== jobId)
          job.refused = `a resubmission got another job (${job.jobId}, then ${jobId})`;
        if (job.accepted > 0) counts.replays++;
        job.jobId ??= jobId;
        job.accepted++;
        return;
      }
      if (res.status === 503) {
        counts.busy503++;
        const retryAfter = res.headers.get('retry-after');
        if (retryAfter === null) counts.busy503WithoutRetryAfter++;
        const wait =
          retryAfter === null || !Number.isFinite(Number(retryAfter)) ? RETRY_AFTER_CAP_MS : Number(retryAfter) * 1000;
        await sleep(Math.min(wait, RETRY_AFTER_CAP_MS));
        continue;
      }
      job.refused = `HTTP ${res.status}: ${text.slice(0, 200)}`;
      return;
    }
  }
  async function client() {
    while (next < jobs.length && Date.now() < submitDeadline) await submit(jobs[next++]!);
  }
  await Promise.all(Array.from({ length: clients }, client));
  const submitSeconds = (performance.now() - started) / 1000;

  // Wait until every accepted job's webhook has been answered 2xx by the receiver, and the server has recorded it.
  const accepted = jobs.filter((job) => job.jobId !== undefined);
  const byJobId = new Map(accepted.map((job) => [job.jobId!, job]));
  const delivered = () =>
    new Set(receiver.deliveries.filter((d) => d.answered === 200).map((d) => String(d.json.job_id)));
  const drainDeadline = Date.now() + seconds * 1000;
  while (Date.now() < drainDeadline && accepted.some((job) => !delivered().has(job.jobId!))) await sleep(250);
  const views = new Map<string, JobViewLite | undefined>();
  const fetchView = async (id: string) => {
    const res = await fetch(`${serve.base}/jobs/${id}`);
    return res.status === 200 ? ((await res.json()) as JobViewLite) : undefined;
  };
  // The receiver may see a 2xx a moment before the server has written `delivered_at`.
  for (;;) {
    for (const job of accepted) {
      const known = views.get(job.jobId!);
      if (!known?.webhook?.delivered_at) views.set(job.jobId!, await fetchView(job.jobId!));
    }
    if ([...views.values()].every((v) => v?.webhook?.delivered_at) || Date.now() > drainDeadline) break;
    await sleep(250);
  }
  const elapsed = (performance.now() - started) / 1000;
  clearInterval(verifying);
  verifyArrived();
  await sleep(1000);
  await rss.take();
  rss.stop();
  const rssEnd = rss.samples.at(-1)?.mib ?? NaN;

  // Every succeeded job's output is there to download.
  let outputsMissing = 0;
  for (const view of views.values()) {
    if (view?.status !== 'succeeded') continue;
    const url = view.result
      ? Object.values(view.result).find((v): v is string => typeof v === 'string' && v.includes('/uploads/'))
      : undefined;
    if (!url) {
      outputsMissing++;
      continue;
    }
    const res = await fetch(url);
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200 || bytes === 0) outputsMissing++;
  }
  const healthAfter = (await fetch(`${serve.base}/health`)).status;
  serve.child.kill('SIGTERM');
  await serve.child;
  await receiver.close();
  await rm(dataDir, { recursive: true, force: true });

  // Every request the receiver saw, whatever it answered: a valid signature (above), a known job
  // posted to its own URL with its metadata and the result `GET /jobs/<id>` shows, the same id and
  // body on every attempt.
  const check = {
    badSignatures: signatures.bad,
    tamperedSignaturesAccepted: signatures.tamperedAccepted,
    unknownJobs: 0,
    metadataMismatches: 0,
    resultMismatches: 0,
    bodyChangedBetweenAttempts: 0,
    idsPerJobOverOne: 0,
    notSucceededInWebhook: 0,
  };
  const bodyOf = new Map<string, string>();
  const idsOf = new Map<string, Set<string>>();
  const okReceipts = new Map<string, number>();
  for (const d of receiver.deliveries) {
    const id = String(d.headers['webhook-id'] ?? '');
    const jobId = String(d.json.job_id);
    const job = byJobId.get(jobId);
    if (!job) check.unknownJobs++;
    else if (d.json.metadata !== job.metadata || d.path !== `/hook/${job.seq}`) check.metadataMismatches++;
    if (JSON.stringify(d.json.result) !== JSON.stringify(views.get(jobId)?.result)) check.resultMismatches++;
    if (d.json.status !== 'succeeded') check.notSucceededInWebhook++;
    if (bodyOf.has(id) && bodyOf.get(id) !== d.body) check.bodyChangedBetweenAttempts++;
    bodyOf.set(id, d.body);
    idsOf.set(jobId, (idsOf.get(jobId) ?? new Set()).add(id));
    if (d.answered === 200) okReceipts.set(id, (okReceipts.get(id) ?? 0) + 1);
  }
  check.idsPerJobOverOne = [...idsOf.values()].filter((ids) => ids.size > 1).length;

  const statuses: Record<string, number> = {};
  const attempts: Record<string, number> = {};
  const finishedAt: number[] = [];
  let lost = 0;
  const deliveredJobs = delivered();
  for (const job of accepted) {
    const view = views.get(job.jobId!);
    const status = view?.status ?? 'missing';
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (view?.finished_at) finishedAt.push(Date.parse(view.finished_at));
    if (view?.webhook) attempts[view.webhook.attempts] = (attempts[view.webhook.attempts] ?? 0) + 1;
    const terminal = status === 'succeeded' || status === 'failed' || status === 'cancelled';
    if (!terminal || !deliveredJobs.has(job.jobId!) || !view?.webhook?.delivered_at) lost++;
  }
  // Memory while the first half of the jobs finished, against while the second half did.
  finishedAt.sort((a, b) => a - b);
  const middle = finishedAt[Math.floor(finishedAt.length / 2)] ?? Infinity;
  const last = finishedAt.at(-1) ?? Infinity;
  // From the first submission to the last job's end: the work itself, without the webhook retries after it.
  const processingSeconds = (last - startedAt) / 1000;
  const firstHalfPeak = rss.peak(-Infinity, middle);
  const secondHalfPeak = rss.peak(middle, last);
  const quarter = (q: number) => finishedAt[Math.floor((q * finishedAt.length) / 4)] ?? Infinity;
  const byQuarter = [0, 1, 2, 3].map((q) =>
    Math.round(rss.peak(q === 0 ? -Infinity : quarter(q), q === 3 ? last : quarter(q + 1))),
  );
  const flat = secondHalfPeak <= firstHalfPeak * FLAT_TOLERANCE.ratio + FLAT_TOLERANCE.mib;

  const unsubmitted = jobs.filter((job) => job.jobId === undefined);
  const succeeded = statuses.succeeded ?? 0;
  const duplicates = [...okReceipts.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  const report = {
    mode: 'async',
    jobs: jobCount,
    clients,
    maxQueue,
    concurrency,
    webhook: {
      backoff: WEBHOOK_BACKOFF,
      attempts: WEBHOOK_ATTEMPTS,
      receiver: `every 7th request reset, every other 3rd answered 500, a job's ${MAX_REFUSALS + 1}th attempt 200`,
    },
    seconds: round1(elapsed),
    submitSeconds: round1(submitSeconds),
    processingSeconds: round1(processingSeconds),
    accepted: accepted.length,
    unsubmitted: unsubmitted.length,
    refused: jobs.filter((job) => job.refused).length,
    busy503: counts.busy503,
    busy503WithoutRetryAfter: counts.busy503WithoutRetryAfter,
    submitNetworkErrors: counts.networkErrors,
    idempotentReplays: counts.replays,
    statuses,
    succeeded,
    failed: accepted.length - succeeded,
    outputsMissing,
    webhookRequests: receiver.deliveries.length,
    webhookAnswers: {
      '200': receiver.deliveries.filter((d) => d.answered === 200).length,
      '500': receiver.deliveries.filter((d) => d.answered === 500).length,
      reset: receiver.deliveries.filter((d) => d.answered === 'reset').length,
    },
    delivered: okReceipts.size,
    duplicates,
    lost,
    ...check,
    webhookAttemptsHistogram: attempts,
    jobsPerSecond: Number((succeeded / processingSeconds).toFixed(2)),
    serverRssMiB: {
      start: Math.round(rssStart),
      peak: Math.round(rss.peak()),
      end: Math.round(rssEnd),
      peakFirstHalfOfJobs: Math.round(firstHalfPeak),
      peakSecondHalfOfJobs: Math.round(secondHalfPeak),
      peakByQuarterOfJobs: byQuarter,
      samples: rss.samples.length,
    },
    healthAfter,
  };
  console.log(JSON.stringify(report, null, 2));

  const problems: string[] = [];
  if (unsubmitted.length > 0)
    problems.push(`${unsubmitted.length} jobs not accepted within ${seconds} s (raise LOAD_SECONDS)`);
  for (const job of jobs.filter((j) => j.refused)) problems.push(`job ${job.seq} refused: ${job.refused}`);
  if (lost > 0) problems.push(`${lost} jobs lost (no final state, or no delivered webhook)`);
  if (succeeded !== accepted.length)
    problems.push(`${accepted.length - succeeded} jobs did not succeed: ${JSON.stringify(statuses)}`);
  for (const job of accepted) {
    const view = views.get(job.jobId!);
    if (view?.status === 'succeeded') continue;
    problems.push(
      `  job ${job.seq} (${job.jobId}, ${view?.name ?? '?'}): ${view?.status ?? 'no record'}` +
        `${view?.error ? `, ${view.error.status} ${view.error.error}` : ''}`,
    );
    // What the server logged about it, less the webhook retries.
    for (const line of serve.output().split('\n')) {
      if (line.includes(job.jobId!) && !line.includes('webhook')) problems.push(`    ${line.slice(0, 1000)}`);
    }
  }
  if (outputsMissing > 0) problems.push(`${outputsMissing} outputs could not be downloaded`);
  if (okReceipts.size !== accepted.length)
    problems.push(`${okReceipts.size} webhooks delivered for ${accepted.length} jobs`);
  for (const [name, n] of Object.entries(check)) if (n > 0) problems.push(`${name}: ${n}`);
  if (!flat)
    problems.push(
      `server memory grew: peak ${Math.round(firstHalfPeak)} MiB over the first half of the ` +
        `jobs, ${Math.round(secondHalfPeak)} MiB over the second`,
    );
  if (healthAfter !== 200) problems.push(`/health answered ${healthAfter} afterwards`);
  console.log(
    problems.length === 0
      ? `all ${jobCount} jobs accepted, succeeded and their webhooks delivered and verified; none lost; memory flat`
      : problems.join('\n'),
  );
  return problems.length === 0;
}

/** The fields of `GET /jobs/<id>` this script reads. */
interface JobViewLite {
  name: string;
  status: string;
  error: { status: number; error: string } | null;
  finished_at: string | null;
  result: Record<string, unknown> | null;
  webhook: { attempts: number; delivered_at: string | null } | null;
}

async function main() {
  const modes = ['sync', 'async', 'both', 'connections', 'restarts'];
  if (!modes.includes(mode)) throw new Error(`Expected LOAD_MODE to be one of ${modes.join(', ')}, got ${mode}`);
  if (mode === 'connections') {
    const passed = [await runConnections(), await runBigTag()];
    process.exitCode = passed.every(Boolean) ? 0 : 1;
    return;
  }
  await fixtures('landscape-1920x1080.jpg', 'small-300x200.png');
  const files = await startFileServer();
  let ok = true;
  try {
    if (mode === 'restarts') ok = await runRestarts(files, seconds);
    if (mode === 'sync' || mode === 'both') ok = (await runSync(files)) && ok;
    if (mode === 'async' || mode === 'both') ok = (await runAsync(files)) && ok;
  } finally {
    await files.close();
  }
  process.exitCode = ok ? 0 : 1;
}

await main();
