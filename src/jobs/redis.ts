import { Redis, type RedisOptions } from 'ioredis';
import { MediaflowError } from '../engine/errors.js';
import { isConnectionError } from './retry.js';

/** Keys and channels of one mediaflow deployment in Redis start with this. */
export const REDIS_PREFIX = 'mediaflow';

/**
 * A connection for commands that answer requests: while Redis is unreachable they fail at once
 * (no offline queue, one retry) so the API can answer 503 instead of hanging.
 */
export const commandConnection = (url: string): Redis =>
  new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, ...reconnect });

/** A connection for BullMQ workers and subscribers: commands wait for Redis to come back, as BullMQ requires. */
export const waitingConnection = (url: string): Redis => new Redis(url, { maxRetriesPerRequest: null, ...reconnect });

/** Reconnect forever, at most a second apart: Redis coming back is picked up by itself. */
const reconnect: RedisOptions = { retryStrategy: (times) => Math.min(times * 100, 1000), lazyConnect: false };

/** Runs a Redis call; a connection failure becomes a 503 with Retry-After, the status for "try again shortly". */
export async function redisCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    // The cause tells a caller that may wait for Redis (a job's end) from a full queue's 503.
    if (isConnectionError(error))
      throw new MediaflowError('MF_ERR_BUSY', 'The job queue (Redis) cannot be reached; retry later', {
        cause: error,
        retryAfter: 5,
      });
    throw error;
  }
}
