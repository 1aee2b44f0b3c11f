import type { Registry } from '../engine/plugins/registry.js';
import type { Engine } from '../engine/run/engine.js';
import type { LocalFilePolicy } from '../engine/run/job-run.js';
import type { OutputStore } from '../engine/storage/storage.js';
import { loadPipelineByName } from './loader.js';
import { PipelineProgress } from './progress.js';
import { checkPipeline, runPipeline } from './runner.js';

/** What the pipeline handler is built with. */
export interface PipelineJobDeps {
  engine: Engine;
  /** Where the definitions' operations are looked up. */
  registry: Registry;
  /** Where the results are published. */
  store: OutputStore;
  /** Where the definitions are read from (MEDIAFLOW_PIPELINES_DIR). */
  pipelinesDir: string;
}

/**
 * A pipeline job as its handler reads it. It is the shape of jobs/handler.ts' `HandledJob`, written
 * out rather than imported: pipelines sit below jobs, and jobs/handlers.ts checks that it fits.
 */
export interface PipelineJob {
  /** The job record's id: the owner of the parts its steps' split encodes make. */
  id: string;
  name: string;
  fields: Record<string, unknown>;
  outputId: string;
  localFiles: LocalFilePolicy;
}

export interface PipelineJobRunOptions {
  signal: AbortSignal;
  /** Told the run's place as a job's progress report: the step as its stage, the share of steps done. */
  onProgress: (report: { stage: string; progress: number }) => void;
}

/** The `pipeline` entry of the jobs' table of handlers by kind (jobs/handlers.ts). */
export function pipelineJobHandler(deps: PipelineJobDeps) {
  const { engine, registry, store, pipelinesDir } = deps;
  return {
    async check(job: PipelineJob): Promise<void> {
      const definition = await loadPipelineByName(pipelinesDir, job.name, registry);
      // A field the pipeline does not declare is a typo to report (as on the CLI), not a value to drop;
      // only at submission, so a job queued before a definition lost an input still runs.
      checkPipeline(definition, engine, { inputs: job.fields, refuseUnknownInputs: true, localFiles: job.localFiles });
    },
    async run(job: PipelineJob, options: PipelineJobRunOptions) {
      // Read again: an edited definition takes effect for jobs that start after the edit.
      const definition = await loadPipelineByName(pipelinesDir, job.name, registry);
      const progress = new PipelineProgress(definition);
      const run = await runPipeline(definition, engine, {
        inputs: job.fields,
        localFiles: job.localFiles,
        store,
        resultDir: job.outputId,
        owner: job.id,
        signal: options.signal,
        onEvent: (event) => options.onProgress(progress.update(event)),
      });
      const message = `Pipeline ${definition.name} completed successfully`;
      const answers = run.answers ? { answers: run.answers } : {};
      return { result: { message, outputs: run.outputs, ...answers }, timings: run.timings };
    },
  };
}
