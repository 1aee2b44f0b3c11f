import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { PARTS_QUEUE } from '../src/jobs/fanout/part-queue.js';
import { REDIS_PREFIX } from '../src/jobs/redis.js';
import {
  assertSeamless,
  BROKEN_PART,
  BROKEN_PART_ERROR,
  CLIP_JOINS,
  CLIP_SETTINGS,
  clipEdit,
  clockClip,
  ffmpegsIn,
  partFileOf,
  partOf,
  type RunningFfmpeg,
} from './helpers/fanout-clip.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, isFinal, submitJob, type JobView } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { watchTree } from './helpers/watch-tree.js';
import { startS3, type TestS3 } from './helpers/s3-server.js';
import {
  eventually,
  ffmpegChildren,
  killQuietly,
  startServeProcess,
  startWorkerProcess,
  type ServeProcess,
} from './helpers/serve-process.js';

const ASYNC = { Prefer: 'respond-async' };
const slow = { timeout: 240_000 } as never;

/** A worker process with a data directory of its own: another machine, as far as files go. */
interface Worker {
  proc: ServeProcess;
  dir: string;
}

/** A part's ffmpeg seen running: on which worker, and whether in the job's own workspace (its own worker's). */
interface Sighting {
  part: number;
  worker: number;
  pid: number;
  own: boolean;
  /** The part file it writes. */
  file: string;
}

/** A process's state letter from /proc (`R`, `S`, `T` stopped, `Z` ended but not reaped), or '' once it is gone. */
const processState = async (pid: number) =>
  /^\d+ \(.*\) (\S)/s.exec(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''))?.[1] ?? '';

/**
 * Issue 24's fan-out in Redis mode (docs/fanout.md): an API process that runs no jobs, two `mediaflow worker`
 * processes of one ffmpeg slot each (each with a data directory of its own), a real Redis and an S3 server on
 * loopback. The fan-out clip's conversion to H.264 is split into four parts (under CLIP_SETTINGS) that both workers
 * encode, the job's files travelling through the bucket; the join must be the single pass's frames. A render of the
 * same clip is made in its four scenes the same way, its sound on the job's own worker. A worker killed with -9
 * mid-part costs that part one more run and nothing else; a cancel, or a part that fails (a third-party plugin's),
 * stops every part on every worker and leaves nothing in the bucket.
 */
