/**
 * A job as plain data: what to run, with which fields, for whom, and where it stands. It is what
 * the job store keeps and the queue carries (by id), so any process can pick it up; it never
 * holds a closure, a socket or a path of the machine that accepted it.
 */

import { errorOfJob, jobErrorOf, type JobError } from '../engine/errors.js';
import { answerFiles, outputPaths, type OutputSpec } from '../engine/contract/plugin.js';
import type { WebhookState } from './webhooks/state.js';

/** A job's statuses, in the order a job goes through them; the type, the counts and the API document read this. */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type JobKind = 'operation' | 'pipeline';

/** Whether a status is final: the job runs no more and its webhook (if any) is due. */
export const isTerminal = (status: JobStatus): boolean =>
  status === 'succeeded' || status === 'failed' || status === 'cancelled';

/**
 * A finished job's outputs, as paths relative to the output store (turned into URLs when shown): an
 * operation's one file under its field (with any files alongside it) or its several files (none for an answer-only
 * operation),
 * with its answers; or a pipeline's named results.
 */
export type StoredResult =
  | (OperationResult & OutputSpec)
  | { message: string; outputs: Record<string, string | string[]>; answers?: Record<string, unknown> };

/** What an operation's result holds besides its files. */
interface OperationResult {
  message: string;
  /** The plugin's answer fields (a measured loudness, metadata): plain JSON, shown as they are. */
  answers?: Record<string, unknown>;
  /** What went wrong without failing the job (engine.ts' JobResult), shown only when there are some. */
  warnings?: string[];
}

export interface JobRecord {
  /** A random UUID v4: the handle of `GET /jobs/<id>`, its events and `DELETE`. */
  id: string;
  /**
   * Another random UUID v4: the `{id}` of the job's output paths (and a pipeline's result folder),
   * so an output URL does not reveal the job id, which reads and cancels the job. The same on
   * every run of the job. Absent in records made before it existed: their outputs use `id`.
   */
  output_id?: string;
  /**
   * Who submitted the job when several API keys are configured: a SHA-256 of the key (never the
   * key). Only that key sees the job and its idempotency key. Absent with one key or none.
   */
  owner?: string;
  kind: JobKind;
  /** The operation's or pipeline's name. */
  name: string;
  /** The request's fields as received, less `webhook_url` and `metadata`. */
  fields: Record<string, unknown>;
  /** `{base_url}` of the request: result URLs start with it. */
  base_url: string;
  /** Bases whose `/uploads/` URLs are this server's own outputs, read from the store rather than fetched. */
  own_bases: string[];
  /** A synchronous job has a client waiting on the connection; an asynchronous one does not. */
  mode: 'sync' | 'async';
  metadata: unknown;
  idempotency: { key: string; fingerprint: string } | null;
  status: JobStatus;
  stage: string;
  progress: number;
  /** Runs started; a run cut short by a crash counts (MEDIAFLOW_JOB_ATTEMPTS). */
  attempts: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result: StoredResult | null;
  error: JobError | null;
  webhook: WebhookState | null;
  /** Milliseconds of each stage of the last run (download, probe, process, publish; or per pipeline step), for logs. */
  timings?: Record<string, unknown>;
}

/** The job as `GET /jobs/<id>`, the event stream and the webhook show it. */
export interface JobView {
  job_id: string;
  kind: JobKind;
  name: string;
  status: JobStatus;
  stage: string;
  progress: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result: Record<string, unknown> | null;
  error: JobError | null;
  metadata: unknown;
  webhook: {
    url: string;
    attempts: number;
    last_status: number | null;
    delivered_at: string | null;
    next_attempt_at: string | null;
  } | null;
}

/** Turns a store path into the URL a client downloads (a presigned one, for a private bucket). */
export type UrlOf = (path: string) => Promise<string>;

/**
 * The synchronous success body of a result: `{message, <field>: url}`, or `{message, output_file,
 * output_files}` for several files (`{message}` for none), then the answers, and `warnings` when
 * there are some (docs/operations.md); or a pipeline's `{message, outputs}`.
 */
export async function resultBody(result: StoredResult, urlOf: UrlOf): Promise<Record<string, unknown>> {
  if (!('outputs' in result)) {
    const urls = new Map(
      await Promise.all(resultPaths(result).map(async (file) => [file, await urlOf(file)] as const)),
    );
    return {
      message: result.message,
      ...answerFiles(result, (file) => urls.get(file)!),
      ...result.answers,
      ...(result.warnings?.length ? { warnings: result.warnings } : {}),
    };
  }
  const outputs: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.outputs))
    outputs[name] = Array.isArray(value) ? await Promise.all(value.map(urlOf)) : await urlOf(value);
  return { message: result.message, outputs, ...(result.answers ? { answers: result.answers } : {}) };
}

/** Every store path a result names (to delete them with the record). */
export const resultPaths = (result: StoredResult | null): string[] => {
  if (result === null) return [];
  if ('outputs' in result) return Object.values(result.outputs).flat();
  return outputPaths(result);
};

/** The `{id}` of a job's output paths: its own output id, or the job id for records older than it. */
export const outputIdOf = (record: Pick<JobRecord, 'id' | 'output_id'>): string => record.output_id ?? record.id;

/** What the idempotency index of the store is keyed by: the key, within its owner's keys when there is one. */
export const idempotencyIndex = (key: string, owner: string | undefined): string =>
  owner === undefined ? key : `${owner}:${key}`;

/** The marker that stands for a webhook URL's query in the view. */
export const REDACTED_QUERY = '(query redacted)';

/**
 * A webhook URL as the view shows it: scheme, host and path only. Its user info and query often
 * hold the receiver's secret (Zapier's and n8n's `?token=`), and the view is shown to whoever holds
 * the job id: the user info is dropped and a query becomes `?(query redacted)`. Delivery uses the
 * full URL.
 */
export function redactedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Checked at submission, so never expected; nothing of an unreadable URL is shown.
    return REDACTED_QUERY;
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search ? `?${REDACTED_QUERY}` : ''}`;
}

/** The public view of a record; URLs are made at each view, so presigned ones are always fresh. */
export async function jobView(record: JobRecord, urlOf: UrlOf): Promise<JobView> {
  const webhook = record.webhook;
  return {
    job_id: record.id,
    kind: record.kind,
    name: record.name,
    status: record.status,
    stage: record.stage,
    progress: record.progress,
    created_at: record.created_at,
    started_at: record.started_at,
    finished_at: record.finished_at,
    result: record.result ? await resultBody(record.result, urlOf) : null,
    // A record written before errors kept their code shows the code of its status.
    error: record.error ? jobErrorOf(errorOfJob(record.error)) : null,
    metadata: record.metadata,
    webhook: webhook
      ? {
          url: redactedUrl(webhook.url),
          attempts: webhook.attempts,
          last_status: webhook.last_status,
          delivered_at: webhook.delivered_at,
          // A receiver that answers 404 (a Wait node left on GET) shows here when mediaflow will try again.
          next_attempt_at: webhook.next_attempt_at,
        }
      : null,
  };
}
