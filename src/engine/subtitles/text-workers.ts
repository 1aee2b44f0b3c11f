import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { isErrorCode, MediaflowError } from '../errors.js';
import type { TextTask } from './text-worker.js';

/**
 * A small pool of worker threads for CPU-bound text work (subtitle encodings, ASS scripts of
 * megabytes): on the main thread it would stall every other request and /health for seconds.
 * Threads start on first use, and idle ones do not keep the process alive.
 */

/**
 * From dist the worker is plain JS. From src (tsx, vitest) it is TypeScript: a bootstrap registers
 * tsx's loader in the thread first (Node 20 does not apply `--import` of a worker's execArgv).
 */
const fromSource = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSource ? './text-worker.ts' : './text-worker.js', import.meta.url);
const SOURCE_BOOTSTRAP =
  `import('tsx/esm/api').then(({ register }) => { register(); return ` +
  `import(${JSON.stringify(WORKER_URL.href)}); })`;

interface Pending {
  task: TextTask;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
}

/**
 * An engine's pool, sized by its job slots: at most one thread per slot, and one core is left to the event loop.
 */
export class TextWorkers {
  private readonly size: number;
  private nextId = 0;
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly waiting: Pending[] = [];

  /** `slots`: the engine's job slots (MEDIAFLOW_CONCURRENCY), capped at the cores less one. */
  constructor(slots: number) {
    this.size = Math.max(1, Math.min(slots, os.availableParallelism() - 1));
  }

  /**
   * Runs `name`, exported by `module` (a file URL of mediaflow's or a plugin's own code), in a pool
   * thread with `args` (structured-cloneable), and resolves with what it returns. A signal that
   * fires takes the task off the queue, or ends its thread if it is running: CPU work cannot be
   * interrupted otherwise.
   */
  run<T>(module: URL, name: string, args: unknown[], signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiting.indexOf(pending);
        if (index >= 0) {
          this.waiting.splice(index, 1);
          reject(signal!.reason);
        }
        for (const [worker, task] of this.busy) if (task === pending) void worker.terminate();
      };
      // The job's signal outlives the task: its listener goes once the task has settled.
      const settle =
        <A>(finish: (value: A) => void) =>
        (value: A) => {
          signal?.removeEventListener('abort', onAbort);
          finish(value);
        };
      const pending: Pending = {
        task: { id: this.nextId++, module: module.href, name, args },
        resolve: settle(resolve as (value: unknown) => void),
        reject: settle(reject),
        signal,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(pending);
      this.drain();
    });
  }

  private spawn(): Worker {
    const worker = fromSource ? new Worker(SOURCE_BOOTSTRAP, { eval: true }) : new Worker(WORKER_URL);
    worker.on('message', (reply: { id: number; value?: unknown; error?: { message: string; code?: unknown } }) => {
      const pending = this.busy.get(worker);
      if (!pending || pending.task.id !== reply.id) return;
      this.busy.delete(worker);
      if (reply.error) pending.reject(rebuild(reply.error));
      else pending.resolve(reply.value);
      this.release(worker);
    });
    // A thread that dies (out of memory, terminated on cancel) fails its task and leaves the pool.
    const dead = (error: unknown) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
      pending?.reject(pending.signal?.aborted ? pending.signal.reason : error);
      this.drain();
    };
    worker.on('error', dead);
    worker.on('exit', (code) => dead(new Error(`text worker exited with code ${code}`)));
    return worker;
  }

  /** Gives a free thread the next task, or lets it idle without holding the process open. */
  private release(worker: Worker): void {
    worker.unref();
    this.idle.push(worker);
    this.drain();
  }

  private drain(): void {
    while (this.waiting.length > 0 && (this.idle.length > 0 || this.idle.length + this.busy.size < this.size)) {
      const pending = this.waiting.shift()!;
      if (pending.signal?.aborted) {
        pending.reject(pending.signal.reason);
        continue;
      }
      const worker = this.idle.pop() ?? this.spawn();
      worker.ref();
      this.busy.set(worker, pending);
      worker.postMessage(pending.task);
    }
  }
}

/** A thread's failure as the caller's error: mediaflow's own errors keep their code (and status). */
function rebuild(error: { message: string; code?: unknown }): Error {
  return isErrorCode(error.code) ? new MediaflowError(error.code, error.message) : new Error(error.message);
}
