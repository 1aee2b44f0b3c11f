import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../engine/config.js';
import { errorOfJob, MediaflowError, problemText, publicError } from '../engine/errors.js';
import type { Logger } from '../engine/logger.js';
import { requireDiskSpace } from '../engine/storage/disk-space.js';
import type { JobRecord } from '../jobs/job.js';
import type { JobService } from '../jobs/service.js';
import type { Tool } from './tools.js';

/** What a tool call needs: the job service, and where its results are published as the front end sees it. */
export interface CallContext {
  jobs: JobService;
  config: Config;
  logger: Logger;
  /** `{base_url}` of the result URLs. */
  baseUrl: string;
  /** The bases whose `/uploads/` URLs name this process's own outputs (read from the store, not fetched). */
  ownBases: string[];
  /** The job owner (auth.ts keyOwner), with several API keys. */
  owner?: string;
  /** Told as a tool call starts; what it answers, once the call has ended (the HTTP sessions count their calls). */
  onCall?: (extra: CallExtra) => () => void;
}

export type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A tool error result: mediaflow's code and message (no credentials, no server path), as a client shows them, and
 * every problem of a bad document, each with its path on a line of its own, so that an agent fixes them all at once.
 */
function errorResult(error: MediaflowError): CallToolResult {
  const answer = publicError(error);
  const problems = answer.errors && answer.errors.length > 1 ? answer.errors.map((p) => `\n${problemText(p)}`) : [];
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.code}: ${answer.error}${problems.join('')}` }],
    structuredContent: answer,
  };
}

/**
 * Sends `notifications/progress` (0 to 100, the stage as the message) while the job runs, when the
 * client asked for progress with a token; each one higher than the last, as MCP requires.
 */
function reportProgress(jobs: JobService, id: string, extra: CallExtra): () => void {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return () => {};
  let sent = 0;
  return jobs.subscribe(id, (record) => {
    if (record.status !== 'running' || record.progress <= sent) return;
    sent = record.progress;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: record.progress, total: 100, message: record.stage },
      })
      .catch(() => undefined);
  });
}

/** What a finished job gives the client: its result body (URLs and answers), or its error. */
async function outcome(record: JobRecord, jobs: JobService): Promise<CallToolResult> {
  if (record.status === 'succeeded' && record.result) {
    const body = await jobs.resultOf({ ...record, result: record.result });
    return {
      content: [{ type: 'text', text: JSON.stringify(body) }],
      structuredContent: { job_id: record.id, ...body },
    };
  }
  if (record.error) return errorResult(errorOfJob(record.error));
  return errorResult(new MediaflowError('MF_ERR_JOB_STATE', `Job '${record.id}' was cancelled`));
}

/**
 * Runs a tool as a job, as a synchronous request would: submitted with the arguments as its fields,
 * waited for, its progress told. The client's cancel (`notifications/cancelled`, which fires the
 * request's signal) cancels the job: off the queue, or its ffmpeg or whisper child killed.
 */
export async function callTool(
  context: CallContext,
  tool: Tool,
  args: Record<string, unknown>,
  extra: CallExtra,
): Promise<CallToolResult> {
  const ended = context.onCall?.(extra);
  try {
    return await runTool(context, tool, args, extra);
  } finally {
    ended?.();
  }
}

/** The call itself: the job submitted, waited for, and its outcome as a tool result. */
async function runTool(
  context: CallContext,
  tool: Tool,
  args: Record<string, unknown>,
  extra: CallExtra,
): Promise<CallToolResult> {
  const { jobs, config } = context;
  let record: JobRecord;
  try {
    await requireDiskSpace(config.dataDir, config.minFreeDiskBytes);
    ({ record } = await jobs.submit({
      kind: tool.kind,
      name: tool.target,
      fields: args,
      baseUrl: context.baseUrl,
      ownBases: context.ownBases,
      mode: 'sync',
      ...(context.owner === undefined ? {} : { owner: context.owner }),
    }));
  } catch (error) {
    if (error instanceof MediaflowError) return errorResult(error);
    context.logger.error({ err: error, tool: tool.name }, 'MCP tool call failed');
    return errorResult(new MediaflowError('MF_ERR_INTERNAL', 'Internal server error'));
  }
  const stop = reportProgress(jobs, record.id, extra);
  try {
    return await outcome(await jobs.waitFor(record.id, extra.signal), jobs);
  } finally {
    stop();
  }
}
