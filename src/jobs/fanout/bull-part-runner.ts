import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, type Queue } from 'bullmq';
import { errorOfJob, MediaflowError } from '../../engine/errors.js';
import type { Logger } from '../../engine/logger.js';
import {
  allOrFirstFailure,
  partFailure,
  type PartJob,
  type PartRunner,
  type PartTask,
} from '../../engine/run/fanout/part-runner.js';
import type { OutputStore } from '../../engine/storage/storage.js';
import type { KeepFinished } from '../bullmq-queue.js';
import type { JobEvents } from '../events.js';
import { isConnectionError } from '../retry.js';
import { partPath, putCopy } from './part-files.js';
import { partJobId, runName, type LocalRuns, type PartAnswer, type PartData } from './part-queue.js';

/** How often the parts of a split encode are looked at while they run. */
const POLL_MS = 500;

/** What the Redis part runner is built with. */
export interface BullPartRunnerDeps {
  /** The parts queue, and the jobs queue whose job (the record's) is each part's parent. */
  parts: Queue;
  jobs: Queue;
  store: OutputStore;
  /** Where a cancel reaches the worker that runs a part. */
  events: JobEvents;
  local: LocalRuns;
  /** Runs the parts of an engine run that is no job (none in Redis mode but a test's): in this process. */
  fallback: PartRunner;
  keep: KeepFinished;
  /** MEDIAFLOW_STALLED_INTERVAL: a part whose worker died goes back to the queue within about twice it. */
  stalledIntervalMs: number;
  logger: Logger;
}

/**
 * Runs a split encode's parts as BullMQ child jobs of the job's own BullMQ job (a flow: the dashboard shows them
 * under it), which any worker takes. The job's files are put in the store for the workers on other machines; a part
 * its own process takes runs in the job's workspace as it is. A task bound to the job's worker (the sound) runs here,
 * in that workspace, beside them. A part whose worker dies is taken back by BullMQ and runs again, alone. A failure
 * or a cancel stops every other part, wherever it runs, and nothing of the parts stays in the store.
 */
export class BullPartRunner implements PartRunner {
  constructor(private readonly deps: BullPartRunnerDeps) {}

  /** The slots of the workers that take parts now, from their names (part-worker.ts); 1 when they cannot be read. */
  async capacity(owner?: string): Promise<number> {
    if (owner === undefined) return this.deps.fallback.capacity();
    const workers = await this.deps.parts.getWorkers().catch(() => []);
    const slots = workers.reduce((sum, worker) => sum + slotsOfWorker(String(worker.rawname ?? '')), 0);
    return Math.max(1, slots);
  }

  async run(job: PartJob, tasks: readonly PartTask[]): Promise<void> {
    const { owner } = job;
    if (owner === undefined) return this.deps.fallback.run(job, tasks);
    const here = tasks.filter((task) => task.onJobWorker);
    const anywhere = tasks.filter((task) => !task.onJobWorker);
    // Both at once; the first failure (or the job's cancel) stops the other.
    const batches = [
      (signal: AbortSignal) => this.deps.fallback.run({ ...job, signal }, here),
      (signal: AbortSignal) => this.queue({ ...job, signal }, owner, anywhere),
    ];
    await allOrFirstFailure(job.signal, batches, (batch, signal) => batch(signal));
  }

