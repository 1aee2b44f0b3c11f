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
