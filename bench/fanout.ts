/**
 * The fan-out benchmark (`npm run bench:scale` runs it after bench/scale.ts; `npm run bench:fanout` alone): one long
 * convert-video with a re-encode to H.264, split into parts that workers encode at once (docs/fanout.md), against
 * the same job in one pass. Everything runs on 127.0.0.1: Redis, s3rver as the bucket, the API and the workers.
 *
 * - Workers: an API with MEDIAFLOW_WORKERS=0 and 1, then 2 (then 3, where the machine has a third core)
 *   `mediaflow worker` processes at concurrency 1, each pinned to a core of its own with taskset, standing in for
 *   separate machines. Targets: 2 workers at least 1.8 times as fast as one, 3 at least 2.5 times. With fewer
 *   cores than 3, the 3-worker time is projected from the 2-worker run's part timings (read from the parts'
 *   BullMQ jobs): its time outside the parts, plus the parts the engine would plan for 3 workers (part-plan.ts,
 *   on the fixture's keyframes), each taking the measured encode time per second of input, scheduled in queue
 *   order on 3 workers. The same projection for 2 workers is printed beside the measured time, to show how far
 *   the model is off.
 * - Cost on one machine: the same job on one pinned worker in one pass (fanout=false) against fan-out with no
 *   spare worker (its parts one after another on the same core); and an embedded `serve` on the whole machine,
 *   fan-out on against off. Target: fan-out costs at most 5% more.
 * - The set-ups run there and back (one pass, fan-out on 1, 2 (3) workers, then back to one pass; embedded: one
 *   pass, fan-out, one pass), the middle one once, and each is taken at its mean: this VM's speed drifts by a tenth
 *   between runs minutes apart (the same one-pass job took from 541 to 664 s in five runs of this bench),
 *   which one run of each would read as a cost or a gain of fan-out. A linear drift weighs on every set-up alike.
 * Each run waits (at most 30 s) for an idle second first; a run during which other processes took more than
 * FANOUT_MAX_OTHER_CORES of a core is marked disturbed.
 *
 * Options (environment): FANOUT_MEDIA_SECONDS (600), FANOUT_SIZE (1920x1080), FANOUT_RUNS (all of
 * `single,one,two,three,embedded`), FANOUT_MAX_OTHER_CORES (0.15), FANOUT_ONCE (1: each set-up once, no way back).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../test/helpers/redis.js';
import { startS3, type TestS3 } from '../test/helpers/s3-server.js';
import { startServeProcess, startWorkerProcess, type ServeProcess } from '../test/helpers/serve-process.js';
import { processSeconds, TICKS } from './cpu.js';
import { partLength, planParts } from '../src/engine/run/fanout/part-plan.js';
import { CACHE } from './fixtures.js';
import { idleMachine, machineSeconds, post, serveFolder, waitAll } from './jobs-kit.js';

const MEDIA_SECONDS = Number(process.env.FANOUT_MEDIA_SECONDS ?? 600);
const SIZE = process.env.FANOUT_SIZE ?? '1920x1080';
const RUNS = new Set((process.env.FANOUT_RUNS ?? 'single,one,two,three,embedded').split(','));
const MAX_OTHER_CORES = Number(process.env.FANOUT_MAX_OTHER_CORES ?? 0.15);
const THERE_AND_BACK = process.env.FANOUT_ONCE !== '1';
const CORES = os.cpus().length;
/** The fixture's frame rate and keyframe interval, which the projection plans its parts on. */
const FPS = 30;
const GOP = 60;
/** MEDIAFLOW_PART_SECONDS as the workers have it (the default). */
const PART_SECONDS = 60;
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

