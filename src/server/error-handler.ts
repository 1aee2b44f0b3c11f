import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import { isAddressRefusal } from '../engine/inputs/address-guard.js';
import { inputTooLarge } from '../engine/inputs/fetcher.js';
import {
  codeOfStatus,
  descriptorsError,
  diskFullError,
  ERRORS,
  isAbort,
  MediaflowError,
  publicError,
  type ErrorCode,
} from '../engine/errors.js';

/** The limits the framework's own 413s name. */
export type BodyLimits = Pick<Config, 'bodyLimit' | 'maxInputBytes' | 'maxInputs'>;

/** Fastify's and its plugins' own errors as registry errors, with the texts of docs/errors.md. */
function fromFramework(error: FastifyError, limits: BodyLimits): MediaflowError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new MediaflowError(
        'MF_ERR_TOO_LARGE',
        `Request body is larger than the limit of ${limits.bodyLimit} bytes (MEDIAFLOW_BODY_LIMIT)`,
      );
    // Behind the count of file-parts.ts, which names the file: only a file it did not read gets here.
    case 'FST_REQ_FILE_TOO_LARGE':
      return inputTooLarge('file part', limits.maxInputBytes);
    case 'FST_FILES_LIMIT':
      return new MediaflowError(
        'MF_ERR_TOO_LARGE',
        `Request has more file parts than the limit of ${limits.maxInputs} (MEDIAFLOW_MAX_INPUTS)`,
      );
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new MediaflowError('MF_ERR_TOO_LARGE', `Request has more parts than allowed (${error.message})`);
    case 'FST_UNDER_PRESSURE':
      return new MediaflowError('MF_ERR_BUSY', 'Server is under heavy load; retry later');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new MediaflowError(
        'MF_ERR_MEDIA_TYPE',
        'Unsupported Content-Type: send multipart/form-data, application/x-www-form-urlencoded or application/json',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_PROTO_VIOLATION':
      return new MediaflowError('MF_ERR_BAD_REQUEST', `Malformed request body: ${error.message}`);
    default:
      return error.statusCode && error.statusCode < 500
        ? new MediaflowError(clientCode(error.statusCode), error.message)
        : undefined;
  }
}

/** The code of another client error (a 416 of @fastify/static, ...): its status's, else a malformed request. */
const clientCode = (status: number): ErrorCode => codeOfStatus(status) ?? 'MF_ERR_BAD_REQUEST';

/** The body every error answers with (publicError), a refused address naming the setting that allows it. */
const body = (error: MediaflowError) => {
  const view = publicError(error);
  return { ...view, error: withSetting(view.error) };
};

/** A refused address names the setting that allows it, as the CLI's hint names its flag (src/cli/hints.ts). */
const withSetting = (message: string): string =>
  isAddressRefusal(message)
    ? `${message}; MEDIAFLOW_ALLOW_PRIVATE_URLS=1 allows loopback, private and link-local addresses`
    : message;

/**
 * Fastify's `frameworkErrors` option: errors its router raises before any route or error handler
 * runs (a URL that does not decode, ...), answered in the same `{error, code}` shape.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const code = error.statusCode && error.statusCode < 500 ? clientCode(error.statusCode) : 'MF_ERR_BAD_REQUEST';
  const known = new MediaflowError(code, error.message || 'Bad request');
  void reply.status(known.status).send(body(known));
}

/** What Node's parser reports before any request exists, as registry codes (Fastify's own answer has no code). */
const CLIENT_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'MF_ERR_REQUEST_TIMEOUT', message: 'The request was not received in time' },
  HPE_HEADER_OVERFLOW: { code: 'MF_ERR_HEADERS_TOO_LARGE', message: 'The request headers are too large' },
};

/**
 * Fastify's `clientErrorHandler` option: a request that timed out or that Node cannot parse gets a
 * `{error, code}` answer written on the socket, which is then closed (as Fastify's default does).
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { code, message } = CLIENT_ERRORS[error.code ?? ''] ?? {
    code: 'MF_ERR_BAD_REQUEST' as const,
    message: 'Malformed HTTP request',
  };
  const { status } = ERRORS[code];
  this.log.debug({ err: error, code }, 'client error');
  if (socket.writable) {
    const text = JSON.stringify({ error: message, code });
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}

/**
 * Every error leaves as `{error, code}` JSON with the registry's status; unexpected ones are logged
 * and answered briefly.
 */
export function installErrorHandler(app: FastifyInstance, limits: BodyLimits): void {
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    if (isAbort(thrown)) {
      // The client went away; nobody reads this answer.
      const cancelled = new MediaflowError('MF_ERR_CANCELLED', 'Request cancelled');
      return reply.status(cancelled.status).send(body(cancelled));
    }
    // A full disk on any route (a job record, an upload being read) says so with a 507, not a bare 500;
    // running out of descriptors (a flood of connections) with a 503 to retry.
    const error =
      diskFullError(thrown) ??
      descriptorsError(thrown) ??
      (thrown instanceof MediaflowError ? thrown : fromFramework(thrown, limits));
    if (!error) {
      request.log.error({ err: thrown, code: 'MF_ERR_INTERNAL' }, 'unexpected error');
      const internal = new MediaflowError('MF_ERR_INTERNAL', 'Internal server error');
      return reply.status(internal.status).send(body(internal));
    }
    if (error.retryAfter !== undefined) void reply.header('Retry-After', String(error.retryAfter));
    // A body that stopped arriving is not waited for: the connection closes once the 408 is sent.
    if (error.code === 'MF_ERR_REQUEST_TIMEOUT') void reply.header('connection', 'close');
    const level = error.status >= 500 ? 'error' : 'info';
    request.log[level]({ code: error.code, err: error }, error.message);
    return reply.status(error.status).send(body(error));
  });
  app.setNotFoundHandler((request, reply) => {
    const notFound = new MediaflowError(
      'MF_ERR_NOT_FOUND',
      `Not found: ${request.method} ${request.url.split('?')[0]}`,
    );
    return reply.status(notFound.status).send(body(notFound));
  });
}
