import type { Config } from '../engine/config.js';
import type { Engine, LocalFilePolicy } from '../engine/run/engine.js';
import { paramError } from '../engine/errors.js';
import { ownUploadPath } from '../engine/inputs/own-uploads.js';
import { loadPipelineByName } from '../pipelines/loader.js';
import { checkPipeline, runPipeline } from '../pipelines/runner.js';
import { outputIdOf, type JobRecord, type StoredResult } from './job.js';
import { operationProgress, PipelineProgress, type ProgressReport } from '../pipelines/progress.js';

/** What a job needs to be checked or run. */
export type JobSpec = Pick<JobRecord, 'id' | 'output_id' | 'kind' | 'name' | 'fields' | 'own_bases'>;

/**
 * The local-file policy of a job: URLs under the server's own `/uploads/` are read from the
 * output store (no HTTP fetch, so private addresses may stay refused); nothing else is local.
 * `seen` collects the store paths named, for the existence check at submission.
 */
function ownUploads(engine: Engine, bases: readonly string[], seen?: Set<string>): LocalFilePolicy {
  return (source) => {
    // This server's /uploads/ URLs, or the URLs a bucket store handed out (public or presigned).
    const relative = ownUploadPath(source, bases) ?? engine.deps.store.pathOfUrl?.(source);
    if (relative === undefined) return undefined;
    seen?.add(relative);
    return { stored: relative };
  };
}

/**
 * Checks a job's fields as its run will, before it is queued: parameters, input URLs and the
 * address policy, the pipeline's steps, and that own outputs named as inputs exist. Throws the
 * error the synchronous route answers with (400, 404).
 */
export async function checkJob(job: JobSpec, engine: Engine, config: Config): Promise<void> {
  const named = new Set<string>();
  const localFiles = ownUploads(engine, job.own_bases, named);
  if (job.kind === 'operation') engine.prepare(job.name, job.fields, localFiles);
  // A field the pipeline does not declare is a typo to report (as on the CLI), not a value to drop;
  // only at submission, so a job queued before a definition lost an input still runs.
  else checkPipeline(await loadPipelineByName(config.pipelinesDir, job.name, engine.deps.registry), engine, { inputs: job.fields, refuseUnknownInputs: true, localFiles });
  for (const relative of named) {
    if (!(await engine.deps.store.exists(relative))) throw paramError(`Input ${relative} is not a published output of this server (it may have expired)`);
  }
}

/** Runs a job through the engine and returns its outputs and timings; reports progress as it goes. */
export async function runJob(
  job: JobSpec,
  engine: Engine,
  config: Config,
  options: { signal: AbortSignal; onProgress: (report: ProgressReport) => void },
): Promise<{ result: StoredResult; timings: Record<string, unknown> }> {
  const localFiles = ownUploads(engine, job.own_bases);
  if (job.kind === 'operation') {
    const result = await engine.run(job.name, job.fields, {
      id: outputIdOf(job),
      signal: options.signal,
      localFiles,
      onProgress: (progress) => options.onProgress(operationProgress(progress)),
    });
    const { message, field, path, warnings } = result;
    return { result: { message, field, path, ...(warnings ? { warnings } : {}) }, timings: result.timings };
  }
  // Read again: an edited definition takes effect for jobs that start after the edit.
  const definition = await loadPipelineByName(config.pipelinesDir, job.name, engine.deps.registry);
  const progress = new PipelineProgress(definition);
  const run = await runPipeline(definition, engine, {
    inputs: job.fields,
    localFiles,
    store: engine.deps.store,
    resultDir: outputIdOf(job),
    signal: options.signal,
    onEvent: (event) => options.onProgress(progress.update(event)),
  });
  return { result: { message: `Pipeline ${definition.name} completed successfully`, outputs: run.outputs }, timings: run.timings };
}
