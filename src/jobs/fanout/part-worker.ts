import os from 'node:os';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { WaitingError, Worker, type Job } from 'bullmq';
import { isAbort, jobErrorOf, MediaflowError } from '../../engine/errors.js';
import type { Logger } from '../../engine/logger.js';
import type { PartEncoder } from '../../engine/run/fanout/part-runner.js';
import type { OutputStore, Workspaces } from '../../engine/storage/storage.js';
import type { JobEvents } from '../events.js';
import { REDIS_PREFIX, waitingConnection } from '../redis.js';
import { partPath } from './part-files.js';
import { PARTS_QUEUE, runName, type LocalRuns, type PartAnswer, type PartData } from './part-queue.js';

/** How long a split encode's files stay on a worker after its last part there, for the next part that comes. */
const READS_LINGER_MS = 60_000;

/** Progress of a part is written to its BullMQ job at most this often. */
const PROGRESS_EVERY_MS = 1000;

const SHUTDOWN = new DOMException('The worker is shutting down', 'AbortError');
const CANCELLED = new DOMException('Part cancelled', 'AbortError');

export interface PartWorkerDeps {
  url: string;
  store: OutputStore;
  encoder: PartEncoder;
  workspaces: Workspaces;
  events: JobEvents;
  local: LocalRuns;
  /** Parts taken at once: this process's ffmpeg slots, which they wait for like any operation. */
  concurrency: number;
  /** MEDIAFLOW_STALLED_INTERVAL and MEDIAFLOW_JOB_ATTEMPTS, as for jobs. */
  stalledIntervalMs: number;
  jobAttempts: number;
  logger: Logger;
}

/**
 * Takes split encodes' parts from the shared queue and encodes them (docs/fanout.md). A part of a job this process
 * runs is encoded in that job's workspace; any other in a folder where the job's files are fetched from the store
 * once for all its parts here, and its output put in the store. A cancel kills its ffmpeg; a shutdown hands it back
 * to the queue for another worker.
 */
export class PartWorker {
  private readonly worker: Worker;
  private readonly running = new Map<string, AbortController>();
  private readonly reads: JobFiles;

  constructor(private readonly deps: PartWorkerDeps) {
    this.reads = new JobFiles(deps.store, deps.workspaces);
    this.worker = new Worker(PARTS_QUEUE, (job, token) => this.work(job, token), {
      connection: waitingConnection(deps.url),
      prefix: REDIS_PREFIX,
      // A part's BullMQ job says which worker ran it (`processedBy`, shown by the dashboard), and a split encode
      // plans its parts for the slots the workers' names add up to (bull-part-runner.ts).
      name: `${os.hostname()}:${process.pid}/${deps.concurrency}`,
      concurrency: deps.concurrency,
      lockDuration: deps.stalledIntervalMs,
      stalledInterval: deps.stalledIntervalMs,
      // A part whose worker died runs again, up to MEDIAFLOW_JOB_ATTEMPTS runs; then its job fails saying why.
      maxStalledCount: Math.max(0, deps.jobAttempts - 1),
    });
    this.worker.on('error', (error) => deps.logger.warn({ err: error }, 'part worker connection error'));
    this.worker.on('stalled', (id) =>
      deps.logger.warn({ part: id }, 'a worker stopped during this part; it runs again'),
    );
    deps.events.onCancel((id) => {
      this.running.get(id)?.abort(CANCELLED);
      // A split encode's run that is over: its files here are dropped once no part of it runs here any more.
      this.reads.over(id);
    });
  }

