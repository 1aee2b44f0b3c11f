import { pipelineJobHandler, type PipelineJobDeps } from '../pipelines/job-handler.js';
import type { JobHandler } from './handler.js';
import type { JobKind } from './job.js';
import { operationHandler } from './operation-handler.js';

/** The handler of each kind of job. */
export type JobHandlers = Record<JobKind, JobHandler>;

/**
 * The table of handlers by kind. Its type is where the pipeline handler, which cannot import jobs/,
 * is checked against `JobHandler`.
 */
export const jobHandlers = (deps: PipelineJobDeps): JobHandlers => ({
  operation: operationHandler(deps.engine),
  pipeline: pipelineJobHandler(deps),
});
