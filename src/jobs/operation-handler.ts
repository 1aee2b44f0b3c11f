import type { Engine } from '../engine/run/engine.js';
import type { JobProgress } from '../engine/run/job-run.js';
import { operationShare } from '../engine/run/progress-share.js';
import type { JobHandler, ProgressReport } from './handler.js';

/** An operation's progress as a report. */
const operationProgress = (progress: JobProgress): ProgressReport => ({
  // The engine's `queued` is the wait for an ffmpeg slot of this process: the job itself has started.
  stage:
    progress.stage === 'queued'
      ? 'starting'
      : progress.parts
        ? `${progress.stage} (in ${progress.parts} parts)`
        : progress.stage,
  progress: Math.floor(operationShare(progress) * 100),
});

/** The `operation` handler: one call of the engine, which publishes the output to its store. */
export const operationHandler = (engine: Engine): JobHandler => ({
  async check(job) {
    await engine.check(job.name, job.fields, job.localFiles);
  },
  async run(job, options) {
    const result = await engine.run(job.name, job.fields, {
      id: job.outputId,
      owner: job.id,
      signal: options.signal,
      localFiles: job.localFiles,
      onProgress: (progress) => options.onProgress(operationProgress(progress)),
    });
    const { message, output, answers, warnings } = result;
    return {
      result: { message, ...output, ...(answers ? { answers } : {}), ...(warnings ? { warnings } : {}) },
      timings: result.timings,
    };
  },
});
