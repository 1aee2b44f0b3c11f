import PQueue from 'p-queue';
import { busyError } from './errors.js';

/** Runs jobs with bounded concurrency. The in-process p-queue is the default; a Redis queue would be another. */
export interface JobQueue {
  /** Runs `task` when a slot is free; refuses at once (503) when too many are waiting. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Jobs waiting for a slot. */
  readonly waiting: number;
  /** Jobs running. */
  readonly running: number;
  /** Resolves when nothing is running or waiting. */
  idle(): Promise<void>;
}

export class LocalJobQueue implements JobQueue {
  private readonly queue: PQueue;

  constructor(
    concurrency: number,
    private readonly maxWaiting: number,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  get waiting(): number {
    return this.queue.size;
  }

  get running(): number {
    return this.queue.pending;
  }

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.queue.pending >= this.queue.concurrency && this.queue.size >= this.maxWaiting) {
      throw busyError(`Too many jobs are waiting (${this.maxWaiting}); retry later`);
    }
    // A signal that fires while the job waits takes it off the queue (p-queue rejects with the reason).
    return this.queue.add(task, signal ? { signal } : {}) as Promise<T>;
  }

  idle(): Promise<void> {
    return this.queue.onIdle();
  }
}
