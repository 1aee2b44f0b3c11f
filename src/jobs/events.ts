import { EventEmitter } from 'node:events';
import type { JobRecord } from './job.js';

/** Hears every change of one job's record. */
export type JobListener = (record: JobRecord) => void;

/**
 * Changes of job records, and cancellations, told to whoever listens: the event stream, a
 * waiting synchronous request, the process running the job. In one process an emitter serves;
 * across processes Redis pub/sub would be another.
 */
export interface JobEvents {
  publish(record: JobRecord): void;
  /** Listens to one job's changes; returns the function that stops listening. */
  subscribe(id: string, listener: JobListener): () => void;
  /** Asks whichever process runs the job to stop it. */
  requestCancel(id: string): void;
  /** Hears cancellation requests (the process that runs jobs). */
  onCancel(listener: (id: string) => void): void;
}

export class LocalJobEvents implements JobEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open event stream and per waiting request: many is normal.
    this.emitter.setMaxListeners(0);
  }

  publish(record: JobRecord): void {
    this.emitter.emit(`job:${record.id}`, record);
  }

  subscribe(id: string, listener: JobListener): () => void {
    this.emitter.on(`job:${id}`, listener);
    return () => this.emitter.off(`job:${id}`, listener);
  }

  requestCancel(id: string): void {
    this.emitter.emit('cancel', id);
  }

  onCancel(listener: (id: string) => void): void {
    this.emitter.on('cancel', listener);
  }
}
