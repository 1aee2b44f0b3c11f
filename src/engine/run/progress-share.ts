import type { JobProgress } from './job-run.js';

/**
 * Where each stage of one operation starts, in percent: fetching and probing are short next to
 * ffmpeg, which fills most of the bar by its position in the output; 100 is left for `succeeded`.
 */
const STAGE_START: Record<JobProgress['stage'], number> = {
  queued: 0,
  download: 2,
  probe: 8,
  process: 10,
  publish: 96,
};
const PROCESS_SPAN = STAGE_START.publish - STAGE_START.process;

/**
 * The share of one operation done, from 0 to 1. Here, below both, because an operation job and each
 * item of a pipeline step weigh their progress the same way.
 */
export const operationShare = (progress: JobProgress): number =>
  (STAGE_START[progress.stage] +
    (progress.stage === 'process' ? PROCESS_SPAN * Math.min(1, Math.max(0, progress.ratio ?? 0)) : 0)) /
  100;
