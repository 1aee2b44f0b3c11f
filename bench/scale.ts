/**
 * `npm run bench:scale` (also the end of `npm run bench`): what Redis mode costs and gives, as
 * ratios measured in one run on this machine, everything on 127.0.0.1.
 *
 * - Workers scale: one API with no workers plus 1, then 2 `mediaflow worker` processes at
 *   concurrency 1, on a batch of CPU-bound jobs whose ffmpeg keeps one core busy (an Opus encode
 *   of 200 s of audio: libopus is single-threaded, and its work dwarfs reading the two inputs;
 *   an mp3 encode would not do: LAME is so fast that the input threads make it 1.1 cores), submitted
 *   asynchronously at once. Throughput = jobs / wall time
 *   to the last success. Target: 2 workers ≥ 1.8 × 1 worker.
 * - Queue overhead: p50 latency of a small synchronous image operation through `serve` with the
 *   embedded queue, then through `serve` on Redis (workers in the same process). Target: at most
 *   15 ms more.
 *
 * Options (environment): SCALE_JOBS (8), SCALE_REPEATS (3), SCALE_REQUESTS (40), SCALE_AUDIO_SECONDS (100).
 */
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { startRedis } from '../test/helpers/redis.js';
import { startServeProcess, startWorkerProcess, type ServeProcess } from '../test/helpers/serve-process.js';

const JOBS = Number(process.env.SCALE_JOBS ?? 8);
const REPEATS = Number(process.env.SCALE_REPEATS ?? 3);
const REQUESTS = Number(process.env.SCALE_REQUESTS ?? 40);
/** Seconds of each of the two audio inputs: long enough that ffmpeg, not the per-job bookkeeping, dominates. */
const AUDIO_SECONDS = Number(process.env.SCALE_AUDIO_SECONDS ?? 100);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Serves files of a folder on 127.0.0.1. */
async function serveFolder(dir: string) {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(req.url ?? ''));
    stat(file).then(
      (info) => {
        res.writeHead(200, { 'content-length': info.size });
        createReadStream(file).pipe(res);
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: (name: string) => `http://127.0.0.1:${port}/${name}`, close: () => new Promise((r) => server.close(r)) };
}

async function post(base: string, route: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const body = new FormData();
  for (const [key, value] of Object.entries(fields)) body.append(key, value);
  const res = await fetch(`${base}${route}`, { method: 'POST', body, headers });
  const json = (await res.json()) as Record<string, string>;
  if (res.status >= 300) throw new Error(`${route}: ${res.status} ${json.error}`);
  return json;
}

