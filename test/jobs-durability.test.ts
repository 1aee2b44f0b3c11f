/**
 * Jobs survive the process: the real CLI server (`mediaflow serve`, built dist/) is killed with
 * SIGKILL or stopped with SIGTERM and started again on the same data directory. Queued jobs run,
 * interrupted ones run again (at most MEDIAFLOW_JOB_ATTEMPTS), owed webhooks are delivered, a
 * synchronous job whose client went with the process is cancelled, and nothing stays `running`.
 */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/engine/config.js';
import type { JobService } from '../src/jobs/service.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { durationOf, probe, videoOf } from './helpers/media.js';
import { eventually, ffmpegChildren, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { getJob, isFinal, submitJob, waitForJob } from './helpers/jobs.js';
import {
  startWebhookReceiver,
  type Behaviour,
  type Delivery,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

interface StoredRecord {
  id: string;
  status: string;
  stage: string;
  mode: 'sync' | 'async';
  attempts: number;
  started_at: string | null;
  webhook: { message_id: string; next_attempt_at: string | null } | null;
}

/** A slideshow ffmpeg takes a few seconds over (1200 frames of 1920x1080; about 5 s on a CI core), and finishes. */
const SLOW_SECONDS = 24;
const SLOW_FPS = 50;
/** A slideshow that would run for an hour: only ever interrupted. */
const ENDLESS = { seconds_per_image: '3600', fps: '60' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every job record in a data directory, as stored (temp files of a killed writer skipped). */
async function records(dataDir: string): Promise<StoredRecord[]> {
  const dir = path.join(dataDir, 'jobs');
  const names = (await readdir(dir).catch(() => [] as string[])).filter(
    (name) => name.endsWith('.json') && !name.startsWith('.'),
  );
  return Promise.all(
    names.map(async (name) => JSON.parse(await readFile(path.join(dir, name), 'utf8')) as StoredRecord),
  );
}

async function record(dataDir: string, id: string): Promise<StoredRecord> {
  return JSON.parse(await readFile(path.join(dataDir, 'jobs', `${id}.json`), 'utf8')) as StoredRecord;
}

/** The local file behind an output URL (its host names the process that accepted the job, which is gone). */
const outputFile = (dataDir: string, url: unknown) => {
  assert.equal(typeof url, 'string');
  const match = /\/uploads\/(.+)$/.exec(url as string);
  assert.ok(match, `${String(url)} is an upload URL`);
  return path.join(dataDir, 'uploads', decodeURIComponent(match[1]!));
};

/** Whether a pid is a live process (not gone, not a zombie waiting to be reaped). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const match = /^\d+ \((.*)\) (\S)/s.exec(stat);
  return match !== null && match[2] !== 'Z';
}

/** The fields of a JSON log line with this message, from a serve process's output. */
function logged(proc: ServeProcess, message: string): Record<string, unknown> | undefined {
  for (const line of proc.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === message) return entry;
    } catch {
      // not a log line
    }
  }
  return undefined;
}

/** What a restarted server logged it picked up (the counts of JobService.recover). */
async function recovered(proc: ServeProcess): Promise<Record<string, unknown> | undefined> {
  let entry: Record<string, unknown> | undefined;
  await eventually(() => (entry = logged(proc, 'picked up jobs left by an earlier run')) !== undefined, 2_000, 50);
  return (
    entry && {
      requeued: entry.requeued,
      failed: entry.failed,
      cancelled: entry.cancelled,
      deliveries: entry.deliveries,
    }
  );
}

/** Messages the receiver got with a 2xx, one per `webhook-id` (receivers drop repeats by it). */
function deliveredMessages(receiver: WebhookReceiver): Map<string, Delivery> {
  const messages = new Map<string, Delivery>();
  for (const d of receiver.deliveries) {
    if (typeof d.answered === 'number' && d.answered < 300) messages.set(String(d.headers['webhook-id']), d);
  }
  return messages;
}

describe('jobs survive kill -9 and restarts (the real `mediaflow serve`)', () => {
  let files: FileServer;
  const processes: ServeProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  const dirs: string[] = [];
  /** ffmpeg pids of killed servers: killed in `after` should any still run. */
  const strays = new Set<number>();

  const tempDir = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-durability-'));
    dirs.push(dir);
    return dir;
  };
  const serve = async (dataDir: string, env: Record<string, string>) => {
    const proc = await startServeProcess(dataDir, env);
    processes.push(proc);
    return proc;
  };
  const receive = async (plan?: (path: string, n: number) => Behaviour) => {
    const receiver = await startWebhookReceiver(plan);
    receivers.push(receiver);
    return receiver;
  };
  /** Waits until the server runs ffmpeg, and returns those pids. */
  const ffmpegRunning = async (proc: ServeProcess): Promise<number[]> => {
    let pids: number[] = [];
    assert.ok(
      await eventually(async () => (pids = await ffmpegChildren(proc.child.pid!)).length > 0, 20_000),
      'ffmpeg started',
    );
    for (const pid of pids) strays.add(pid);
    return pids;
  };
  /**
   * kill -9 of the server, then of the ffmpeg it ran. ffmpeg ignores SIGPIPE, so an orphan does not
   * die with its parent's pipes: it encodes on (reparented to init) until its job is done, an hour
   * for the endless slideshow, or until a restarted server on the same data directory ends it
   * (test/engine/storage/work-folders.test.ts). The test ends it at once, so it never competes for the CPU.
   */
  const killHard = async (proc: ServeProcess) => {
    const ffmpegs = await ffmpegChildren(proc.child.pid!);
    for (const pid of ffmpegs) strays.add(pid);
    proc.child.kill('SIGKILL');
    const result = await proc.child;
    assert.equal(result.signal, 'SIGKILL');
    for (const pid of ffmpegs) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // it had ended
      }
    }
    assert.ok(
      await eventually(async () => !(await Promise.all(ffmpegs.map(alive))).some(Boolean), 5_000),
      `ffmpeg ${ffmpegs} still runs`,
    );
  };

  const slow = () => ({
    image_urls: files.url('/f/landscape-1920x1080.jpg'),
    seconds_per_image: String(SLOW_SECONDS),
    fps: String(SLOW_FPS),
  });
  const small = (width: number, height: number) => ({
    image_url: files.url('/f/small-300x200.png'),
    width: String(width),
    height: String(height),
  });

  before(async () => {
    await fixtures('landscape-1920x1080.jpg', 'small-300x200.png');
    files = await startFileServer();
  });
  after(async () => {
    for (const proc of processes) {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) continue;
      for (const pid of await ffmpegChildren(proc.child.pid!).catch(() => [])) strays.add(pid);
      proc.child.kill('SIGKILL');
      await proc.child;
    }
    for (const pid of strays) {
      try {
        if (await alive(pid)) process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    for (const receiver of receivers) await receiver.close().catch(() => undefined);
    await files?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it(
    'kill -9 with one job running, one queued and one webhook pending: ' + 'after the restart all three complete',
    async () => {
      const dataDir = await tempDir();
      // The first delivery of C fails; its retry is due 8 s (±20%) later, after the kill.
      const receiver = await receive((pathname, n) => (pathname === '/c' && n === 0 ? 500 : 200));
      const env = { MEDIAFLOW_CONCURRENCY: '1', MEDIAFLOW_WEBHOOK_BACKOFF: '8s', MEDIAFLOW_WEBHOOK_TIMEOUT: '2s' };
      const first = await serve(dataDir, env);

      const c = await submitJob(first.base, '/resize_image/', { ...small(32, 24), webhook_url: receiver.url('/c') });
      const [failedDelivery] = await receiver.received(1);
      await waitForJob(first.base, c, (j) => j.webhook?.attempts === 1);

      const a = await submitJob(first.base, '/images-to-video/', { ...slow(), webhook_url: receiver.url('/a') });
      const firstRun = await waitForJob(first.base, a, (j) => j.status === 'running');
      const b = await submitJob(first.base, '/resize_image/', { ...small(48, 36), webhook_url: receiver.url('/b') });
      assert.equal((await getJob(first.base, b)).status, 'queued');
      await ffmpegRunning(first);
      assert.equal(receiver.deliveries.length, 1, "C's retry is still pending at the kill");
      const beforeKill = await getJob(first.base, c);
      assert.deepEqual(beforeKill.webhook, {
        url: receiver.url('/c'),
        attempts: 1,
        last_status: 500,
        delivered_at: null,
        next_attempt_at: beforeKill.webhook!.next_attempt_at,
      });
      assert.ok(Date.parse(beforeKill.webhook!.next_attempt_at!) > Date.now(), 'the retry is due later');

      await killHard(first);
      const killedAt = Date.now();
      assert.equal((await record(dataDir, a)).status, 'running', 'the record still says running after the kill');
      assert.equal((await record(dataDir, b)).status, 'queued');

      const second = await serve(dataDir, env);
      assert.deepEqual(await recovered(second), { requeued: 2, failed: 0, cancelled: 0, deliveries: 1 });
      // Running again, A says so: its progress is the first run's until this run passes it.
      const rerun = await waitForJob(second.base, a, (j) => isFinal(j) || / \(attempt 2 of 2\)$/.test(j.stage), {
        ms: 30_000,
      });
      assert.equal(rerun.status, 'running', `stage ${rerun.stage}`);

      const doneA = await waitForJob(second.base, a, (j) => isFinal(j) && j.webhook?.delivered_at != null, {
        ms: 90_000,
      });
      const doneB = await waitForJob(second.base, b, (j) => isFinal(j) && j.webhook?.delivered_at != null);
      const doneC = await waitForJob(second.base, c, (j) => j.webhook?.delivered_at != null);

      // A ran again (its second attempt) and made the whole video.
      assert.equal(doneA.status, 'succeeded', JSON.stringify(doneA.error));
      assert.equal((await record(dataDir, a)).attempts, 2);
      assert.ok(Date.parse(doneA.started_at!) >= killedAt, 'the run that finished started after the restart');
      assert.ok(Date.parse(doneA.started_at!) > Date.parse(firstRun.started_at!));
      const info = await probe(outputFile(dataDir, doneA.result!.output_file));
      const video = videoOf(info)!;
      assert.equal(video.codec_name, 'h264');
      assert.deepEqual([video.width, video.height], [1920, 1080]);
      assert.equal(video.r_frame_rate, `${SLOW_FPS}/1`);
      assert.ok(Math.abs(durationOf(info) - SLOW_SECONDS) < 0.1, `duration ${durationOf(info)}`);

      // B waited through the kill and ran once.
      assert.equal(doneB.status, 'succeeded', JSON.stringify(doneB.error));
      assert.equal((await record(dataDir, b)).attempts, 1);
      const resized = videoOf(await probe(outputFile(dataDir, doneB.result!.output_file)))!;
      assert.deepEqual([resized.width, resized.height], [48, 36]);

      // C's retry kept its id and its schedule across the restart (not sent at once on start).
      const toC = receiver.deliveries.filter((d) => d.path === '/c');
      assert.deepEqual(
        toC.map((d) => d.answered),
        [500, 200],
      );
      assert.equal(toC[1]!.headers['webhook-id'], failedDelivery!.headers['webhook-id']);
      assert.equal(toC[1]!.body, failedDelivery!.body);
      assert.ok(
        (toC[1]!.at - toC[0]!.at) / 1000 >= 6.3,
        `the retry came ${(toC[1]!.at - toC[0]!.at) / 1000}s after the failure, expected the 8 s back-off (-20%)`,
      );
      assert.deepEqual(doneC.webhook, {
        url: receiver.url('/c'),
        attempts: 2,
        last_status: 200,
        delivered_at: doneC.webhook!.delivered_at,
        next_attempt_at: null,
      });
      assert.equal(doneC.status, 'succeeded');
      assert.equal((await record(dataDir, c)).attempts, 1, 'a pending delivery never re-runs its job');

      // Every job's webhook arrived (once per webhook-id), and nothing is left running or queued.
      const messages = deliveredMessages(receiver);
      assert.deepEqual([...messages.values()].map((d) => d.json.job_id).sort(), [a, b, c].sort());
      for (const d of messages.values()) assert.equal(d.json.status, 'succeeded');
      const left = await records(dataDir);
      assert.equal(left.length, 3);
      assert.deepEqual(
        left.filter((r) => !isFinal(r)),
        [],
      );
      assert.deepEqual(
        left.filter((r) => r.webhook?.next_attempt_at != null),
        [],
        'no delivery is still owed',
      );
    },
  );

  it(
    'MEDIAFLOW_JOB_ATTEMPTS=1: a job interrupted by kill -9 ends failed with an error that says why, and its ' +
      'webhook says so',
    async () => {
      const dataDir = await tempDir();
      const receiver = await receive();
      const env = { MEDIAFLOW_CONCURRENCY: '1', MEDIAFLOW_JOB_ATTEMPTS: '1' };
      const first = await serve(dataDir, env);
      const id = await submitJob(first.base, '/images-to-video/', {
        image_urls: files.url('/f/small-300x200.png'),
        ...ENDLESS,
        webhook_url: receiver.url('/x'),
      });
      await waitForJob(first.base, id, (j) => j.status === 'running');
      await ffmpegRunning(first);
      await killHard(first);

      const second = await serve(dataDir, env);
      const job = await waitForJob(second.base, id, (j) => isFinal(j) && j.webhook?.delivered_at != null);
      assert.equal(job.status, 'failed');
      assert.equal(job.result, null);
      assert.equal(job.error!.status, 500);
      assert.match(job.error!.error, /MEDIAFLOW_JOB_ATTEMPTS/);
      assert.match(job.error!.error, /interrupted/);
      const [hook] = await receiver.received(1);
      assert.equal(hook!.json.status, 'failed');
      assert.deepEqual(hook!.json.error, job.error);
      // It was not run again: one attempt, and the new server starts no ffmpeg.
      assert.equal((await record(dataDir, id)).attempts, 1);
      await sleep(500);
      assert.deepEqual(await ffmpegChildren(second.child.pid!), []);
      assert.deepEqual(await recovered(second), { requeued: 0, failed: 1, cancelled: 0, deliveries: 0 });
    },
  );

  it(
    'a synchronous request in flight at kill -9 is cancelled after the restart (its client is gone), not ' +
      'run again',
    async () => {
      const dataDir = await tempDir();
      const env = { MEDIAFLOW_CONCURRENCY: '1' };
      const first = await serve(dataDir, env);
      const form = new FormData();
      for (const [key, value] of Object.entries({ image_urls: files.url('/f/small-300x200.png'), ...ENDLESS }))
        form.append(key, value);
      const answer = fetch(`${first.base}/images-to-video/`, { method: 'POST', body: form }).then(
        (res) => `answered ${res.status}`,
        () => 'no answer',
      );
      let running: StoredRecord | undefined;
      assert.ok(
        await eventually(
          async () => (running = (await records(dataDir)).find((r) => r.status === 'running')) !== undefined,
        ),
      );
      assert.equal(running!.mode, 'sync');
      await ffmpegRunning(first);
      await killHard(first);
      assert.equal(await answer, 'no answer');

      const second = await serve(dataDir, env);
      const job = await waitForJob(second.base, running!.id, (j) => isFinal(j), { ms: 10_000 });
      assert.equal(job.status, 'cancelled');
      assert.equal(job.result, null);
      assert.equal(job.webhook, null);
      const stored = await record(dataDir, running!.id);
      assert.equal(stored.attempts, 1);
      assert.equal(stored.started_at, running!.started_at, 'it never started again');
      await sleep(500);
      assert.deepEqual(await ffmpegChildren(second.child.pid!), []);
      const health = (await (await fetch(`${second.base}/health`)).json()) as {
        queue: { waiting: number; running: number };
      };
      assert.deepEqual([health.queue.waiting, health.queue.running], [0, 0]);
    },
  );

  it(
    'SIGTERM lets the running job finish, ' + 'exits 0 and leaves the waiting job queued; the restart runs it',
    async () => {
      const dataDir = await tempDir();
      const receiver = await receive();
      const env = { MEDIAFLOW_CONCURRENCY: '1' };
      const first = await serve(dataDir, env);
      const a = await submitJob(first.base, '/images-to-video/', { ...slow(), webhook_url: receiver.url('/a') });
      await waitForJob(first.base, a, (j) => j.status === 'running');
      const b = await submitJob(first.base, '/resize_image/', { ...small(40, 30), webhook_url: receiver.url('/b') });
      await ffmpegRunning(first);

      // Not child.kill(): execa would follow SIGTERM with SIGKILL after 5 s, inside the server's grace period.
      process.kill(first.child.pid!, 'SIGTERM');
      const exit = await first.child;
      assert.equal(exit.exitCode, 0, first.output());
      assert.ok(logged(first, 'shutting down: no new requests, finishing running jobs'));
      assert.equal(logged(first, 'shutdown deadline passed; stopping running jobs'), undefined);

      // A finished within the grace period; B never started and waits in the store.
      const storedA = await record(dataDir, a);
      assert.equal(storedA.status, 'succeeded');
      assert.equal(storedA.attempts, 1);
      const storedB = await record(dataDir, b);
      assert.equal(storedB.status, 'queued');
      assert.equal(storedB.attempts, 0);

      const second = await serve(dataDir, env);
      const doneB = await waitForJob(
        second.base,
        b,
        (j) => j.status === 'succeeded' && j.webhook?.delivered_at != null,
      );
      const doneA = await waitForJob(second.base, a, (j) => j.webhook?.delivered_at != null);
      assert.equal(doneA.status, 'succeeded');
      assert.equal((await record(dataDir, a)).attempts, 1);
      assert.equal((await record(dataDir, b)).attempts, 1);
      const resized = videoOf(await probe(outputFile(dataDir, doneB.result!.output_file)))!;
      assert.deepEqual([resized.width, resized.height], [40, 30]);
      const video = await probe(outputFile(dataDir, doneA.result!.output_file));
      assert.ok(Math.abs(durationOf(video) - SLOW_SECONDS) < 0.1);
      const messages = deliveredMessages(receiver);
      assert.deepEqual([...messages.values()].map((d) => d.json.job_id).sort(), [a, b].sort());
      assert.deepEqual(
        (await records(dataDir)).filter((r) => !isFinal(r)),
        [],
      );
    },
  );
});

/**
 * A graceful stop whose grace runs out (the CLI gives running jobs 28 s, too long to wait in a
 * test) puts the running job back in the queue without counting its attempt. Checked in process,
 * where the grace is a parameter of JobService.shutdown; the job is held mid-run by an input
 * download that never ends, so the stop always lands while it runs.
 */
describe('a run cut short by a graceful shutdown is not counted as an attempt', () => {
  let files: FileServer;
  let receiver: WebhookReceiver;
  let dataDir: string;
  const open: Array<{ close: () => Promise<void> }> = [];
  const held = new Set<import('node:http').ServerResponse>();
  let requests = 0;

  const start = async (): Promise<{ base: string; jobs: JobService; close: () => Promise<void> }> => {
    const config = loadConfig({
      MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
      MEDIAFLOW_DATA_DIR: dataDir,
      PORT: '0',
      MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0',
      MEDIAFLOW_CONCURRENCY: '1',
    });
    const { app, jobs } = await buildServer({ config, registry: builtinRegistry(), logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    let closed = false;
    const server = {
      base: `http://127.0.0.1:${port}`,
      jobs,
      close: async () => {
        if (closed) return;
        closed = true;
        const closing = app.close();
        app.server.closeAllConnections();
        await closing;
      },
    };
    open.push(server);
    return server;
  };

  before(async () => {
    const picture = await fixture('small-300x200.png');
    files = await startFileServer({
      // The first request never gets an answer; later ones get the picture.
      '/first-held.png': (_req, res) => {
        requests++;
        if (requests === 1) {
          held.add(res);
          return;
        }
        res.writeHead(200, { 'content-type': 'image/png' });
        createReadStream(picture).pipe(res);
      },
    });
    receiver = await startWebhookReceiver();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-durability-'));
  });
  after(async () => {
    for (const server of open) await server.close().catch(() => undefined);
    for (const res of held) res.destroy();
    await receiver?.close();
    await files?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'goes back to the queue with its attempt given back, ' + 'and runs once more after the restart (attempts 1)',
    async () => {
      const first = await start();
      const fields = { image_urls: files.url('/first-held.png'), seconds_per_image: '2', fps: '10' };
      const id = await submitJob(first.base, '/images-to-video/', { ...fields, webhook_url: receiver.url('/a') });
      const running = await waitForJob(
        first.base,
        id,
        (j) => j.status === 'running' && j.stage === 'download' && requests === 1,
      );
      assert.equal(running.stage, 'download');

      // The grace (0.1 s) runs out with the job still running: it is stopped and handed back.
      await first.jobs.shutdown(100);
      await first.close();
      const stored = await record(dataDir, id);
      assert.deepEqual([stored.status, stored.stage, stored.attempts], ['queued', 'queued', 0]);
      assert.equal(receiver.deliveries.length, 0, 'no webhook: the job has not ended');

      const second = await start();
      const done = await waitForJob(
        second.base,
        id,
        (j) => j.status === 'succeeded' && j.webhook?.delivered_at != null,
      );
      assert.equal(requests, 2, 'the input was fetched again by the second run');
      assert.equal((await record(dataDir, id)).attempts, 1);
      const info = await probe(outputFile(dataDir, done.result!.output_file));
      assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [300, 200]);
      assert.ok(Math.abs(durationOf(info) - 2) < 0.1, `duration ${durationOf(info)}`);
      const hooks = await receiver.received(1);
      assert.equal(hooks[0]!.json.status, 'succeeded');
      assert.equal(receiver.deliveries.length, 1);
    },
  );
});
