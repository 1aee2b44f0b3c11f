import { Queue } from 'bullmq';
import type { Config } from '../../engine/config.js';
import type { Logger } from '../../engine/logger.js';
import { LocalPartRunner, PartEncoder, type PartRunner } from '../../engine/run/fanout/part-runner.js';
import type { Slots } from '../../engine/exec/slots.js';
import type { OutputStore, Workspaces } from '../../engine/storage/storage.js';
import type { JobBackend } from '../backend.js';
import { keepFinishedOf } from '../bullmq-queue.js';
import { commandConnection, REDIS_PREFIX } from '../redis.js';
import { BullPartRunner } from './bull-part-runner.js';
import { LocalRuns, PARTS_QUEUE } from './part-queue.js';
import { PartWorker } from './part-worker.js';

/** What Redis mode's parts need of the process. */
export interface RedisPartsDeps {
  config: Config;
  backend: JobBackend & { redis: NonNullable<JobBackend['redis']> };
  store: OutputStore;
  slots: Slots;
  workspaces: Workspaces;
  ffmpeg: string;
  logger: Logger;
}

/** Redis mode's parts of split encodes: the runner the engine hands them to, and the queue they wait in. */
export interface RedisParts {
  runner: PartRunner;
  queue: Queue;
  /** Stops taking parts, hands the running ones back, and lets go of the connections. */
  close(): Promise<void>;
}

/**
 * The parts queue of a Redis deployment (docs/fanout.md): this process's split encodes put their parts there, and,
 * when it works jobs, it takes parts of any job from there too.
 */
export function redisParts(deps: RedisPartsDeps): RedisParts {
  const { config, backend, store, logger } = deps;
  const queue = new Queue(PARTS_QUEUE, { connection: commandConnection(backend.redis.url), prefix: REDIS_PREFIX });
  queue.on('error', (error) => logger.warn({ err: error }, 'parts queue connection error'));
  const encoder = new PartEncoder(deps.ffmpeg, deps.slots, config.jobTimeoutMs);
  const local = new LocalRuns();
  const runner = new BullPartRunner({
    parts: queue,
    jobs: backend.redis.jobs,
    store,
    events: backend.events,
    local,
    fallback: new LocalPartRunner(encoder),
    keep: keepFinishedOf(config),
    stalledIntervalMs: config.stalledIntervalMs,
    logger,
  });
  const worker = backend.works
    ? new PartWorker({
        url: backend.redis.url,
        store,
        encoder,
        workspaces: deps.workspaces,
        events: backend.events,
        local,
        concurrency: config.concurrency,
        stalledIntervalMs: config.stalledIntervalMs,
        jobAttempts: config.jobAttempts,
        logger,
      })
    : undefined;
  return {
    runner,
    queue,
    close: async () => {
      await worker?.close();
      await queue.close();
    },
  };
}
