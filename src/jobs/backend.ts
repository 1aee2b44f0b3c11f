import path from 'node:path';
import type { Queue } from 'bullmq';
import type { Config } from '../engine/config.js';
import { paramError } from '../engine/errors.js';
import type { Logger } from '../engine/logger.js';
import { LocalDeliveryQueue, type DeliveryQueue } from './webhooks/deliveries.js';
import { LocalJobEvents, type JobEvents } from './events.js';
import { FileJobStore, type JobStore } from './job-store.js';
import { LocalJobQueue, type JobQueue } from './queue.js';

/** What a process does: `api` serves HTTP (and works jobs unless MEDIAFLOW_WORKERS=0); `worker` only works jobs. */
export type Role = 'api' | 'worker';

/** Where jobs live and travel: in this process (embedded) or in Redis, shared by many. */
export interface JobBackend {
  kind: 'embedded' | 'redis';
  store: JobStore;
  queue: JobQueue;
  events: JobEvents;
  deliveries: DeliveryQueue;
  /** Whether this process works jobs (and makes webhook attempts). */
  works: boolean;
  /** Throws when the backend cannot be reached (for /health). */
  ping(): Promise<void>;
  /** Closes what the backend opened (connections), after the job service has stopped. */
  close(): Promise<void>;
  /** The BullMQ queues, for the dashboard (Redis mode). */
  bullQueues?: Queue[];
  /** Redis mode's address and jobs queue: a split encode's parts are child jobs of its job there (docs/fanout.md). */
  redis?: { url: string; jobs: Queue };
}

/**
 * Jobs this process works at once: a worker's concurrency, or an API's MEDIAFLOW_WORKERS (default: the concurrency).
 */
export const workersOf = (config: Config, role: Role): number =>
  role === 'worker' ? config.concurrency : (config.workers ?? config.concurrency);

/** The backend the configuration asks for: Redis when MEDIAFLOW_REDIS_URL is set, else this process. */
export async function createJobBackend(config: Config, role: Role, logger: Logger): Promise<JobBackend> {
  const workers = workersOf(config, role);
  if (!config.redisUrl) {
    if (workers === 0 || role === 'worker') {
      throw paramError(
        'An API without workers, or a separate worker, needs a shared queue: set MEDIAFLOW_REDIS_URL (--redis-url)',
      );
    }
    return {
      kind: 'embedded',
      store: await FileJobStore.open(path.join(config.dataDir, 'jobs'), {
        onWriteError: (error, id) =>
          logger.error(
            { job: id, err: error },
            'writing the job record failed; it is kept in memory and written again',
          ),
        maxRecordBytes: config.maxRecordBytes,
        onOversize: (file, bytes) =>
          logger.warn(
            { file, bytes, limit: config.maxRecordBytes },
            'a job record larger than MEDIAFLOW_MAX_RECORD_BYTES was not loaded; delete it or raise the limit',
          ),
      }),
      queue: new LocalJobQueue(workers, config.maxQueue),
      events: new LocalJobEvents(),
      deliveries: new LocalDeliveryQueue(),
      works: true,
      ping: async () => {},
      close: async () => {},
    };
  }
  // BullMQ and ioredis load only for Redis: an embedded process has no use for them.
  const [bull, { commandConnection, waitingConnection }, { RedisJobEvents }, { RedisJobStore }] = await Promise.all([
    import('./bullmq-queue.js'),
    import('./redis.js'),
    import('./redis-events.js'),
    import('./redis-job-store.js'),
  ]);
  const { BullDeliveryQueue, BullJobQueue, keepFinishedOf } = bull;
  const url = config.redisUrl;
  const commands = commandConnection(url);
  const subscriber = waitingConnection(url);
  // ioredis reports every failed reconnect; one line per outage state is enough.
  for (const connection of [commands, subscriber])
    connection.on('error', (error: Error) => logger.debug({ err: error }, 'redis connection error'));
  const keep = keepFinishedOf(config);
  const queue = new BullJobQueue({
    url,
    maxWaiting: config.maxQueue,
    concurrency: Math.max(1, workers),
    jobAttempts: config.jobAttempts,
    stalledIntervalMs: config.stalledIntervalMs,
    keep,
    logger,
  });
  const deliveries = new BullDeliveryQueue(url, logger, config.stalledIntervalMs, keep);
  return {
    kind: 'redis',
    store: new RedisJobStore(commands, config.retentionMs, config.maxRecordBytes),
    queue,
    events: new RedisJobEvents(commands, subscriber, logger),
    deliveries,
    bullQueues: [queue.queue, deliveries.queue],
    redis: { url, jobs: queue.queue },
    works: workers > 0,
    ping: async () => {
      await commands.ping();
    },
    close: async () => {
      commands.disconnect();
      subscriber.disconnect();
    },
  };
}
