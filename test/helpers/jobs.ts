import assert from 'node:assert/strict';
import type { JobView } from '../../src/jobs/job.js';

export type { JobView };

/** Whether a job has ended (succeeded, failed or cancelled). */
export const isFinal = (job: { status: string }): boolean => ['succeeded', 'failed', 'cancelled'].includes(job.status);

/** GET /jobs/<id>, expecting a 200 JSON job. */
export async function getJob(base: string, id: string, headers: Record<string, string> = {}): Promise<JobView> {
  const res = await fetch(`${base}/jobs/${id}`, { headers });
  assert.equal(res.status, 200, `GET /jobs/${id}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return (await res.json()) as JobView;
}

/** Polls GET /jobs/<id> until `done` holds (by default: the job has ended); fails with the last view seen. */
export async function waitForJob(
  base: string,
  id: string,
  done: (job: JobView) => boolean = isFinal,
  options: { ms?: number; every?: number; headers?: Record<string, string> } = {},
): Promise<JobView> {
  const { ms = 30_000, every = 100, headers = {} } = options;
  const deadline = Date.now() + ms;
  let job = await getJob(base, id, headers);
  while (!done(job)) {
    assert.ok(Date.now() < deadline, `job ${id} did not get there in ${ms} ms; last seen: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, every));
    job = await getJob(base, id, headers);
  }
  return job;
}

/** POSTs a multipart form expecting a 202 (the fields or headers make it asynchronous) and returns the job id. */
export async function submitJob(
  base: string,
  route: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<string> {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  const res = await fetch(`${base}${route}`, { method: 'POST', body: form, headers });
  const body = (await res.json()) as Record<string, string>;
  assert.equal(res.status, 202, JSON.stringify(body));
  return body.job_id!;
}
