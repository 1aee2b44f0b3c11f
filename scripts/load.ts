/**
 * `npm run load`: drives a real `mediaflow serve` on loopback with many concurrent requests,
 * bounded in count and time, and reports throughput, latency percentiles, 503s, errors, lost
 * requests and the server's peak memory. Only 127.0.0.1 is ever contacted.
 *
 * Options (environment): LOAD_REQUESTS (default 240), LOAD_CLIENTS (24), LOAD_SECONDS (120),
 * LOAD_MAX_QUEUE (4), LOAD_CONCURRENCY (2).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fixtures } from '../test/helpers/fixtures.js';
import { startFileServer } from '../test/helpers/file-server.js';
import { startServeProcess } from '../test/helpers/serve-process.js';
import { rssMiB } from '../bench/memory.js';

const total = Number(process.env.LOAD_REQUESTS ?? 240);
const clients = Number(process.env.LOAD_CLIENTS ?? 24);
const seconds = Number(process.env.LOAD_SECONDS ?? 120);
const maxQueue = Number(process.env.LOAD_MAX_QUEUE ?? 4);
const concurrency = Number(process.env.LOAD_CONCURRENCY ?? 2);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main() {
  await fixtures('landscape-1920x1080.jpg', 'small-300x200.png');
  const files = await startFileServer();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-load-'));
  const serve = await startServeProcess(dataDir, {
    MEDIAFLOW_MAX_QUEUE: String(maxQueue),
    MEDIAFLOW_CONCURRENCY: String(concurrency),
    MEDIAFLOW_LOG_LEVEL: 'warn',
    // The server's own defaults, the event-loop guard included.
    MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '1000',
  });
  const pid = serve.child.pid!;
  // A mix of work: a heavy image resize, a light crop, and text-only subtitles.
  const requests = [
    { route: '/resize_image/', fields: { image_url: files.url('/f/landscape-1920x1080.jpg'), width: '640', height: '360' } },
    { route: '/crop_image_to_short/', fields: { image_url: files.url('/f/small-300x200.png') } },
    { route: '/generate-subtitles/', fields: { text: 'One two three. Four five six seven! Eight nine ten?', words_per_line: '4' } },
  ];
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
        if (res.status === 503) await new Promise((r) => setTimeout(r, 200));
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
  await files.close();
  await rm(dataDir, { recursive: true, force: true });

  const ok = outcomes.filter((o) => o.status === 200);
  const busy = outcomes.filter((o) => o.status === 503).length;
  const lost = outcomes.filter((o) => o.status === 0).length;
  const errors = outcomes.length - ok.length - busy - lost;
  const latencies = ok.map((o) => o.ms).sort((a, b) => a - b);
  const report = {
    requests: outcomes.length,
    clients,
    maxQueue,
    concurrency,
    seconds: Number(elapsed.toFixed(1)),
    ok: ok.length,
    busy503: busy,
    errors,
    lost,
    throughputOkPerSecond: Number((ok.length / elapsed).toFixed(2)),
    latencyMs: { p50: Math.round(percentile(latencies, 50)), p95: Math.round(percentile(latencies, 95)), p99: Math.round(percentile(latencies, 99)), max: Math.round(latencies.at(-1) ?? NaN) },
    serverPeakRssMiB: Math.round(peakRss),
    healthAfter,
  };
  console.log(JSON.stringify(report, null, 2));
  const answered = ok.length + busy === outcomes.length;
  console.log(answered ? 'every request got a result or a 503; none lost' : `${errors} errors, ${lost} lost`);
  process.exitCode = answered && healthAfter === 200 ? 0 : 1;
}

await main();