  private async work(job: Job, token?: string): Promise<PartAnswer> {
    const { job: id, run, task } = job.data as PartData;
    const controller = new AbortController();
    this.running.set(job.id!, controller);
    let written = 0;
    const onRatio = (ratio: number) => {
      if (Date.now() - written < PROGRESS_EVERY_MS) return;
      written = Date.now();
      job.updateProgress(ratio).catch(() => undefined);
    };
    try {
      const own = this.deps.local.get(id, run);
      if (own !== undefined) {
        const log = await this.deps.encoder.encode(task, own, controller.signal, onRatio);
        return { stored: false, ...(log ? { log } : {}) };
      }
      const dir = await this.reads.acquire(id, run, task.reads);
      try {
        const log = await this.deps.encoder.encode(task, dir, controller.signal, onRatio);
        await this.deps.store.publish(path.join(dir, task.output), partPath(id, run, task.output));
        return { stored: true, ...(log ? { log } : {}) };
      } finally {
        await rm(path.join(dir, task.output), { force: true });
        this.reads.release(id, run);
      }
    } catch (error) {
      if (controller.signal.reason === SHUTDOWN) {
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (controller.signal.aborted || isAbort(error)) return { cancelled: true };
      if (!(error instanceof MediaflowError) || error.status >= 500)
        this.deps.logger.error({ err: error, part: job.id }, 'a part failed');
      const known =
        error instanceof MediaflowError ? error : new MediaflowError('MF_ERR_INTERNAL', 'Internal server error');
      return { error: jobErrorOf(known) };
    } finally {
      this.running.delete(job.id!);
    }
  }

  /** Takes no more parts, hands the running ones back to the queue, and lets go of its files and connection. */
  async close(): Promise<void> {
    await this.worker.pause(true);
    for (const controller of this.running.values()) controller.abort(SHUTDOWN);
    await this.worker.close();
    await this.reads.clear();
  }
}

/**
 * A split encode's files (its input, generated files) fetched from the store into a folder of this process: each once
 * for all of its parts that run here, as the first part that reads it comes (a render's scene reads its own inputs
 * only), kept a minute after the last part in case another comes.
 */
class JobFiles {
  private readonly held = new Map<
    string,
    { dir: Promise<string>; files: Map<string, Promise<void>>; users: number; timer?: NodeJS.Timeout; over?: boolean }
  >();

  constructor(
    private readonly store: OutputStore,
    private readonly workspaces: Workspaces,
  ) {}

  async acquire(job: string, run: string, files: readonly string[]): Promise<string> {
    const key = runName({ job, run });
    let entry = this.held.get(key);
    if (!entry) {
      const dir = this.workspaces.create(`fanout-${key}`);
      entry = { dir, files: new Map(), users: 0 };
      this.held.set(key, entry);
      // A folder that could not be made is not kept: the next part tries again.
      dir.catch(() => this.held.get(key) === entry && this.held.delete(key));
    }
    entry.users++;
    clearTimeout(entry.timer);
    try {
      const dir = await entry.dir;
      const held = entry;
      await Promise.all(files.map((file) => this.fetch(held.files, job, run, dir, file)));
      return dir;
    } catch (error) {
      this.release(job, run);
      throw error;
    }
  }

  release(job: string, run: string): void {
    const key = runName({ job, run });
    const entry = this.held.get(key);
    if (!entry || --entry.users > 0) return;
    entry.timer = setTimeout(() => void this.drop(key), entry.over ? 0 : READS_LINGER_MS).unref();
  }

  /** The run named is over: its files go as soon as no part of it runs here (a part stopped by its cancel). */
  over(name: string): void {
    const entry = this.held.get(name);
    if (!entry) return;
    entry.over = true;
    if (entry.users === 0) void this.drop(name);
  }

  async clear(): Promise<void> {
    await Promise.all([...this.held.keys()].map((key) => this.drop(key)));
  }

  /** A file of the run fetched into its folder, once however many parts read it; a fetch that failed is tried again. */
  private fetch(fetched: Map<string, Promise<void>>, job: string, run: string, dir: string, file: string) {
    const known = fetched.get(file);
    if (known) return known;
    const copy = this.store.copyTo(partPath(job, run, file), path.join(dir, file));
    fetched.set(file, copy);
    copy.catch(() => fetched.get(file) === copy && fetched.delete(file));
    return copy;
  }

  private async drop(key: string): Promise<void> {
    const entry = this.held.get(key);
    if (!entry) return;
    this.held.delete(key);
    clearTimeout(entry.timer);
    await entry.dir.then(
      (dir) => this.workspaces.remove(dir),
      () => undefined,
    );
  }
}
