import type { Logger } from '../engine/logger.js';
import { MediaflowError } from '../engine/errors.js';

/**
 * Whether an ioredis error means Redis is not reachable (rather than a bad command). Here, not in redis.ts, so that
 * an embedded process, which retries nothing, does not load ioredis for it.
 */
export function isConnectionError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  const code = (error as { code?: string } | undefined)?.code ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code) ||
    (error instanceof Error && error.name === 'MaxRetriesPerRequestError') ||
    /enableOfflineQueue|Connection is closed|Stream isn't writeable|connect ECONNREFUSED/i.test(message)
  );
}

/** Waits between tries while Redis is away: 200 ms, doubling, at most this long. */
const MAX_WAIT_MS = 5_000;

/** Whether a failure is Redis being out of reach (raw from ioredis or BullMQ, or as redisCall's 503). */
export const isUnreachable = (error: unknown): boolean =>
  isConnectionError(error) ||
  (error instanceof MediaflowError && error.code === 'MF_ERR_BUSY' && isConnectionError(error.cause));

/**
 * Runs `work` until it succeeds, trying again with back-off for as long as Redis cannot be reached,
 * so that what must be recorded (a job's end, its webhook's next attempt) outlives a Redis restart.
 * Any other error, or `signal` aborting (the process is stopping), ends the tries with that error.
 */
export async function untilReachable<T>(
  work: () => Promise<T>,
  what: string,
  context: { logger: Logger; job: string; signal: AbortSignal },
): Promise<T> {
  const { logger, job, signal } = context;
  for (let tries = 1; ; tries++) {
    try {
      const result = await work();
      if (tries > 1) logger.info({ job, tries }, `${what}: done once Redis was back`);
      return result;
    } catch (error) {
      if (!isUnreachable(error) || signal.aborted) throw error;
      const wait = Math.min(MAX_WAIT_MS, 200 * 2 ** Math.min(tries - 1, 10));
      logger.warn({ job, tries, retry_in_ms: wait, err: error }, `${what}: Redis cannot be reached; trying again`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
