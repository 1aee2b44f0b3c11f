/**
 * Every error mediaflow reports to a user, in one place: a stable code, the HTTP status that
 * docs/errors.md's table gives the condition, and a message that is safe to show (no server paths).
 * Front ends map these to responses and exit codes; anything else is a 500 with details logged.
 */
import { publicText } from './safe-text.js';

/** What the registry says of one code: its HTTP status, a short title and when it is answered. */
export interface ErrorDefinition {
  readonly status: number;
  readonly title: string;
  readonly description: string;
}

/**
 * The registry: every code with its status, title and description. The error handler, the OpenAPI
 * responses and docs/errors.md are made from it (test/engine/errors.test.ts checks the document).
 * A code is never renamed or given another status: clients branch on it.
 */
export const ERRORS = {
  MF_ERR_PARAM: {
    status: 400,
    title: 'Invalid parameter',
    description:
      'A parameter is missing, of the wrong type, out of range or not in its enum; an unsupported format; ' +
      'too few or too many URLs; an invalid `metadata` or `Idempotency-Key`; fields nested more than 32 levels deep; ' +
      'a file part named after no input field, or none sent to /files/.',
  },
  MF_ERR_URL: {
    status: 400,
    title: 'Invalid URL',
    description:
      'An input URL or `webhook_url` is malformed, not http(s), or points at an address that is not allowed ' +
      '(private, loopback, link-local).',
  },
  MF_ERR_BAD_REQUEST: {
    status: 400,
    title: 'Malformed request',
    description:
      'The request itself cannot be read: a body that is not valid JSON or multipart (one that ends before its ' +
      'closing boundary), a path that does not decode, or a broken HTTP request.',
  },
  MF_ERR_AUTH: {
    status: 401,
    title: 'Unauthorized',
    description:
      'The server has an API key (`MEDIAFLOW_API_KEY`, `MEDIAFLOW_API_KEYS`, or `MEDIAFLOW_METRICS_TOKEN` ' +
      'for /metrics) and the request did not carry it.',
  },
  MF_ERR_NOT_FOUND: {
    status: 404,
    title: 'Not found',
    description: 'The route, operation, pipeline, job or output does not exist (or its record has expired).',
  },
  MF_ERR_METHOD: {
    status: 405,
    title: 'Method not allowed',
    description: "Another method than POST on an operation's path; the answer carries `Allow: POST`.",
  },
  MF_ERR_REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request timeout',
    description:
      "The request's headers or body were not received in time (`MEDIAFLOW_HEADERS_TIMEOUT`, " +
      '`MEDIAFLOW_REQUEST_TIMEOUT`), or a multipart body stopped arriving (`MEDIAFLOW_BODY_IDLE_TIMEOUT`); the ' +
      'connection is then closed.',
  },
  MF_ERR_JOB_STATE: {
    status: 409,
    title: 'Job state',
    description:
      'The job has already finished, so it cannot be cancelled; or it was cancelled while a request ' +
      'waited for it.',
  },
  MF_ERR_TOO_LARGE: {
    status: 413,
    title: 'Too large',
    description:
      'A request body, its number of parts, or an input (downloaded or uploaded) is larger than its limit; or a ' +
      "job's result would make its record larger than `MEDIAFLOW_MAX_RECORD_BYTES`.",
  },
  MF_ERR_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported media type',
    description:
      "The body's Content-Type is not multipart/form-data, application/x-www-form-urlencoded or " +
      'application/json (/files/ takes multipart/form-data only), or its charset is not one mediaflow reads.',
  },
  MF_ERR_RANGE: {
    status: 416,
    title: 'Range not satisfiable',
    description: 'A `Range` asked of a file under /uploads/ lies outside the file.',
  },
  MF_ERR_MEDIA: {
    status: 422,
    title: 'Unusable media',
    description: 'An input was downloaded or uploaded but is not usable media, or ffmpeg (or the plugin) refused it.',
  },
  MF_ERR_IDEMPOTENCY: {
    status: 422,
    title: 'Idempotency key reused',
    description: 'An `Idempotency-Key` was used before with other fields.',
  },
  MF_ERR_HEADERS_TOO_LARGE: {
    status: 431,
    title: 'Headers too large',
    description: "The request's headers are larger than the server reads; the connection is then closed.",
  },
  MF_ERR_CANCELLED: {
    status: 499,
    title: 'Request cancelled',
    description: "The client went away before the answer (nginx's 499); written in the log, read by nobody.",
  },
  MF_ERR_INTERNAL: {
    status: 500,
    title: 'Internal error',
    description:
      'Anything unexpected, such as a plugin that failed (`Plugin <name> failed: ...`) or a job interrupted ' +
      'more often than `MEDIAFLOW_JOB_ATTEMPTS`; the details are in the server log only.',
  },
  MF_ERR_UNAVAILABLE: {
    status: 501,
    title: 'Not available here',
    // 501 Not Implemented: this server lacks what the operation needs; another one, set up for it, answers it.
    description:
      'The operation needs something this server lacks, and the message says what to install or set: ' +
      "`/transcribe/` without whisper.cpp's binding or without `MEDIAFLOW_WHISPER_MODEL`.",
  },
  MF_ERR_DOWNLOAD: {
    status: 502,
    title: 'Download failed',
    description: '`Failed to download <url>: <reason>`: DNS, connection, HTTP status >= 400 or time-out.',
  },
  MF_ERR_BUSY: {
    status: 503,
    title: 'Busy',
    description:
      'The queue is full, the server is under pressure or shutting down, too many uploads are arriving at once, ' +
      'or it is out of file descriptors (to start ffmpeg, to store a file); retry after `Retry-After` seconds.',
  },
  MF_ERR_TIMEOUT: {
    status: 504,
    title: 'Processing timeout',
    description:
      'Processing ran past its time limit: one ffmpeg run past `MEDIAFLOW_JOB_TIMEOUT`, or the whole job past ' +
      '`MEDIAFLOW_JOB_TOTAL_TIMEOUT`.',
  },
  MF_ERR_STORAGE: {
    status: 507,
    title: 'Insufficient storage',
    // 507 Insufficient Storage (RFC 4918): the request was fine and may be sent again once space is freed.
    description:
      "The server's disk or quota is full (a job record, a download or an output could not be written), or " +
      'below `MEDIAFLOW_MIN_FREE_DISK` when a job is submitted or an upload reserves its space; nothing ' +
      'half-written is kept: send the same request again later.',
  },
} as const satisfies Record<`MF_ERR_${string}`, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

