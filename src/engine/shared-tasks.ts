/**
 * Work that several callers may ask for at once, done once: a model's first fetch, wanted by every request that
 * needs it. Each caller's signal ends only its own wait; the work is stopped (its signal aborted) when nobody waits
 * any more, and the next caller starts it afresh.
 */
export class SharedTasks {
  private readonly running = new Map<string, { done: Promise<void>; waiters: number; controller: AbortController }>();

  /** Waits for the work under `key`, starting `work` unless it is under way. */
  async run(key: string, work: (signal: AbortSignal) => Promise<void>, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    let task = this.running.get(key);
    if (!task) {
      const controller = new AbortController();
      const started = { done: work(controller.signal), waiters: 0, controller };
      // Every caller may have stopped waiting: then nobody awaits the failure it ends with.
      started.done.catch(() => undefined);
      void started.done.finally(() => this.forget(key, started)).catch(() => undefined);
      this.running.set(key, started);
      task = started;
    }
    task.waiters++;
    try {
      await untilAborted(task.done, signal);
    } finally {
      task.waiters--;
      if (task.waiters === 0 && this.running.get(key) === task) {
        this.forget(key, task);
        task.controller.abort();
      }
    }
  }

  private forget(key: string, task: { done: Promise<void> }): void {
    if (this.running.get(key) === task) this.running.delete(key);
  }
}

/**
 * `work`'s result, or the signal's reason as soon as it aborts: a caller stops waiting at once while the work ends
 * on its own (work shared with other callers, a plugin's step that cannot be stopped).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