  /** Runs `tasks` as child jobs that any worker takes, and brings their files back into the job's workspace. */
  private async queue(job: PartJob, owner: string, tasks: readonly PartTask[]): Promise<void> {
    if (tasks.length === 0) return;
    const { store, local } = this.deps;
    const run = randomUUID().slice(0, 8);
    const reads = [...new Set(tasks.flatMap((task) => task.reads))];
    const children = new Map(tasks.map((task) => [partJobId({ job: job.id, run }, task.name), task]));
    local.set(job.id, run, job.dir);
    try {
      await this.stopEarlierRuns(job, owner);
      for (const read of reads) await putCopy(store, path.join(job.dir, read), partPath(job.id, run, read));
      // A cancel while the files went up: no part is queued.
      job.signal?.throwIfAborted();
      const parent = { id: owner, queue: this.deps.jobs.qualifiedName };
      const { keep } = this.deps;
      for (const [id, task] of children) {
        const data: PartData = { job: job.id, run, task };
        // A part that fails does not hold its parent: the parent sees the failure, stops the others and ends.
        await this.deps.parts.add(task.name, data, {
          jobId: id,
          parent,
          ignoreDependencyOnFailure: true,
          removeOnComplete: keep,
          removeOnFail: keep,
        });
      }
      const answers = await this.watch(job, owner, children);
      for (const [id, task] of children) {
        const answer = answers.get(id);
        if (answer && 'stored' in answer && answer.stored)
          await store.copyTo(partPath(job.id, run, task.output), path.join(job.dir, task.output));
      }
    } catch (error) {
      await this.stop(owner, [...children.keys()]);
      throw error;
    } finally {
      local.delete(job.id, run);
      // The workers that fetched the job's files for its parts let go of them now.
      this.deps.events.requestCancel(runName({ job: job.id, run }));
      const files = [...reads, ...tasks.map((task) => task.output)].map((file) => partPath(job.id, run, file));
      await store
        .remove(files)
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, job: owner }, 'removing the parts of a split encode failed'),
        );
    }
  }

  /**
   * Waits until every part has ended, telling each one's progress; returns their answers. The first part that
   * failed (or that BullMQ gave up on, its worker having died too often) rejects, as the job's signal does.
   */
  private async watch(job: PartJob, owner: string, children: Map<string, PartTask>): Promise<Map<string, PartAnswer>> {
    const answers = new Map<string, PartAnswer>();
    const parent = await Job.fromId(this.deps.jobs, owner);
    if (!parent) throw new MediaflowError('MF_ERR_INTERNAL', 'The job left the queue while its parts were made');
    const keyOf = (id: string) => `${this.deps.parts.qualifiedName}:${id}`;
    while (answers.size < children.size) {
      job.signal?.throwIfAborted();
      try {
        const { processed = {}, ignored = {} } = await parent.getDependencies();
        for (const [id, task] of children) {
          if (answers.has(id)) continue;
          const answer = processed[keyOf(id)] as PartAnswer | undefined;
          const gaveUp = ignored[keyOf(id)] as string | undefined;
          if (gaveUp !== undefined) throw partError(task, `its worker stopped while it ran (${gaveUp})`);
          if (!answer) {
            const progress = (await Job.fromId(this.deps.parts, id))?.progress;
            if (typeof progress === 'number') job.onProgress?.(task.name, progress);
            continue;
          }
          if ('error' in answer) throw partFailure(task, errorOfJob(answer.error));
          // Stopped by a cancel that was not this job's (its worker shutting down hands it back instead).
          if ('cancelled' in answer) throw partError(task, 'it was cancelled');
          answers.set(id, answer);
          if (answer.log) job.onLog?.(task.name, answer.log);
          job.onProgress?.(task.name, 1);
        }
      } catch (error) {
        // Redis away: the parts go on where they run; they are looked at again once it is back.
        if (!isConnectionError(error)) throw error;
        this.deps.logger.warn({ err: error, job: owner }, 'looking at the parts of a split encode failed; retrying');
      }
      if (answers.size < children.size) await sleep(POLL_MS, undefined, job.signal ? { signal: job.signal } : {});
    }
    return answers;
  }

  /**
   * Stops parts: a waiting one leaves the queue, a running one is cancelled on its worker. Resolves once none runs,
   * so that no part's ffmpeg outlives its job. A part whose worker died is handed back by BullMQ's stalled check
   * (within about twice MEDIAFLOW_STALLED_INTERVAL) and then removed; past four intervals it is let go of.
   */
  private async stop(owner: string, ids: readonly string[]): Promise<void> {
    const deadline = Date.now() + 4 * this.deps.stalledIntervalMs;
    let left = [...ids];
    for (let round = 0; left.length > 0; round++) {
      const still: string[] = [];
      for (const id of left) {
        const child = await Job.fromId(this.deps.parts, id).catch(() => undefined);
        if (!child || child.finishedOn) continue;
        const removed = await child.remove().then(
          () => true,
          () => false,
        );
        if (removed) continue;
        // Running (locked): its worker kills its ffmpeg and answers `cancelled`. Asked again now and then, in case
        // it was taken between the look and the ask.
        if (round % 10 === 0) this.deps.events.requestCancel(id);
        if (Date.now() < deadline) still.push(id);
        else {
          this.deps.logger.warn({ job: owner, part: id }, 'a part did not stop; its job ends without it');
          await child.removeChildDependency().catch(() => false);
        }
      }
      left = still;
      if (left.length > 0) await sleep(POLL_MS / 2);
    }
  }

  /** Stops the parts an earlier run of this engine run left running (its worker died and the job runs again). */
  private async stopEarlierRuns(job: PartJob, owner: string): Promise<void> {
    const parent = await Job.fromId(this.deps.jobs, owner);
    const queueKey = `${this.deps.parts.qualifiedName}:`;
    const { unprocessed = [] } = (await parent?.getDependencies()) ?? {};
    const earlier = unprocessed
      .filter((key) => key.startsWith(`${queueKey}${job.id}-`))
      .map((key) => key.slice(queueKey.length));
    if (earlier.length > 0) await this.stop(owner, earlier);
  }
}

/** The slots a part worker's name says it has (`<host>:<pid>/<slots>`); 1 for a name without them. */
const slotsOfWorker = (name: string): number => Number(/\/(\d+)$/.exec(name)?.[1] ?? 1);

/** A part's failure as its job's: which part, and why. */
const partError = (task: PartTask, why: string) =>
  new MediaflowError('MF_ERR_INTERNAL', `${task.label} failed: ${why}`);