/** Whether a value (from a plugin, a worker thread or a stored job) is a code of the registry. */
export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.hasOwn(ERRORS, value);

/**
 * The code for a status that came without one (a framework error, a job record written before
 * records kept their code): the first code of the registry with that status, else undefined.
 */
export const codeOfStatus = (status: number): ErrorCode | undefined =>
  (Object.keys(ERRORS) as ErrorCode[]).find((code) => ERRORS[code].status === status);

/** One of several problems of a request, where it is: `tracks[1].clips[0].src` inside a document. */
export interface Problem {
  path: string;
  error: string;
}

/** An error whose message may be shown to the user as is. */
export class MediaflowError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds after which a 503 may be retried. */
  readonly retryAfter?: number;
  /** Every problem found, when there were several to tell at once (the answer's `errors`); the message is the first. */
  readonly errors?: readonly Problem[];

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; retryAfter?: number; errors?: readonly Problem[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MediaflowError';
    this.code = code;
    this.status = ERRORS[code].status;
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options.errors !== undefined && options.errors.length > 0) this.errors = options.errors;
  }
}

/** Shorthands, so call sites read as the condition they report. */
export const paramError = (message: string) => new MediaflowError('MF_ERR_PARAM', message);
export const urlError = (message: string) => new MediaflowError('MF_ERR_URL', message);
export const mediaError = (message: string, cause?: unknown) => new MediaflowError('MF_ERR_MEDIA', message, { cause });
export const downloadError = (url: string, reason: string, cause?: unknown) =>
  new MediaflowError('MF_ERR_DOWNLOAD', `Failed to download ${url}: ${reason}`, { cause });
