import PQueue from 'p-queue';
import { busyError } from '../errors.js';

/** Works one job, by id; resolves when the job has reached a final state (or was handed back). */
export type JobHandler = (id: string) => Promise<void>;

/**
 * Carries job ids, never closures: the record itself is in the job store, so the process that
 * takes a job may be another than the one that accepted it. The in-process queue is the default;
 * a Redis queue would be another.
 */
export interface JobQueue {
  /** Queues a job; refuses at once (503) when all slots are busy and too many wait, unless `force` (a restart re-queueing). */
  add(id: string, options?: { force?: boolean }): void;
  /** Takes a waiting job off the queue; false when it was not waiting (running, or unknown). */
  remove(id: string): boolean;
  /** Sets the function that works each job; jobs wait until there is one. */
  process(handler: JobHandler): void;
  /** Stops starting jobs (shutdown); the waiting ones stay in the store, queued, for the next start. */
  pause(): void;
  readonly waiting: number;
  readonly running: number;
}

/** Jobs of one process on p-queue, at most `concurrency` at once. */
export class LocalJobQueue implements JobQueue {
  private readonly queue: PQueue;
  private readonly waitingJobs = new Map<string, AbortController>();
  private handler?: JobHandler;
  private readonly pending: string[] = [];

  constructor(
    concurrency: number,
    private readonly maxWaiting: number,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  get waiting(): number {
    return this.waitingJobs.size;
  }

  get running(): number {
    return this.queue.pending;
  }

  add(id: string, options: { force?: boolean } = {}): void {
    if (!options.force && this.queue.pending >= this.queue.concurrency && this.waitingJobs.size >= this.maxWaiting) {
      throw busyError(`Too many jobs are waiting (${this.maxWaiting}); retry later`);
    }
    const controller = new AbortController();
    this.waitingJobs.set(id, controller);
    if (!this.handler) {
      this.pending.push(id);
      return;
    }
    this.schedule(id, controller, this.handler);
  }

  remove(id: string): boolean {
    const controller = this.waitingJobs.get(id);
    if (!controller) return false;
    this.waitingJobs.delete(id);
    controller.abort();
    return true;
  }

  process(handler: JobHandler): void {
    this.handler = handler;
    for (const id of this.pending.splice(0)) {
      const controller = this.waitingJobs.get(id);
      if (controller) this.schedule(id, controller, handler);
    }
  }

  pause(): void {
    this.queue.pause();
  }

  private schedule(id: string, controller: AbortController, handler: JobHandler): void {
    this.queue
      .add(
        () => {
          this.waitingJobs.delete(id);
          return handler(id);
        },
        { signal: controller.signal },
      )
      // A job taken off the queue rejects here with the abort; the handler reports its own failures.
      .catch(() => undefined);
  }
}
