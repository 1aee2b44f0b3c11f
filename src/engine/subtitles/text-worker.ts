import os from 'node:os';
import { parentPort } from 'node:worker_threads';

/**
 * A thread of the text pool (text-workers.ts): runs one exported function of a module at a time
 * and posts back its result. The modules are named by mediaflow's own code, never by a request.
 */
export interface TextTask {
  id: number;
  module: string;
  name: string;
  args: unknown[];
}

/**
 * Below the event loop's priority: on a busy machine the scheduler then gives a core to the main
 * thread (requests, /health) before this text work. On Linux a nice value is per thread, so this
 * lowers only this thread; elsewhere it would lower the whole process, so it is not done there.
 */
if (process.platform === 'linux') os.setPriority(0, 10);

parentPort!.on('message', async ({ id, module, name, args }: TextTask) => {
  try {
    const run = (await import(module))[name] as (...args: unknown[]) => unknown;
    parentPort!.postMessage({ id, value: await run(...args) });
  } catch (error) {
    // An error crosses the thread as plain fields; the pool rebuilds a MediaflowError from its code.
    const { message, code } = error as { message?: string; code?: unknown };
    parentPort!.postMessage({ id, error: { message: message ?? String(error), code } });
  }
});
