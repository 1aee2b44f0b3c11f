import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import { requireDiskSpace } from '../engine/storage/disk-space.js';
import { errorOfJob, MediaflowError, paramError } from '../engine/errors.js';
import type { JobKind, JobRecord } from '../jobs/job.js';
import type { JobService } from '../jobs/service.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { checkWebhookUrl } from '../jobs/webhooks/deliveries.js';
import { readFields } from './body.js';
import { untilDisconnect } from './disconnect.js';
import { FileParts, inputFileParts, type UploadContext } from './file-parts.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_METADATA_BYTES } from './limits.js';

/** An Idempotency-Key: 1 to MAX_IDEMPOTENCY_KEY_LENGTH visible ASCII characters. */
const IDEMPOTENCY_KEY = new RegExp(`^[\\x21-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

/** What a request says about its job, apart from the operation's own fields. */
interface JobOptions {
  mode: 'sync' | 'async';
  webhookUrl?: string;
  metadata?: unknown;
  idempotencyKey?: string;
}

/**
 * Whether a `Prefer` header asks for `respond-async` (RFC 7240: comma-separated preferences, each
 * with optional parameters).
 */
export const prefersAsync = (header: string | string[] | undefined): boolean =>
  [header ?? []]
    .flat()
    .flatMap((value) => value.split(','))
    .some((preference) => preference.split(';')[0]!.trim().toLowerCase() === 'respond-async');

function readMetadata(value: unknown): unknown {
  if (value === undefined) return undefined;
  let bytes: number;
  if (typeof value === 'string') bytes = Buffer.byteLength(value);
  else if (value !== null && typeof value === 'object' && !Array.isArray(value))
    bytes = Buffer.byteLength(JSON.stringify(value));
  else throw paramError('Expected `metadata` to be a string (or, in a JSON body, an object)');
  if (bytes > MAX_METADATA_BYTES)
    throw paramError(`Expected \`metadata\` to be at most ${MAX_METADATA_BYTES} bytes, got ${bytes}`);
  return value;
}

/** Splits the job's options off the request's fields: `webhook_url`, `metadata`, `Prefer` and `Idempotency-Key`. */
async function readJobOptions(
  request: FastifyRequest,
  fields: Record<string, unknown>,
  config: Config,
): Promise<{ options: JobOptions; fields: Record<string, unknown> }> {
  const { webhook_url: webhookUrl, metadata, ...rest } = fields;
  const options: JobOptions = { mode: 'sync' };
  if (webhookUrl !== undefined && webhookUrl !== '') {
    if (typeof webhookUrl !== 'string') throw paramError('Expected `webhook_url` to be one URL');
    await checkWebhookUrl(webhookUrl.trim(), config);
    options.webhookUrl = webhookUrl.trim();
  }
  const meta = readMetadata(metadata);
  if (meta !== undefined) options.metadata = meta;
  const key = request.headers['idempotency-key'];
  if (key !== undefined) {
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))
      throw paramError(
        `Expected the Idempotency-Key header to be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`,
      );
    options.idempotencyKey = key;
  }
  if (options.webhookUrl !== undefined || prefersAsync(request.headers.prefer)) options.mode = 'async';
  return { options, fields: rest };
}

/**
 * The fields of a request to an operation of named values (`ownFields`, its own): a form's fields of other names are
 * values, while a JSON body holds its values in their parameter, and its other fields are ignored as unknown ones are.
 */
function ownFieldsOf(
  request: FastifyRequest,
  fields: Record<string, unknown>,
  ownFields: readonly string[] | undefined,
): Record<string, unknown> {
  const form =
    request.isMultipart() || /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '');
  if (!ownFields || form) return fields;
  return Object.fromEntries(Object.entries(fields).filter(([key]) => ownFields.includes(key)));
}

