import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { diskFullError, isAbort, MediaflowError } from '../engine/errors.js';

/** Statuses and texts for Fastify's and its plugins' own errors, with the statuses of the README's Errors table. */
function fromFramework(error: FastifyError, bodyLimit: number): { status: number; message: string } | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return { status: 413, message: `Request body is larger than the limit of ${bodyLimit} bytes (MEDIAFLOW_BODY_LIMIT)` };
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
    case 'FST_FILES_LIMIT':
      return { status: 413, message: `Request has more parts than allowed (${error.message})` };
    case 'FST_UNDER_PRESSURE':
      return { status: 503, message: 'Server is under heavy load; retry later' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'Unsupported Content-Type: send multipart/form-data, application/x-www-form-urlencoded or application/json' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_PROTO_VIOLATION':
      return { status: 400, message: `Malformed request body: ${error.message}` };
    default:
      return error.statusCode && error.statusCode < 500 ? { status: error.statusCode, message: error.message } : undefined;
  }
}

/**
 * Fastify's `frameworkErrors` option: errors its router raises before any route or error handler
 * runs (a URL that does not decode, ...), answered in the same `{error}` shape.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
  void reply.status(status).send({ error: error.message || 'Bad request' });
}

/** Every error leaves as `{error}` JSON with the README's Errors status; unexpected ones are logged. */
export function installErrorHandler(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    // A full disk on any route (a job record, an upload being read) says so with a 507, not a bare 500.
    const error = (diskFullError(thrown) ?? thrown) as FastifyError;
    if (error instanceof MediaflowError) {
      if (error.retryAfter !== undefined) void reply.header('Retry-After', String(error.retryAfter));
      const level = error.status >= 500 ? 'error' : 'info';
      request.log[level]({ code: error.code, err: error }, error.message);
      return reply.status(error.status).send({ error: error.message });
    }
    if (isAbort(error)) {
      // The client went away; nobody reads this answer.
      return reply.status(499).send({ error: 'Request cancelled' });
    }
    const known = fromFramework(error, bodyLimit);
    if (known) return reply.status(known.status).send({ error: known.message });
    request.log.error({ err: error }, 'unexpected error');
    return reply.status(500).send({ error: 'Internal server error' });
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send({ error: `Not found: ${request.method} ${request.url.split('?')[0]}` }));
}