describe('fan-out on Redis workers: a long convert-video or render over two workers', () => {
  let tmp: string;
  let clip: string;
  let redis: TestRedis;
  let s3: TestS3;
  let files: FileServer;
  let api: ServeProcess;
  let bucket: S3Client;
  let parts: Queue;
  let records: Redis;
  let shared: Record<string, string>;
  const workers: Worker[] = [];
  const orphans: number[] = [];
  let singlePass: Promise<string> | undefined;

  const startWorker = async (dir: string) => startWorkerProcess(dir, { ...shared, MEDIAFLOW_CONCURRENCY: '1' });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-fanout-redis-'));
    clip = path.join(tmp, 'clock.mp4');
    [redis, s3] = await Promise.all([startRedis(), startS3(), clockClip(clip)]);
    files = await startFileServer({ '/clock.mp4': serveFile(clip, 'video/mp4') });
    shared = {
      ...s3.env,
      ...CLIP_SETTINGS,
      MEDIAFLOW_REDIS_URL: redis.url,
      MEDIAFLOW_STALLED_INTERVAL: '3s',
      MEDIAFLOW_PLUGINS: BROKEN_PART,
    };
    api = await startServeProcess(path.join(tmp, 'api'), { ...shared, MEDIAFLOW_WORKERS: '0' });
    for (const name of ['worker-a', 'worker-b']) {
      const dir = path.join(tmp, name);
      workers.push({ proc: await startWorker(dir), dir });
    }
    bucket = s3.client();
    records = new Redis(redis.url, { maxRetriesPerRequest: null });
    parts = new Queue(PARTS_QUEUE, { connection: records, prefix: REDIS_PREFIX });
  }, 120_000);
  after(async () => {
    await parts?.close();
    records?.disconnect();
    bucket?.destroy();
    const procs = [api, ...workers.map((w) => w.proc)].filter(Boolean);
    for (const proc of procs) if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all(procs.map((proc) => proc.child));
    for (const pid of orphans) killQuietly(pid);
    await Promise.all([redis?.close(), s3?.close(), files?.close()]);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const work = (worker: Worker) => path.join(worker.dir, 'work');

  /**
   * Every part's ffmpeg running now, on either worker: among each worker's children, which are quick to read where
   * a scan of every process can miss a part of 20 s.
   */
  async function sightings(): Promise<Sighting[]> {
    const seen: Sighting[] = [];
    for (const [index, worker] of workers.entries())
      for (const ffmpeg of await ffmpegsIn(work(worker), await ffmpegChildren(worker.proc.child.pid!))) {
        const part = partOf(ffmpeg);
        // A part another worker takes runs in `fanout-<id>-<run>`; its own worker's, in the job's workspace.
        if (part !== undefined)
          seen.push({
            part,
            worker: index,
            pid: ffmpeg.pid,
            own: !path.basename(ffmpeg.cwd).startsWith('fanout-'),
            file: path.join(ffmpeg.cwd, partFileOf(ffmpeg)!),
          });
      }
    return seen;
  }

  /**
   * Watches the workers' folders for the sound of a split encode (`fanout-audio.*`, or a render's `sound.*`) being
   * written: by which worker, and whether in the job's own workspace (not a `fanout-<id>-<run>` folder of another
   * worker's). Its ffmpeg may copy the sound in a fraction of a second, too quick to be caught in /proc; its file is
   * always seen.
   */
  async function watchSound(file = /^fanout-audio\.\w+$/) {
    const writers = new Set<string>();
    // A worker makes its work folder with its first job's.
    for (const worker of workers) await mkdir(work(worker), { recursive: true });
    const watchers = workers.map((worker, index) =>
      watchTree(work(worker), (name) => {
        const folders = name.split(path.sep);
        if (!file.test(folders.pop()!)) return;
        writers.add(JSON.stringify({ worker: index, own: !folders.some((folder) => folder.startsWith('fanout-')) }));
      }),
    );
    return {
      writers: () => [...writers].map((writer) => JSON.parse(writer) as { worker: number; own: boolean }),
      close: () => watchers.forEach((watcher) => watcher.close()),
    };
  }

  /** Polls a job until it ends, keeping its views and every part's ffmpeg seen meanwhile. */
  async function watch(id: string, ms = 200_000) {
    const views: Array<{ stage: string; progress: number }> = [];
    const seen = new Map<number, Sighting>();
    // The API process (MEDIAFLOW_WORKERS=0) takes no part: no ffmpeg of its own.
    let apiRan = false;
    const deadline = Date.now() + ms;
    for (;;) {
      for (const sighting of await sightings()) if (!seen.has(sighting.pid)) seen.set(sighting.pid, sighting);
      apiRan ||= (await ffmpegChildren(api.child.pid!)).length > 0;
      const job = await getJob(api.base, id);
      views.push({ stage: job.stage, progress: job.progress });
      if (isFinal(job)) return { job, views, seen: [...seen.values()], apiRan };
      assert.ok(Date.now() < deadline, `job ${id} still ${job.status} after ${ms} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The BullMQ jobs of the parts of an engine run: their ids start with its output id. */
  async function partJobs(outputId: string): Promise<Job[]> {
    const jobs = await parts.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed', 'prioritized']);
    return jobs.filter((job) => job.id!.startsWith(`${outputId}-`)).sort((a, b) => a.name.localeCompare(b.name));
  }

  async function keys(prefix = ''): Promise<string[]> {
    const listed = await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
    return (listed.Contents ?? []).map((object) => object.Key!).sort();
  }

  /** Files in the workers' work folders (their `pid-<pid>` folders are no files). */
  const workFiles = async () =>
    (await Promise.all(workers.map((w) => readdir(work(w), { recursive: true, withFileTypes: true }).catch(() => []))))
      .flat()
      .filter((entry) => !entry.isDirectory() || !/^pid-\d+$/.test(entry.name))
      .map((entry) => path.join(entry.parentPath, entry.name));

  async function download(url: string, name: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `GET ${url}`);
    const file = path.join(tmp, name);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  /** The output id of a finished job, from its output's URL: `uploads/<output id>_input_video.mp4`. */
  const outputIdOf = (job: JobView) =>
    /\/uploads\/([0-9a-f-]{36})_input_video\.mp4/.exec(String(job.result!.output_file))![1]!;

  /** The same request in one pass (fanout=false), run once for the file by a worker. */
  const onePass = () =>
    (singlePass ??= (async () => {
      const body = new FormData();
      body.append('video_url', files.url('/clock.mp4'));
      body.append('fanout', 'false');
      const res = await fetch(`${api.base}/convert-video/`, { method: 'POST', body });
      const answer = (await res.json()) as Record<string, string>;
      assert.equal(res.status, 200, JSON.stringify(answer));
      return download(answer.output_file!, 'single.mp4');
    })());

  it('encodes the parts on both workers and joins them into the single pass’s frames', slow, async () => {
    const sound = await watchSound();
    const id = await submitJob(api.base, '/convert-video/', { video_url: files.url('/clock.mp4') }, ASYNC);
    const { job, views, seen, apiRan } = await watch(id).finally(sound.close);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.equal(apiRan, false, 'the API process ran no ffmpeg');
    assert.ok(
      views.some((view) => view.stage === 'process (in 4 parts)'),
      'it said it split',
    );
    views.forEach((view, i) =>
      assert.ok(i === 0 || view.progress >= views[i - 1]!.progress, `progress went down: ${JSON.stringify(views)}`),
    );

    // Each part ran once (BullMQ started it once), and ran where its ffmpeg was seen: on both workers. The sound is
    // no part any worker may take.
    const runs = await partJobs(outputIdOf(job));
    assert.deepEqual(
      runs.map((run) => [run.name, run.attemptsStarted, run.stalledCounter, run.finishedOn !== undefined]),
      ['fanout-part-000', 'fanout-part-001', 'fanout-part-002', 'fanout-part-003'].map((name) => [name, 1, 0, true]),
    );
    const partsOn = (worker: number) => [...new Set(seen.filter((s) => s.worker === worker).map((s) => s.part))];
    assert.deepEqual([...partsOn(0), ...partsOn(1)].sort(), [0, 1, 2, 3], `parts seen: ${JSON.stringify(seen)}`);
    assert.ok(partsOn(0).length > 0 && partsOn(1).length > 0, `both workers ran parts: ${JSON.stringify(seen)}`);
    const owner = seen.find((s) => s.own)?.worker;
    assert.ok(owner !== undefined, 'the job’s own worker ran a part in the job’s workspace');
    assert.ok(
      seen.every((s) => s.own === (s.worker === owner)),
      `the other worker ran its parts in a folder of its own: ${JSON.stringify(seen)}`,
    );
    // The sound was made by the job's own worker, which holds the input, in the job's workspace.
    assert.deepEqual(sound.writers(), [{ worker: owner, own: true }], 'the sound ran on the job’s own worker');

    const split = await download(String(job.result!.output_file), 'split.mp4');
    await assertSeamless(split, await onePass(), CLIP_JOINS);
    assert.deepEqual(await keys('uploads/.fanout/'), [], 'no part file left in the bucket');
    assert.deepEqual(await workFiles(), [], 'no file left on either worker');
  });

  it(
    'renders a long timeline’s scenes on both workers, the sound on the job’s own, into the one pass’s frames',
    slow,
    async () => {
      // A render's parts are its scenes (docs/fanout.md): each reads only its own media and graph from the bucket.
      const sound = await watchSound(/^sound\.\w+$/);
      const edit = JSON.stringify(clipEdit(files.url('/clock.mp4')));
      const id = await submitJob(api.base, '/render/', { edit }, ASYNC);
      const { job, views, seen, apiRan } = await watch(id).finally(sound.close);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      assert.equal(apiRan, false, 'the API process ran no ffmpeg');
      assert.ok(
        views.some((view) => view.stage === 'process (in 4 parts)'),
        'it said it made its scenes in parts',
      );
      const record = JSON.parse((await records.get(`mediaflow:job:${id}`))!) as { output_id: string };
      const runs = await partJobs(record.output_id);
      assert.deepEqual(
        runs.map((run) => [run.name, run.attemptsStarted, run.finishedOn !== undefined]),
        ['scene-000', 'scene-001', 'scene-002', 'scene-003'].map((name) => [name, 1, true]),
      );
      const partsOn = (worker: number) => [...new Set(seen.filter((s) => s.worker === worker).map((s) => s.part))];
      assert.ok(partsOn(0).length > 0 && partsOn(1).length > 0, `both workers made scenes: ${JSON.stringify(seen)}`);
      const owner = seen.find((s) => s.own)?.worker;
      assert.deepEqual(sound.writers(), [{ worker: owner, own: true }], 'the sound ran on the job’s own worker');

      const rendered = await download(String(job.result!.output_file), 'render.mp4');
      await assertSeamless(rendered, await onePass(), CLIP_JOINS);
      assert.deepEqual(await keys('uploads/.fanout/'), [], 'no part file left in the bucket');
      assert.deepEqual(await workFiles(), [], 'no file left on either worker');
    },
  );

  it('runs a part again, alone, when a worker that is not the job’s own is killed with -9 in it', slow, async () => {
    const id = await submitJob(api.base, '/convert-video/', { video_url: files.url('/clock.mp4') }, ASYNC);
    // A part the other worker runs, caught once it has written some of its file and held there (SIGSTOP), so that
    // the kill falls inside the part however quickly a part encodes.
    let target: Sighting | undefined;
    assert.ok(
      await eventually(
        async () => {
          for (const other of (await sightings()).filter((s) => !s.own)) {
            if (!((await stat(other.file).catch(() => undefined))?.size ?? 0)) continue;
            try {
              process.kill(other.pid, 'SIGSTOP');
            } catch {
              continue; // it ended meanwhile
            }
            // Stopped, not ended (a zombie takes the signal too).
            if (await eventually(async () => (await processState(other.pid)) === 'T', 1000, 10)) {
              target = other;
              return true;
            }
          }
          return false;
        },
        120_000,
        50,
      ),
      'a part runs on the worker that does not run the job, and was caught mid-encode',
    );
    const victim = workers[target!.worker]!;
    orphans.push(...(await ffmpegChildren(victim.proc.child.pid!)));
    victim.proc.child.kill('SIGKILL');
    await victim.proc.child;
    // Its ffmpeg would run on as an orphan; a machine that died takes its processes with it.
    for (const pid of orphans) killQuietly(pid);

    const { job, seen } = await watch(id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const runs = await partJobs(outputIdOf(job));
    const killed = `fanout-part-${String(target!.part).padStart(3, '0')}`;
    assert.deepEqual(
      runs.map((run) => [run.name, run.attemptsStarted, run.stalledCounter]),
      ['fanout-part-000', 'fanout-part-001', 'fanout-part-002', 'fanout-part-003'].map((name) =>
        name === killed ? [name, 2, 1] : [name, 1, 0],
      ),
      `only ${killed} ran again`,
    );
    assert.ok(
      seen.some((s) => s.part === target!.part && s.worker !== target!.worker),
      `${killed} ran again on the job’s own worker: ${JSON.stringify(seen)}`,
    );
    const split = await download(String(job.result!.output_file), 'split-after-kill.mp4');
    await assertSeamless(split, await onePass(), CLIP_JOINS);
    assert.deepEqual(await keys('uploads/.fanout/'), [], 'no part file left in the bucket');

    // A new worker in the dead one's place, for the next test: it clears what the dead one left.
    victim.proc = await startWorker(victim.dir);
    assert.deepEqual(await workFiles(), [], 'no file left on either worker');
  });

  it('kills every part on every worker on a cancel, and leaves nothing in the bucket', slow, async () => {
    const published = await keys();
    const id = await submitJob(api.base, '/convert-video/', { video_url: files.url('/clock.mp4') }, ASYNC);
    let running: Sighting[] = [];
    assert.ok(
      await eventually(
        async () => new Set((running = await sightings()).map((s) => s.worker)).size === 2,
        120_000,
        200,
      ),
      'parts run on both workers',
    );
    const res = await fetch(`${api.base}/jobs/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as JobView).status, 'cancelled');
    // The answer comes once no part runs any more, on either worker.
    const left: RunningFfmpeg[] = [];
    for (const worker of workers) left.push(...(await ffmpegsIn(work(worker))));
    assert.deepEqual(left, [], `no ffmpeg runs on either worker (parts were ${JSON.stringify(running)})`);
    assert.deepEqual(await keys(), published, 'no part file and no output in the bucket');
    assert.deepEqual(await workFiles(), [], 'no file left on either worker');
    assert.equal((await getJob(api.base, id)).status, 'cancelled');
    // Nor any part of it left in the queue to run later.
    const record = JSON.parse((await records.get(`mediaflow:job:${id}`))!) as { output_id: string };
    const unfinished = (await partJobs(record.output_id)).filter((run) => run.finishedOn === undefined);
    assert.deepEqual(
      unfinished.map((run) => run.name),
      [],
      'no part waits or runs',
    );
  });

  it(
    'fails the job with the failing part’s error, stops the other parts, and leaves nothing behind',
    slow,
    async () => {
      const published = await keys();
      const id = await submitJob(api.base, '/broken-part/', { video_url: files.url('/clock.mp4') }, ASYNC);
      const { job, seen } = await watch(id);
      assert.equal(job.status, 'failed');
      assert.deepEqual(job.error, BROKEN_PART_ERROR);
      assert.ok(
        seen.some((s) => s.part === 1),
        `part 1 (20 s to 40 s, the one that fails) ran: ${JSON.stringify(seen)}`,
      );
      const left: RunningFfmpeg[] = [];
      for (const worker of workers) left.push(...(await ffmpegsIn(work(worker))));
      assert.deepEqual(left, [], 'no ffmpeg runs on either worker');
      assert.deepEqual(await keys(), published, 'no part file and no output in the bucket');
      assert.deepEqual(await workFiles(), [], 'no file left on either worker');
      const record = JSON.parse((await records.get(`mediaflow:job:${id}`))!) as { output_id: string };
      const unfinished = (await partJobs(record.output_id)).filter((run) => run.finishedOn === undefined);
      assert.deepEqual(
        unfinished.map((run) => run.name),
        [],
        'no part waits or runs',
      );
    },
  );
});