/** What a synchronous request answers for a finished job: its result, or its error with its status. */
function synchronousAnswer(record: JobRecord, jobs: JobService): Promise<Record<string, unknown>> {
  if (record.status === 'succeeded' && record.result) return jobs.resultOf({ ...record, result: record.result });
  if (record.error) throw errorOfJob(record.error);
  throw new MediaflowError('MF_ERR_JOB_STATE', `Job '${record.id}' was cancelled`);
}

export interface SubmitContext {
  jobs: JobService;
  config: Config;
  /** Where file parts sent in place of URLs are received and kept. */
  uploads: UploadContext;
  baseUrl: (request: FastifyRequest) => string;
  /** The owner of the request's jobs (auth.ts keyOwner): set with several API keys. */
  ownerOf: (request: FastifyRequest) => string | undefined;
}

/**
 * The handler behind every operation and pipeline route: reads the fields, submits the job, and
 * either answers 202 at once (asynchronous) or waits for the job and answers its result exactly
 * as the synchronous interface does. A synchronous client that hangs up cancels its job; an
 * asynchronous job is not tied to its connection. A file part named after one of `inputFields`
 * is that input: it is kept in the output store and the job reads it there, as an own output; with
 * `ownFields` (the fields of an operation of named values, Param.values), a form's field or file part of any
 * other name is a value, and a JSON body's fields of other names are ignored, as unknown fields are.
 */
export async function submitJob(
  request: FastifyRequest,
  reply: FastifyReply,
  kind: JobKind,
  name: string,
  context: SubmitContext,
  inputFields: readonly string[] = [],
  ownFields?: readonly string[],
) {
  const { jobs, config } = context;
  const base = context.baseUrl(request);
  const files = new FileParts(context.uploads, request, base);
  let submitted: { record: JobRecord; created: boolean };
  let options: JobOptions;
  try {
    const raw = ownFieldsOf(
      request,
      await readFields(request, inputFileParts(files, inputFields, ownFields), config.bodyIdleTimeoutMs),
      ownFields,
    );
    files.bodyRead();
    // Read first, so the answer never races an unread body.
    await requireDiskSpace(config.dataDir, config.minFreeDiskBytes);
    const read = await readJobOptions(request, raw, config);
    options = read.options;
    await files.publish();
    const owner = context.ownerOf(request);
    submitted = await jobs.submit({
      kind,
      name,
      fields: read.fields,
      ...(files.count > 0 ? { fingerprintFields: files.fingerprintFields(read.fields) } : {}),
      baseUrl: base,
      // Both the public base and the address the request reached name this server: a client inside
      // the same network may use the latter. Either way only published outputs are read.
      ownBases: [...new Set([base, `${request.protocol}://${request.host}`])],
      ...options,
      ...(owner === undefined ? {} : { owner }),
    });
    // A replay runs the earlier job, on the files of the earlier request.
    if (!submitted.created) await files.discard();
  } catch (error) {
    await files.discard().catch((failure: unknown) => request.log.warn({ err: failure }, 'removing uploaded files'));
    throw error;
  } finally {
    await files.close();
  }
  const { record, created } = submitted;
  if (!created) request.log.info({ job: record.id, key: options.idempotencyKey }, 'idempotent replay');
  if (options.mode === 'async') {
    const statusUrl = `${base}${SERVER_PATHS.jobs}/${record.id}`;
    // RFC 7240: say which preference was honoured.
    if (prefersAsync(request.headers.prefer)) void reply.header('preference-applied', 'respond-async');
    return reply
      .status(202)
      .header('location', statusUrl)
      .send({ job_id: record.id, status: record.status, status_url: statusUrl });
  }
  // Only the request that made the job cancels it by hanging up; a replay just stops waiting.
  const done = created
    ? await untilDisconnect(reply, (signal) => jobs.waitFor(record.id, signal))
    : await jobs.waitFor(record.id);
  request.log.info({ job: done.id, [kind]: name, status: done.status, timings: done.timings }, 'job finished');
  return synchronousAnswer(done, jobs);
}
