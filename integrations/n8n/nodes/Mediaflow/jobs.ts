import {
  NodeApiError,
  NodeOperationError,
  sleepWithAbort,
  type IExecuteFunctions,
  type IHttpRequestOptions,
  type ILoadOptionsFunctions,
  type JsonObject,
} from 'n8n-workflow';

/**
 * Talking to mediaflow: one authenticated request, its error answers as node errors, and waiting for a job
 * by polling GET /jobs/<id> with back-off (docs/jobs.md), so that no request stays open however long it runs.
 */

export const CREDENTIALS = 'mediaflowApi';

/** The job object of GET /jobs/<id> (and of the 202's body, in part). */
export interface Job extends JsonObject {
  job_id: string;
  status: string;
  status_url: string;
  result: JsonObject | null;
  error: { status: number; error: string; code: string } | null;
}

/** Polling starts at this interval and grows by half at each poll, up to the ceiling. */
const FIRST_POLL_MS = 500;
const MAX_POLL_MS = 10_000;
const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** What talks to mediaflow: a node running, or the editor loading what the server lists (its templates). */
type Context = IExecuteFunctions | ILoadOptionsFunctions;

/** A mediaflow error answer (`{error, code}`) as a node error with its code, text and status. */
function apiError(ctx: Context, status: number, body: unknown, item: number): NodeApiError {
  const answer = (typeof body === 'object' && body !== null ? body : { error: String(body) }) as JsonObject;
  const code = typeof answer.code === 'string' ? answer.code : `HTTP ${status}`;
  return new NodeApiError(ctx.getNode(), answer, {
    message: `${String(answer.error ?? `mediaflow answered ${status}`)} [${code}]`,
    description: `mediaflow answered ${status} with code ${code}`,
    httpCode: String(status),
    itemIndex: item,
  });
}

/** One request to mediaflow with the API key; an answer of 400 or more is thrown as a NodeApiError. */
export async function call<T>(ctx: Context, item: number, options: IHttpRequestOptions): Promise<T> {
  const answer = (await ctx.helpers.httpRequestWithAuthentication.call(ctx, CREDENTIALS, {
    ...options,
    json: true,
    returnFullResponse: true,
    ignoreHttpStatusErrors: true,
  })) as { statusCode: number; body: unknown };
  if (answer.statusCode >= 400) throw apiError(ctx, answer.statusCode, answer.body, item);
  return answer.body as T;
}

/**
 * The workflow was stopped: the job is cancelled too rather than left running for nobody. n8n aborts every
 * request made with the credential helpers once the execution is stopped, so this one is made without them, the
 * key set by hand; whether it succeeds changes nothing for the stopped workflow.
 */
async function cancelJob(ctx: IExecuteFunctions, base: string, apiKey: string, jobId: string): Promise<void> {
  await ctx.helpers
    .httpRequest({
      method: 'DELETE',
      url: `${base}/jobs/${encodeURIComponent(jobId)}`,
      headers: apiKey ? { 'X-API-Key': apiKey } : {},
      ignoreHttpStatusErrors: true,
    })
    .catch(() => {});
}

/** Waits for a job to end and answers it; a failed or cancelled job is thrown as a NodeOperationError. */
export async function waitForJob(
  ctx: IExecuteFunctions,
  item: number,
  base: string,
  apiKey: string,
  jobId: string,
  timeoutMs: number,
): Promise<Job> {
  const signal = ctx.getExecutionCancelSignal?.();
  try {
    return await pollJob(ctx, item, base, jobId, timeoutMs, signal);
  } catch (error) {
    // Stopping the workflow aborts the poll (its request or its sleep) with an error of its own.
    if (!signal?.aborted) throw error;
    await cancelJob(ctx, base, apiKey, jobId);
    throw new NodeOperationError(ctx.getNode(), `Stopped while waiting for mediaflow job ${jobId}`, {
      itemIndex: item,
    });
  }
}

async function pollJob(
  ctx: IExecuteFunctions,
  item: number,
  base: string,
  jobId: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  let interval = FIRST_POLL_MS;
  for (;;) {
    const job = await call<Job>(ctx, item, { method: 'GET', url: `${base}/jobs/${encodeURIComponent(jobId)}` });
    if (FINAL.has(job.status)) {
      if (job.status === 'succeeded') return job;
      const error = job.error ?? { status: 499, error: 'The job was cancelled', code: 'MF_ERR_CANCELLED' };
      throw new NodeOperationError(ctx.getNode(), `${error.error} [${error.code}]`, {
        description: `mediaflow job ${jobId} ${job.status} (status ${error.status}, code ${error.code})`,
        itemIndex: item,
      });
    }
    if (Date.now() + interval > deadline) {
      throw new NodeOperationError(
        ctx.getNode(),
        `mediaflow job ${jobId} had not ended after ${timeoutMs / 60_000} min`,
        {
          description: `It goes on: GET ${base}/jobs/${jobId} shows it`,
          itemIndex: item,
        },
      );
    }
    await sleepWithAbort(interval, signal);
    interval = Math.min(MAX_POLL_MS, Math.round(interval * 1.5));
  }
}

/**
 * Every output URL of a job's result (mediaflow publishes them under /uploads/), in order, once each: an
 * operation's output fields, a pipeline's outputs. Answer fields (`metadata`, a pipeline's `answers`) are data.
 */
export function resultUrls(result: JsonObject | null): string[] {
  const urls: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (/^https?:\/\/.*\/uploads\//.test(value) && !urls.includes(value)) urls.push(value);
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') Object.values(value).forEach(visit);
  };
  const data = new Set(['message', 'warnings', 'answers', 'metadata']);
  for (const [key, value] of Object.entries(result ?? {})) if (!data.has(key)) visit(value);
  return urls;
}
