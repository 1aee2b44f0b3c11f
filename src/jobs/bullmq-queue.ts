import { Queue, WaitingError, Worker } from 'bullmq';
import type { Config } from '../engine/config.js';
import { busyError } from '../engine/errors.js';
import type { Logger } from '../engine/logger.js';
import type { DeliveryQueue } from './webhooks/deliveries.js';
import type { JobHandler, JobQueue, QueueDepth } from './queue.js';
import { commandConnection, redisCall, REDIS_PREFIX, waitingConnection } from './redis.js';

export const JOBS_QUEUE = 'jobs';

/** Whether a BullMQ job in this state is still to be worked (waiting, delayed or active), not over or missing. */
const live = (state: string): boolean => !['completed', 'failed', 'unknown'].includes(state);
export const WEBHOOKS_QUEUE = 'webhooks';

/**
 * How many finished BullMQ entries a queue keeps, and for how long, so the dashboard shows what happened
 * (MEDIAFLOW_DASHBOARD_KEEP_JOBS, MEDIAFLOW_DASHBOARD_KEEP_AGE). An entry holds only a job id: the record is the
 * job's truth, kept and removed by its own retention.
 */
export interface KeepFinished {
  count: number;
  /** Seconds, as BullMQ counts them. */
  age: number;
}

/** The finished entries a queue keeps, as the configuration says. */
export const keepFinishedOf = (config: Config): KeepFinished => ({
  count: config.dashboardKeepJobs,
  age: Math.ceil(config.dashboardKeepAgeMs / 1000),
});

export interface BullQueueOptions {
  url: string;
  /** Jobs waiting before a submission is refused with 503 (MEDIAFLOW_MAX_QUEUE). */
  maxWaiting: number;
  /** Jobs this process works at once. */
  concurrency: number;
  /** Runs a job may start (MEDIAFLOW_JOB_ATTEMPTS); the handler gives up on a job, not BullMQ. */
  jobAttempts: number;
  /** A dead worker's job goes back to the queue after about this long (lock duration and stalled check). */
  stalledIntervalMs: number;
  keep: KeepFinished;
  logger: Logger;
}

/**
 * The job queue on BullMQ: any number of API processes add job ids, any number of workers take
 * them. A worker killed mid-job stops renewing its lock, and BullMQ's stalled-job check gives the
 * job to another worker; the record says how many runs it had, and the handler fails it once
 * MEDIAFLOW_JOB_ATTEMPTS is spent (BullMQ's own limit is set above that, so it never decides).
 */
export class BullJobQueue implements JobQueue {
  readonly queue: Queue;
  private worker?: Worker;

  constructor(private readonly options: BullQueueOptions) {
    this.queue = new Queue(JOBS_QUEUE, { connection: commandConnection(options.url), prefix: REDIS_PREFIX });
    this.queue.on('error', (error) => options.logger.warn({ err: error }, 'job queue connection error'));
  }

  async add(id: string, options: { force?: boolean } = {}): Promise<void> {
    await redisCall(async () => {
      if (!options.force && (await this.queue.getWaitingCount()) >= this.options.maxWaiting) {
        throw busyError(`Too many jobs are waiting (${this.options.maxWaiting}); retry later`);
      }
      // The job id is the record's: adding it twice queues it once. A finished BullMQ job of that id
      // would swallow the add, so one left behind (the sweeper runs its record again) goes first.
      if (options.force && ['completed', 'failed'].includes(await this.queue.getJobState(id)))
        await this.queue.remove(id);
      const { keep } = this.options;
      await this.queue.add('job', { id }, { jobId: id, removeOnComplete: keep, removeOnFail: keep });
    });
  }

  async remove(id: string): Promise<boolean> {
    return redisCall(async () => {
      const job = await this.queue.getJob(id);
      if (!job || !['waiting', 'prioritized', 'delayed'].includes(await job.getState())) return false;
      try {
        await job.remove();
        return true;
      } catch {
        // A worker took it between the look and the removal.
        return false;
      }
    });
  }

  async holds(id: string): Promise<boolean> {
    return redisCall(async () => live(await this.queue.getJobState(id)));
  }

  process(handler: JobHandler): void {
    const { url, concurrency, jobAttempts, stalledIntervalMs, logger } = this.options;
    this.worker = new Worker(
      JOBS_QUEUE,
      async (job, token) => {
        if ((await handler((job.data as { id: string }).id)) === 'handed-back') {
          // A shutdown stopped it: straight back to the queue for another worker, not a failure.
          await job.moveToWait(token);
          throw new WaitingError();
        }
      },
      {
        connection: waitingConnection(url),
        prefix: REDIS_PREFIX,
        concurrency,
        lockDuration: stalledIntervalMs,
        stalledInterval: stalledIntervalMs,
        maxStalledCount: jobAttempts + 1,
      },
    );
    this.worker.on('error', (error) => logger.warn({ err: error }, 'job worker connection error'));
    this.worker.on('stalled', (id) => {
      this.stalled++;
      logger.warn({ job: id }, 'a worker stopped during this job; it goes back to the queue');
    });
  }

  /** Jobs this process found stalled (their worker stopped) and put back, since it started. */
  private stalled = 0;

  async pause(): Promise<void> {
    // Take no more jobs; the running ones are the service's to finish or hand back.
    await this.worker?.pause(true);
  }

  async depth(): Promise<QueueDepth> {
    return redisCall(async () => {
      const counts = await this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
      return {
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0),
        running: counts.active ?? 0,
        stalled: this.stalled,
      };
    });
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}

/** Webhook attempts as delayed BullMQ jobs: durable in Redis, made by whichever worker is free. */
export class BullDeliveryQueue implements DeliveryQueue {
  readonly queue: Queue;
  private worker?: Worker;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    /** An attempt whose worker stopped (killed, or cut off from Redis) is made again after about this long. */
    private readonly stalledIntervalMs: number,
    private readonly keep: KeepFinished,
  ) {
    this.queue = new Queue(WEBHOOKS_QUEUE, { connection: commandConnection(url), prefix: REDIS_PREFIX });
    this.queue.on('error', (error) => logger.warn({ err: error }, 'webhook queue connection error'));
  }

  async schedule(id: string, at: number): Promise<void> {
    // One BullMQ job per attempt time: scheduling the same attempt twice keeps one.
    await this.queue.add(
      'deliver',
      { id },
      {
        jobId: `${id}-${at}`,
        delay: Math.max(0, at - Date.now()),
        removeOnComplete: this.keep,
        removeOnFail: this.keep,
      },
    );
  }

  async holds(id: string, at: number): Promise<boolean> {
    return live(await this.queue.getJobState(`${id}-${at}`));
  }

  process(attempt: (id: string) => Promise<void>): void {
    this.worker = new Worker(WEBHOOKS_QUEUE, (job) => attempt((job.data as { id: string }).id), {
      connection: waitingConnection(this.url),
      prefix: REDIS_PREFIX,
      concurrency: 8,
      // As for jobs (MEDIAFLOW_STALLED_INTERVAL): with BullMQ's 30 s defaults, an attempt taken just as
      // Redis went away stayed `active` for up to a minute after Redis was back, and the sweeper, which
      // sees it held, left it there.
      lockDuration: this.stalledIntervalMs,
      stalledInterval: this.stalledIntervalMs,
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'webhook worker connection error'));
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}
