import PQueue from 'p-queue';
import { busyError } from '../engine/errors.js';

/**
 * Works one job, by id. `finished`: the job reached a final state. `handed-back`: the process is
 * stopping and the job goes back to the queue for another run (not counted as an attempt).
 */
export type JobHandler = (id: string) => Promise<'finished' | 'handed-back'>;

/** How deep a queue is: jobs waiting for a worker, and jobs being worked. */
export interface QueueDepth {
  waiting: number;
  running: number;
  /** Jobs this process found abandoned by a dead worker and put back (Redis mode). */
  stalled?: number;
}

/**
 * Carries job ids, never closures: the record itself is in the job store, so the process that
 * takes a job may be another than the one that accepted it. The in-process queue is the default;
 * BullMQ on Redis is the other.
 */
export interface JobQueue {
  /** Queues a job; refuses at once (503) when too many wait, unless `force` (a restart re-queueing). */
  add(id: string, options?: { force?: boolean }): Promise<void>;
  /** Takes a waiting job off the queue; false when it was not waiting (running, or unknown). */
  remove(id: string): Promise<boolean>;
  /** Whether the job waits in the queue or a live worker has it (the sweeper looks for records that neither holds). */
  holds(id: string): Promise<boolean>;
  /** Starts working jobs with `handler` (a process with no workers never calls it). */
  process(handler: JobHandler): void;
  /** Stops starting jobs (shutdown); waiting ones stay queued for another worker or the next start. */
  pause(): Promise<void>;
  depth(): Promise<QueueDepth>;
  /** Lets go of connections (after `pause` and the running jobs are done). */
  close(): Promise<void>;
}

/** Jobs of one process on p-queue, at most `concurrency` at once. */
export class LocalJobQueue implements JobQueue {
  private readonly queue: PQueue;
  private readonly waitingJobs = new Map<string, AbortController>();
  /** Jobs the handler works now. */
  private readonly active = new Set<string>();
  private handler?: JobHandler;
  private readonly pending: string[] = [];

  constructor(
    concurrency: number,
    private readonly maxWaiting: number,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  async depth(): Promise<QueueDepth> {
    return { waiting: this.waitingJobs.size, running: this.queue.pending };
  }

  async add(id: string, options: { force?: boolean } = {}): Promise<void> {
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

  async remove(id: string): Promise<boolean> {
    const controller = this.waitingJobs.get(id);
    if (!controller) return false;
    this.waitingJobs.delete(id);
    controller.abort();
    return true;
  }

  async holds(id: string): Promise<boolean> {
    return this.waitingJobs.has(id) || this.active.has(id);
  }

  process(handler: JobHandler): void {
    this.handler = handler;
    for (const id of this.pending.splice(0)) {
      const controller = this.waitingJobs.get(id);
      if (controller) this.schedule(id, controller, handler);
    }
  }

  async pause(): Promise<void> {
    this.queue.pause();
  }

  async close(): Promise<void> {}

  private schedule(id: string, controller: AbortController, handler: JobHandler): void {
    this.queue
      .add(
        async () => {
          this.waitingJobs.delete(id);
          this.active.add(id);
          try {
            return await handler(id);
          } finally {
            this.active.delete(id);
          }
        },
        { signal: controller.signal },
      )
      // A job taken off the queue rejects here with the abort; the handler reports its own failures.
      .catch(() => undefined);
  }
}
