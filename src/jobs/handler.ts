import type { LocalFilePolicy } from '../engine/run/job-run.js';
import type { StoredResult } from './job.js';

/** A job's place as the job record shows it: a stage name and a whole percentage. */
export interface ProgressReport {
  stage: string;
  progress: number;
}

/** A job as its handler sees it: what to run, where its outputs go, which inputs are read locally. */
export interface HandledJob {
  /** The job record's id: the owner of the parts its split encodes make (docs/fanout.md). */
  id: string;
  /** The operation's or pipeline's name. */
  name: string;
  fields: Record<string, unknown>;
  /** The `{id}` of its output paths (`outputIdOf`): the same on every run of the job. */
  outputId: string;
  /** Inputs that are this server's own outputs, read from the output store rather than fetched. */
  localFiles: LocalFilePolicy;
}

export interface HandlerRunOptions {
  signal: AbortSignal;
  onProgress: (report: ProgressReport) => void;
}

/** A finished run: the outputs the record keeps, and the timings the log shows. */
export interface HandlerRun {
  result: StoredResult;
  timings: Record<string, unknown>;
}

/**
 * What is done with one kind of job: checked at submission, then run. The table of handlers by kind
 * (handlers.ts) is the one place where a job's kind decides anything. The pipeline handler lives in
 * pipelines/job-handler.ts and fits this interface by its shape, without importing it: pipelines sit
 * below jobs, and nothing points back up.
 */
export interface JobHandler {
  /**
   * Checks the fields as the run will, before the job is queued: throws the error the synchronous
   * route answers with (400, 404).
   */
  check(job: HandledJob): Promise<void>;
  /** Runs the job and returns its outputs and timings; reports progress as it goes. */
  run(job: HandledJob, options: HandlerRunOptions): Promise<HandlerRun>;
}