/** The input, made once and cached: MPEG-4 Part 2 (so an mp4 output re-encodes it), a keyframe every 2 s, AAC. */
async function fixture(): Promise<string> {
  const file = path.join(CACHE, `fanout-${MEDIA_SECONDS}s-${SIZE}.mp4`);
  if (existsSync(file)) return file;
  await mkdir(CACHE, { recursive: true });
  const partial = `${file}.partial.mp4`;
  console.log(`making ${path.relative(process.cwd(), file)} (once; minutes for 10 minutes of 1080p)`);
  await execa('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${SIZE}:rate=${FPS}:duration=${MEDIA_SECONDS}`],
    ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${MEDIA_SECONDS}:sample_rate=48000`],
    ...['-c:v', 'mpeg4', '-q:v', '8', '-g', String(GOP), '-c:a', 'aac', '-ac', '2', '-shortest', partial],
  ]);
  await rename(partial, file);
  return file;
}

/** One measured job: its wall time, the CPU its workers (and their ffmpeg) used, and its parts' timings. */
interface Run {
  name: string;
  workers: number;
  fanout: boolean;
  seconds: number;
  workerCpuSeconds?: number;
  otherCores?: number;
  disturbed: boolean;
  frames: number;
  /** Each part's time on its worker, in queue order (audio last), from its BullMQ job; none in one pass. */
  parts?: Array<{ name: string; seconds: number }>;
}

/** The mean of runs of one set-up: their mean time and CPU (the first run's parts); disturbed if any was. */
function meanOf(runs: readonly Run[]): Run {
  const mean = (pick: (run: Run) => number | undefined) => {
    const values = runs.map(pick);
    return values.every((value) => value !== undefined)
      ? round(values.reduce((a, b) => a + b, 0) / values.length, 1)
      : undefined;
  };
  const cpu = mean((run) => run.workerCpuSeconds);
  return {
    ...runs[0]!,
    seconds: mean((run) => run.seconds)!,
    ...(cpu !== undefined ? { workerCpuSeconds: cpu } : {}),
    disturbed: runs.some((run) => run.disturbed),
  };
}

/** Runs the set-ups in order and back again (A B C B A; THERE_AND_BACK), and gives each one's mean run. */
async function thereAndBack<K extends string>(
  setups: ReadonlyArray<readonly [K, () => Promise<Run>]>,
): Promise<Map<K, Run>> {
  const order = THERE_AND_BACK ? [...setups, ...setups.slice(0, -1).reverse()] : setups;
  const runs = new Map<K, Run[]>();
  for (const [name, run] of order) runs.set(name, [...(runs.get(name) ?? []), await run()]);
  return new Map([...runs].map(([name, list]) => [name, meanOf(list)]));
}

/** The video frames of an output, counted from its packets. */
async function frameCount(url: string): Promise<number> {
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v:0', '-count_packets'],
    ...['-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', url],
  ]);
  return Number(stdout.trim());
}

/** The parts of the job whose output id is `id`, as their BullMQ jobs recorded them: seconds from taken to done. */
async function partTimings(redisUrl: string, id: string): Promise<Array<{ name: string; seconds: number }>> {
  const redis = new Redis(redisUrl);
  try {
    const keys = (await redis.keys(`mediaflow:parts:${id}-*`)).sort();
    const parts = await Promise.all(
      keys.map(async (key) => {
        const [taken, done] = await redis.hmget(key, 'processedOn', 'finishedOn');
        return { name: key.slice(key.lastIndexOf('-fanout-') + 8), seconds: (Number(done) - Number(taken)) / 1000 };
      }),
    );
    // Queue order: the video parts by number, the sound last (it is queued last).
    return parts.sort((a, b) => (a.name === 'audio' ? 1 : b.name === 'audio' ? -1 : a.name.localeCompare(b.name)));
  } finally {
    redis.disconnect();
  }
}

/** Parts in queue order on `workers` workers, each taking the next part when free: the time until the last ends. */
function makespan(parts: ReadonlyArray<{ seconds: number }>, workers: number): number {
  const free = Array.from({ length: workers }, () => 0);
  for (const part of parts) {
    const next = free.indexOf(Math.min(...free));
    free[next]! += part.seconds;
  }
  return Math.max(...free);
}

/**
 * A run's time for `workers` workers: its time outside its parts (planning, files to and from the store, the join,
 * publishing), plus the parts the engine plans for that many slots on the fixture's keyframes (FPS, GOP), each
 * taking the run's measured encode time per second of input, and the sound as it took, scheduled in queue order.
 */
function projected(run: Run, workers: number): number {
  const parts = run.parts ?? [];
  const video = parts.filter((part) => part.name !== 'audio');
  const perSecond = video.reduce((sum, part) => sum + part.seconds, 0) / MEDIA_SECONDS;
  const frames = Array.from({ length: MEDIA_SECONDS * FPS }, (_, i) => i / FPS);
  const packets = { times: frames, keyframes: frames.filter((_, i) => i % GOP === 0), printed: new Map() };
  const planned = planParts(packets, partLength(MEDIA_SECONDS, PART_SECONDS, workers)).map((span) => ({
    seconds: span.seconds * perSecond,
  }));
  const sound = parts.filter((part) => part.name === 'audio');
  const outside = run.seconds - makespan(parts, run.workers);
  return round(outside + makespan([...planned, ...sound], workers), 1);
}

async function main() {
  const input = await fixture();
  const files = await serveFolder(path.dirname(input));
  const scratch: string[] = [];
  const procs = new Set<ServeProcess>();
  let redis: TestRedis | undefined;
  let s3: TestS3 | undefined;
  const stop = async (...list: ServeProcess[]) => {
    for (const proc of list) proc.child.kill('SIGKILL');
    await Promise.all(list.map((proc) => proc.child));
    for (const proc of list) procs.delete(proc);
  };
  const runs: Run[] = [];
  try {
    const quiet = {
      MEDIAFLOW_LOG_LEVEL: 'warn',
      MEDIAFLOW_RETENTION: '0',
      MEDIAFLOW_JOB_TIMEOUT: '3h',
      MEDIAFLOW_MAX_INPUT_BYTES: String(8 * 1024 ** 3),
      MEDIAFLOW_DOWNLOAD_TIMEOUT: '30m',
    };
    const job = (fanout: boolean) => ({
      video_url: files.url(path.basename(input)),
      format: 'mp4',
      fanout: String(fanout),
    });
    /** Runs the job once on `api`; `workers` are the processes whose CPU counts (the API itself when embedded). */
    const measure = async (name: string, api: ServeProcess, workers: ServeProcess[], fanout: boolean): Promise<Run> => {
      const queued = workers.some((worker) => worker !== api);
      await idleMachine(MAX_OTHER_CORES);
      const cpu = async () =>
        TICKS
          ? {
              machine: await machineSeconds(),
              ours: (await Promise.all([...new Set([api, ...workers])].map((p) => processSeconds(p.child.pid)))).reduce(
                (a, b) => a + b,
                0,
              ),
              workers: (await Promise.all(workers.map((p) => processSeconds(p.child.pid)))).reduce((a, b) => a + b, 0),
            }
          : undefined;
      const before = await cpu();
      const started = performance.now();
      const id = (await post(api.base, '/convert-video/', job(fanout), { prefer: 'respond-async' })).job_id!;
      const [result] = await waitAll(api.base, [id]);
      const seconds = (performance.now() - started) / 1000;
      const after = await cpu();
      const otherCores =
        before && after
          ? Math.max(0, (after.machine - before.machine - (after.ours - before.ours)) / seconds)
          : undefined;
      const outputId = /uploads\/([0-9a-f-]{36})_input_video/.exec(result!.output_file!)?.[1];
      const parts = fanout && queued && redis && outputId ? await partTimings(redis.url, outputId) : undefined;
      const run: Run = {
        name,
        workers: workers.length,
        fanout,
        seconds: round(seconds, 1),
        ...(before && after ? { workerCpuSeconds: round(after.workers - before.workers, 1) } : {}),
        ...(otherCores !== undefined ? { otherCores: round(otherCores, 2) } : {}),
        disturbed: otherCores !== undefined && otherCores > MAX_OTHER_CORES,
        frames: await frameCount(result!.output_file!),
        ...(parts && parts.length > 0 ? { parts } : {}),
      };
      const videoParts = parts?.filter((part) => part.name !== 'audio').length;
      console.log(
        `${name}: ${run.seconds} s, worker CPU ${run.workerCpuSeconds ?? '?'} s, ${run.frames} frames` +
          (videoParts ? `, ${videoParts} parts` : '') +
          (run.disturbed ? ` (disturbed: ${run.otherCores} cores)` : ''),
      );
      runs.push(run);
      return run;
    };

    // Redis mode: an API that works no job, and workers pinned to a core each.
    redis = await startRedis();
    s3 = await startS3('mediaflow-bench');
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-fanout-'));
    scratch.push(dataDir);
    const env = { ...quiet, ...s3.env, MEDIAFLOW_REDIS_URL: redis.url };
    const api = await startServeProcess(dataDir, { ...env, MEDIAFLOW_WORKERS: '0' });
    procs.add(api);
    const workers: ServeProcess[] = [];
    /** Starts or stops pinned workers until `count` run, the first on core 0, the next on core 1, ... */
    const pinnedWorkers = async (count: number) => {
      while (workers.length > count) await stop(workers.pop()!);
      while (workers.length < count) {
        const worker = await startWorkerProcess(dataDir, { ...env, MEDIAFLOW_CONCURRENCY: '1' }, [
          'taskset',
          '-c',
          String(workers.length),
        ]);
        procs.add(worker);
        workers.push(worker);
      }
    };
    const onPinned = (count: number, name: string, fanout: boolean) => async () => {
      await pinnedWorkers(count);
      return measure(name, api, workers, fanout);
    };
    const pinned = await thereAndBack(
      [
        ['single', onPinned(1, 'one pinned worker, one pass', false)] as const,
        ['one', onPinned(1, 'one pinned worker, fan-out', true)] as const,
        ['two', onPinned(2, 'two pinned workers, fan-out', true)] as const,
        ['three', onPinned(3, 'three pinned workers, fan-out', true)] as const,
      ].filter(([name]) => RUNS.has(name) && (name !== 'two' || CORES >= 2) && (name !== 'three' || CORES >= 3)),
    );
    const single = pinned.get('single');
    const one = pinned.get('one');
    const two = pinned.get('two');
    const three = pinned.get('three');
    await stop(...procs);

    // One machine, embedded: the whole machine's cores, fan-out on and off.
    let embedded: { on: Run; off: Run } | undefined;
    if (RUNS.has('embedded')) {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-fanout-embedded-'));
      scratch.push(dir);
      const serve = await startServeProcess(dir, quiet);
      procs.add(serve);
      // The server's own process runs the ffmpeg: it counts as the worker.
      const both = await thereAndBack([
        ['off', () => measure('embedded, one pass', serve, [serve], false)],
        ['on', () => measure('embedded, fan-out', serve, [serve], true)],
      ]);
      embedded = { on: both.get('on')!, off: both.get('off')! };
      await stop(serve);
    }

    const project = (run: Run | undefined, workers: number) => (run?.parts ? projected(run, workers) : undefined);
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpus: CORES,
        model: os.cpus()[0]?.model,
        ffmpeg: (await execa('ffmpeg', ['-version'])).stdout.split('\n')[0],
      },
      job:
        `convert-video to mp4 of ${MEDIA_SECONDS} s of ${SIZE} MPEG-4 Part 2 at 30 fps (a keyframe every 2 s) with ` +
        'AAC: the picture re-encoded to H.264 (veryfast, CRF 23), the sound copied',
      setup:
        'Redis mode on 127.0.0.1: an API with MEDIAFLOW_WORKERS=0, workers at concurrency 1 each pinned to a core ' +
        '(taskset), s3rver as the bucket; parts of MEDIAFLOW_PART_SECONDS (60 s)',
      speedup: {
        twoWorkers: one && two ? round(one.seconds / two.seconds, 2) : null,
        threeWorkers: one && three ? round(one.seconds / three.seconds, 2) : null,
        targets: { twoWorkers: '>= 1.8', threeWorkers: '>= 2.5' },
      },
      projection: {
        method:
          "the 2-worker run's time outside its parts, plus the parts planned for N workers, each taking the run's " +
          'encode time per second of input, scheduled in queue order on N workers',
        twoWorkers: project(two, 2),
        twoWorkersMeasured: two?.seconds ?? null,
        threeWorkers: project(two, 3),
        threeWorkersSpeedup: one && project(two, 3) ? round(one.seconds / project(two, 3)!, 2) : null,
      },
      order: THERE_AND_BACK
        ? 'each set-up there and back (one pass, fan-out on 1, 2 workers, back to one pass; embedded: one pass, ' +
          'fan-out, one pass), taken at its mean'
        : 'each set-up once',
      costOnOneMachine: {
        pinnedWorker: single && one ? round(one.seconds / single.seconds, 3) : null,
        pinnedWorkerCpu:
          single?.workerCpuSeconds && one?.workerCpuSeconds
            ? round(one.workerCpuSeconds / single.workerCpuSeconds, 3)
            : null,
        embedded: embedded ? round(embedded.on.seconds / embedded.off.seconds, 3) : null,
        embeddedCpu:
          embedded?.on.workerCpuSeconds && embedded.off.workerCpuSeconds
            ? round(embedded.on.workerCpuSeconds / embedded.off.workerCpuSeconds, 3)
            : null,
        target: '<= 1.05',
      },
      runs,
    };
    console.table([
      { measure: '1 pinned worker, one pass (s, mean)', value: single?.seconds ?? '-', target: '' },
      { measure: '1 pinned worker, fan-out (s, mean)', value: one?.seconds ?? '-', target: '' },
      { measure: '2 pinned workers, fan-out (s)', value: two?.seconds ?? '-', target: '' },
      { measure: 'speed-up, 2 workers', value: result.speedup.twoWorkers ?? '-', target: '>= 1.8' },
      { measure: 'speed-up, 3 workers', value: result.speedup.threeWorkers ?? '-', target: '>= 2.5' },
      {
        measure: 'projected speed-up, 3 workers',
        value: result.projection.threeWorkersSpeedup ?? '-',
        target: '>= 2.5',
      },
      {
        measure: 'fan-out / one pass, 1 pinned worker',
        value: result.costOnOneMachine.pinnedWorker ?? '-',
        target: '<= 1.05',
      },
      { measure: 'fan-out / one pass, embedded', value: result.costOnOneMachine.embedded ?? '-', target: '<= 1.05' },
    ]);
    if (runs.some((run) => run.disturbed))
      console.warn(
        'WARNING: other processes took CPU during some runs (marked disturbed); run again on an idle machine.',
      );
    const frames = new Set(runs.map((run) => run.frames));
    if (frames.size !== 1) throw new Error(`the runs' outputs differ in frames: ${[...frames].join(', ')}`);
    await mkdir(path.resolve(import.meta.dirname, 'results'), { recursive: true });
    const file = path.resolve(import.meta.dirname, 'results', `fanout-${result.date.replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await stop(...procs);
    await Promise.all([redis?.close(), s3?.close(), files.close()]);
    await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

await main();
