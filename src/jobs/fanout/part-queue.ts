import type { JobError } from '../../engine/errors.js';
import type { PartTask } from '../../engine/run/fanout/part-runner.js';

/** The BullMQ queue of split encodes' parts (docs/fanout.md): every worker takes them, whoever's job they are. */
export const PARTS_QUEUE = 'parts';

/** A part's BullMQ job: plain data, so any worker can run it from the shared store. */
export interface PartData {
  /** The engine run the part belongs to (PartJob.id). */
  job: string;
  /** The split encode's run: the store folder its files travel in (part-files.ts). */
  run: string;
  task: PartTask;
}

/**
 * How a part ended, as its BullMQ job's return value: made (`stored`: put in the store, or else written straight into
 * the job's own workspace by its own process), failed with the error its job takes, or stopped by a cancel. A part
 * never throws: BullMQ fails it only when its worker kept dying (MEDIAFLOW_JOB_ATTEMPTS).
 */
/** `log`: what the part's ffmpeg logged, when anything (libass's warnings: the answer's `warnings`). */
export type PartAnswer = { stored: boolean; log?: string } | { error: JobError } | { cancelled: true };

/**
 * A split encode's run as one name: its parts' job ids start with it, and a cancel of it tells every worker that the
 * run is over (part-worker.ts drops the files it fetched for it).
 */
export const runName = (data: Omit<PartData, 'task'>): string => `${data.job}-${data.run}`;

/** A part's BullMQ job id: unique to the split encode's run. BullMQ keys use `:`, which an id may not hold. */
export const partJobId = (data: Omit<PartData, 'task'>, task: string): string => `${runName(data)}-${task}`;

/**
 * The workspaces of the split encodes this process runs, by engine run and split encode's run: a part this process
 * takes for one of them runs in that workspace as it is, with nothing to fetch or put in the store.
 */
export class LocalRuns {
  private readonly dirs = new Map<string, string>();

  private key = (job: string, run: string) => `${job}/${run}`;

  set(job: string, run: string, dir: string): void {
    this.dirs.set(this.key(job, run), dir);
  }

  get(job: string, run: string): string | undefined {
    return this.dirs.get(this.key(job, run));
  }

  delete(job: string, run: string): void {
    this.dirs.delete(this.key(job, run));
  }
}
