import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from '../engine/logger.js';
import type { JobEvents, JobListener } from './events.js';
import type { JobRecord } from './job.js';
import { REDIS_PREFIX } from './redis.js';

const CHANGES = `${REDIS_PREFIX}:events:jobs`;
const CANCELS = `${REDIS_PREFIX}:events:cancel`;

/**
 * Job changes and cancellations over Redis pub/sub, so every API process can relay a job's
 * progress (SSE, a waiting synchronous request) whichever worker runs it, and a cancel reaches
 * that worker. Each process subscribes once and fans out to its own listeners.
 */
export class RedisJobEvents implements JobEvents {
  private readonly local = new EventEmitter();

  constructor(
    private readonly publisher: Redis,
    subscriber: Redis,
    private readonly logger: Logger,
  ) {
    this.local.setMaxListeners(0);
    void subscriber
      .subscribe(CHANGES, CANCELS)
      .catch((error: unknown) => logger.error({ err: error }, 'subscribing to job events failed'));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === CANCELS) this.local.emit('cancel', message);
      else {
        const record = JSON.parse(message) as JobRecord;
        this.local.emit(`job:${record.id}`, record);
      }
    });
  }

  publish(record: JobRecord): void {
    // A change that cannot be told is still in the store: listeners that miss it read it there.
    this.publisher
      .publish(CHANGES, JSON.stringify(record))
      .catch((error: unknown) => this.logger.warn({ err: error, job: record.id }, 'publishing a job change failed'));
  }

  subscribe(id: string, listener: JobListener): () => void {
    this.local.on(`job:${id}`, listener);
    return () => this.local.off(`job:${id}`, listener);
  }

  requestCancel(id: string): void {
    this.publisher
      .publish(CANCELS, id)
      .catch((error: unknown) => this.logger.warn({ err: error, job: id }, 'publishing a cancel failed'));
  }

  onCancel(listener: (id: string) => void): void {
    this.local.on('cancel', listener);
  }
}
