/**
 * Every error mediaflow reports to a user, in one place: a stable code, the HTTP status that
 * the README's Errors table gives the condition, and a message that is safe to show (no server paths).
 * Front ends map these to responses and exit codes; anything else is a 500 with details logged.
 */

/** The error codes, each with the HTTP status it answers with. */
export const ERROR_STATUS = {
  /** A parameter is missing, of the wrong type, out of range or not in its enum. */
  MF_ERR_PARAM: 400,
  /** An input URL is malformed, not http(s), or points at an address that is not allowed. */
  MF_ERR_URL: 400,
  /** `MEDIAFLOW_API_KEY` is set and the request did not carry it. */
  MF_ERR_AUTH: 401,
  /** The operation, route or job does not exist (or its record has expired). */
  MF_ERR_NOT_FOUND: 404,
  /** An operation's path was asked with another method than POST (the answer carries `Allow`). */
  MF_ERR_METHOD: 405,
  /** The job has already finished, so it cannot be cancelled; or it was cancelled while a request waited for it. */
  MF_ERR_JOB_STATE: 409,
  /** A request body or an input is larger than its limit. */
  MF_ERR_TOO_LARGE: 413,
  /** The body's Content-Type (or its charset) is not one mediaflow reads. */
  MF_ERR_MEDIA_TYPE: 415,
  /** The input was downloaded but is not usable media, or ffmpeg failed on it. */
  MF_ERR_MEDIA: 422,
  /** An `Idempotency-Key` was used before with other fields. */
  MF_ERR_IDEMPOTENCY: 422,
  /** Anything unexpected. */
  MF_ERR_INTERNAL: 500,
  /** An input could not be downloaded. */
  MF_ERR_DOWNLOAD: 502,
  /** The queue is full or the server is shutting down. */
  MF_ERR_BUSY: 503,
  /** Processing ran past its time limit. */
  MF_ERR_TIMEOUT: 504,
  /**
   * The server's disk (or its quota) is full, or below MEDIAFLOW_MIN_FREE_DISK: a job record, a
   * download or an output could not be written. 507 Insufficient Storage (RFC 4918): the request
   * was fine and may be sent again once space is freed.
   */
  MF_ERR_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** An error whose message may be shown to the user as is. */
export class MediaflowError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds after which a 503 may be retried. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; retryAfter?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MediaflowError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

/** Shorthands, so call sites read as the condition they report. */
export const paramError = (message: string) => new MediaflowError('MF_ERR_PARAM', message);
export const urlError = (message: string) => new MediaflowError('MF_ERR_URL', message);
export const mediaError = (message: string, cause?: unknown) => new MediaflowError('MF_ERR_MEDIA', message, { cause });
export const downloadError = (url: string, reason: string, cause?: unknown) =>
  new MediaflowError('MF_ERR_DOWNLOAD', `Failed to download ${url}: ${reason}`, { cause });
export const tooLargeError = (message: string) => new MediaflowError('MF_ERR_TOO_LARGE', message);
export const busyError = (message: string, retryAfter = 5) => new MediaflowError('MF_ERR_BUSY', message, { retryAfter });
export const timeoutError = (message: string) => new MediaflowError('MF_ERR_TIMEOUT', message);

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

/** A 507: the server could not store what the request needs (`reason`: why, without paths). */
export const storageError = (reason: string, cause?: unknown) =>
  new MediaflowError('MF_ERR_STORAGE', `The server is out of disk space (${reason}); retry later`, { cause });

/** The message the interface fixes (docs/architecture.md) for a value outside a format allowlist. */
export const unsupportedFormat = (format: string, supported: readonly string[]) =>
  paramError(`Unsupported format '${format}'. Supported formats: ${supported.join(', ')}.`);

/**
 * An error that answers with `status`: a job's failure, kept as `{status, error}` in its record,
 * answered to the synchronous request that waited for it.
 */
export function errorWithStatus(status: number, message: string): MediaflowError {
  const code = (Object.keys(ERROR_STATUS) as ErrorCode[]).find((candidate) => ERROR_STATUS[candidate] === status) ?? 'MF_ERR_INTERNAL';
  return new MediaflowError(code, message, code === 'MF_ERR_BUSY' ? { retryAfter: 5 } : {});
}

/** Whether a thrown value is the user's cancellation rather than a failure. */
export const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR');