async function waitAll(base: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    for (;;) {
      const job = (await (await fetch(`${base}/jobs/${id}`)).json()) as { status: string; error?: unknown };
      if (job.status === 'succeeded') break;
      if (job.status === 'failed' || job.status === 'cancelled') throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function main() {
  const fixtures = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-scale-fixtures-'));
  // Audio as WAV: re-encoding it to Opus keeps one core busy.
  for (const [name, frequency] of [['a.wav', 440], ['b.wav', 660]] as const) {
    await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${AUDIO_SECONDS}:sample_rate=44100`, '-ac', '2', '-y', path.join(fixtures, name)]);
  }
  await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=300x200', '-frames:v', '1', '-y', path.join(fixtures, 'small.png')]);
  const files = await serveFolder(fixtures);
  const redis = await startRedis();
  const processes: ServeProcess[] = [];
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-scale-'));
  const env = { MEDIAFLOW_REDIS_URL: redis.url, MEDIAFLOW_LOG_LEVEL: 'warn', MEDIAFLOW_RETENTION: '0' };
  const stop = async (procs: ServeProcess[]) => {
    for (const proc of procs) proc.child.kill('SIGKILL');
    await Promise.all(procs.map((proc) => proc.child));
  };
  try {
    // 1. Workers scale.
    const api = await startServeProcess(dataDir, { ...env, MEDIAFLOW_WORKERS: '0', MEDIAFLOW_MAX_QUEUE: '1000' });
    processes.push(api);
    const batch = async () => {
      const started = performance.now();
      const ids: string[] = [];
      for (let n = 0; n < JOBS; n++) {
        ids.push((await post(api.base, '/merge-audios/', { audio_urls: `${files.url('a.wav')},${files.url('b.wav')}`, format: 'opus' }, { prefer: 'respond-async' })).job_id!);
      }
      await waitAll(api.base, ids);
      return JOBS / ((performance.now() - started) / 1000);
    };
    const throughput: Record<string, number[]> = { '1': [], '2': [] };
    const workers: ServeProcess[] = [await startWorkerProcess(dataDir, { ...env, MEDIAFLOW_CONCURRENCY: '1' })];
    await batch(); // warm-up: caches, first ffmpeg runs
    for (let r = 0; r < REPEATS; r++) throughput['1']!.push(await batch());
    workers.push(await startWorkerProcess(dataDir, { ...env, MEDIAFLOW_CONCURRENCY: '1' }));
    for (let r = 0; r < REPEATS; r++) throughput['2']!.push(await batch());
    await stop([...workers, api]);

    // 2. Queue overhead: the same small request through the embedded queue and through Redis.
    const latency = async (extra: Record<string, string>) => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-scale-lat-'));
      const server = await startServeProcess(dir, { MEDIAFLOW_LOG_LEVEL: 'warn', MEDIAFLOW_RETENTION: '0', MEDIAFLOW_CACHE_BYTES: String(1024 ** 3), ...extra });
      const times: number[] = [];
      try {
        for (let n = 0; n < REQUESTS + 5; n++) {
          const started = performance.now();
          await post(server.base, '/resize_image/', { image_url: files.url('small.png'), width: '64', height: '48' });
          if (n >= 5) times.push(performance.now() - started);
        }
      } finally {
        await stop([server]);
        await rm(dir, { recursive: true, force: true });
      }
      return median(times);
    };
    const embeddedP50 = await latency({});
    const redisP50 = await latency(env);

    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
      workersScale: {
        job: `merge-audios: 2 × ${AUDIO_SECONDS} s WAV re-encoded to Opus (single-threaded libopus)`,
        jobsPerBatch: JOBS,
        repeats: REPEATS,
        jobsPerSecond: { oneWorker: Number(median(throughput['1']!).toFixed(3)), twoWorkers: Number(median(throughput['2']!).toFixed(3)) },
        ratio: Number((median(throughput['2']!) / median(throughput['1']!)).toFixed(2)),
        target: '>= 1.8',
      },
      queueOverhead: {
        request: 'POST /resize_image/ (300x200 PNG to 64x48), synchronous, sequential, after 5 warm-up',
        requests: REQUESTS,
        p50Ms: { embedded: Number(embeddedP50.toFixed(1)), redis: Number(redisP50.toFixed(1)) },
        differenceMs: Number((redisP50 - embeddedP50).toFixed(1)),
        target: '<= 15 ms',
      },
    };
    console.table({
      'workers scale (jobs/s)': { '1 worker': result.workersScale.jobsPerSecond.oneWorker, '2 workers': result.workersScale.jobsPerSecond.twoWorkers, ratio: result.workersScale.ratio },
      'sync p50 (ms)': { embedded: result.queueOverhead.p50Ms.embedded, redis: result.queueOverhead.p50Ms.redis, difference: result.queueOverhead.differenceMs },
    });
    await mkdir(path.resolve(import.meta.dirname, 'results'), { recursive: true });
    const file = path.resolve(import.meta.dirname, 'results', `scale-${result.date.replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await stop(processes.filter((proc) => proc.child.exitCode === null));
    await Promise.all([redis.close(), files.close()]);
    await rm(dataDir, { recursive: true, force: true });
    await rm(fixtures, { recursive: true, force: true });
  }
}

await main();
