import { paramError } from '../engine/errors.js';
import { ownUploadPath } from '../engine/inputs/own-uploads.js';
import type { LocalFilePolicy } from '../engine/run/job-run.js';
import type { OutputStore } from '../engine/storage/storage.js';
import type { HandledJob, HandlerRun, HandlerRunOptions } from './handler.js';
import type { JobHandlers } from './handlers.js';
import { outputIdOf, type JobRecord } from './job.js';

/** What a job needs to be checked or run. */
export type JobSpec = Pick<JobRecord, 'id' | 'output_id' | 'kind' | 'name' | 'fields' | 'own_bases'>;

/** What checking and running jobs needs: a handler for each kind, and the store own uploads are read from. */
export interface RunnerDeps {
  handlers: JobHandlers;
  outputStore: OutputStore;
}

/**
 * The local-file policy of a job: URLs under the server's own `/uploads/` are read from the
 * output store (no HTTP fetch, so private addresses may stay refused); nothing else is local.
 * `seen` collects the store paths named, for the existence check at submission.
 */
function ownUploads(store: OutputStore, bases: readonly string[], seen?: Set<string>): LocalFilePolicy {
  return (source) => {
    // This server's /uploads/ URLs, or the URLs a bucket store handed out (public or presigned).
    const relative = ownUploadPath(source, bases) ?? store.pathOfUrl?.(source);
    if (relative === undefined) return undefined;
    seen?.add(relative);
    return { stored: relative };
  };
}

/** The job as its kind's handler sees it. */
const handledJob = (job: JobSpec, localFiles: LocalFilePolicy): HandledJob => ({
  id: job.id,
  name: job.name,
  fields: job.fields,
  outputId: outputIdOf(job),
  localFiles,
});

/**
 * Checks a job's fields as its run will, before it is queued: its kind's checks (parameters, input
 * URLs and the address policy, a pipeline's steps), then that own outputs named as inputs exist.
 * Throws the error the synchronous route answers with (400, 404).
 */
export async function checkJob(job: JobSpec, deps: RunnerDeps): Promise<void> {
  const named = new Set<string>();
  await deps.handlers[job.kind].check(handledJob(job, ownUploads(deps.outputStore, job.own_bases, named)));
  for (const relative of named) {
    if (!(await deps.outputStore.exists(relative))) {
      throw paramError(`Input ${relative} is not a published output of this server (it may have expired)`);
    }
  }
}

/** Runs a job by its kind's handler and returns its outputs and timings; reports progress as it goes. */
export function runJob(job: JobSpec, deps: RunnerDeps, options: HandlerRunOptions): Promise<HandlerRun> {
  return deps.handlers[job.kind].run(handledJob(job, ownUploads(deps.outputStore, job.own_bases)), options);
}
