import os from 'node:os';
import PQueue from 'p-queue';

/**
 * ffmpeg work slots of one process: at most `concurrency` operations run at once, the rest wait.
 * Jobs are admitted (or refused with 503) by the job queue before they get here; pipeline steps
 * and CLI runs take slots directly, so every operation of a process shares the same limit.
 */
export class Slots {
  private readonly queue: PQueue;

  constructor(
    /** Operations at once (MEDIAFLOW_CONCURRENCY), whatever a split encode lends meanwhile. */
    readonly size: number,
  ) {
    this.queue = new PQueue({ concurrency: size });
  }

  /** Operations waiting for a slot. */
  get waiting(): number {
    return this.queue.size;
  }

  /** Operations running. */
  get running(): number {
    return this.queue.pending;
  }

  /**
   * Runs `task` when a slot is free. A signal that fires while it waits takes it off the queue
   * (rejecting with the signal's reason); once it runs, the task answers the signal itself and
   * settles only after its own clean-up (ffmpeg reaped, workspace removed), so a cancel that
   * awaits it finds nothing left behind. p-queue would reject a running task at once.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const whileWaiting = new AbortController();
    let started = false;
    const onAbort = () => !started && whileWaiting.abort(signal!.reason);
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return (await this.queue.add(
        () => {
          started = true;
          return task();
        },
        { signal: whileWaiting.signal },
      )) as T;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Runs `work` from inside a running task, with that task's slot given back meanwhile: a split encode waits for its
   * parts, which need slots of their own, and holding one would leave a process of one slot waiting for itself.
   */
  async lend<T>(work: () => Promise<T>): Promise<T> {
    this.queue.concurrency += 1;
    try {
      return await work();
    } finally {
      this.queue.concurrency -= 1;
    }
  }
}

/**
 * The cores each of `slots` job slots may use for threads of its own (libvips, whisper.cpp): each slot works one job,
 * and with every slot busy each core is used once.
 */
export const coresEach = (slots: number): number =>
  Math.max(1, Math.floor(os.availableParallelism() / Math.max(1, slots)));