export const tooLargeError = (message: string) => new MediaflowError('MF_ERR_TOO_LARGE', message);
export const busyError = (message: string, retryAfter = 5) =>
  new MediaflowError('MF_ERR_BUSY', message, { retryAfter });
export const timeoutError = (message: string) => new MediaflowError('MF_ERR_TIMEOUT', message);

/** A problem as one line: its path, then what is wrong. */
export const problemText = (problem: Problem): string => `${problem.path}: ${problem.error}`;

/**
 * Every problem of a request at once (at least one), as an error of `code` (a 400 by default): the message is the
 * first problem, and `errors` lists them all, each with its path.
 */
export const problemsError = (problems: readonly Problem[], code: ErrorCode = 'MF_ERR_PARAM') =>
  new MediaflowError(code, problemText(problems[0]!), { errors: problems });

/** The system error codes of a full disk (ENOSPC) and of a full quota (EDQUOT). */
const DISK_FULL_CODES: Record<string, string> = { ENOSPC: 'no space left on device', EDQUOT: 'disk quota exceeded' };

/**
 * The 507 for a thrown value that is, or was caused by, a full disk or quota; undefined for any
 * other. The message names the reason only: the system error's own text carries the server's path.
 */
export function diskFullError(error: unknown): MediaflowError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof MediaflowError && cause.code === 'MF_ERR_STORAGE') return cause;
    const reason = DISK_FULL_CODES[(cause as NodeJS.ErrnoException).code ?? ''];
    if (reason) return storageError(reason, error);
  }
  return undefined;
}

/**
 * The 503 for a thrown value that is, or was caused by, the process (EMFILE) or the system (ENFILE)
 * running out of file descriptors: a moment's shortage, worth retrying; undefined for any other.
 */
export function descriptorsError(error: unknown): MediaflowError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'EMFILE' || code === 'ENFILE')
      return busyError(`The server has too many files open (${code}); retry later`);
  }
  return undefined;
}

/** A 507: the server could not store what the request needs (`reason`: why, without paths). */
export const storageError = (reason: string, cause?: unknown) =>
  new MediaflowError('MF_ERR_STORAGE', `The server is out of disk space (${reason}); retry later`, { cause });

/** The message the interface fixes (docs/architecture.md) for a value outside a format allowlist. */
export const unsupportedFormat = (format: string, supported: readonly string[]) =>
  paramError(`Unsupported format '${format}'. Supported formats: ${supported.join(', ')}.`);

/** A failure as a job keeps it and shows it (`GET /jobs/<id>`, its events, its webhook). */
export interface JobError {
  status: number;
  error: string;
  /** Absent from records written before the code was kept. */
  code?: ErrorCode;
  /** Every problem, each with its path, when the error told several (MediaflowError.errors). */
  errors?: Problem[];
}

/**
 * The `{error, code}` an error answers with, and `errors` when it told several problems: as a client may see it,
 * with no credentials and no server path, whatever the messages held.
 */
export const publicError = (error: MediaflowError): Omit<JobError, 'status'> => ({
  error: publicText(error.message),
  code: error.code,
  ...(error.errors
    ? { errors: error.errors.map((problem) => ({ ...problem, error: publicText(problem.error) })) }
    : {}),
});

/** The error a job keeps for `error`: its status and its public answer. */
export const jobErrorOf = (error: MediaflowError): JobError => ({ status: error.status, ...publicError(error) });

/**
 * A job's stored failure, answered to the synchronous request that waited for it with its own
 * code; a record without one (older) gets the first code of its status.
 */
export function errorOfJob(stored: JobError): MediaflowError {
  const code = isErrorCode(stored.code) ? stored.code : (codeOfStatus(stored.status) ?? 'MF_ERR_INTERNAL');
  return new MediaflowError(code, stored.error, {
    ...(code === 'MF_ERR_BUSY' ? { retryAfter: 5 } : {}),
    ...(Array.isArray(stored.errors) ? { errors: stored.errors } : {}),
  });
}

/** Whether a thrown value is the user's cancellation rather than a failure. */
export const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR');

/** A value as an error message quotes it: at most 60 characters, so a huge field cannot flood a message. */
export const shortened = (value: string): string => (value.length > 60 ? `${value.slice(0, 57)}...` : value);
