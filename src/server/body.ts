import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { isAbort, MediaflowError, paramError, tooLargeError } from '../engine/errors.js';
import { dropWhenIdle, watchIdleBody } from './body-idle.js';
import { clientGone } from './disconnect.js';

/**
 * What becomes of a file part: the value its field takes (the URL the file is kept at), or a
 * refusal. `stalled` aborts (408) when the body stops arriving while the part is being read.
 */
export type FilePartHandler = (part: MultipartFile, stalled: AbortSignal) => Promise<string>;

/** Settles as `work` does, or rejects with the signal's reason as soon as it aborts. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The request's fields as one flat object, whatever the encoding: multipart/form-data (the
 * interface's), urlencoded or JSON. A file part becomes the value `onFile` gives for it (or its
 * refusal), in its field, in the order of the parts (a list field may mix URLs and files). A
 * multipart body that goes `idleMs` without a byte is refused (408, MEDIAFLOW_BODY_IDLE_TIMEOUT).
 */
export async function readFields(
  request: FastifyRequest,
  onFile: FilePartHandler,
  idleMs: number,
): Promise<Record<string, unknown>> {
  if (!request.isMultipart()) {
    const body = request.body;
    if (body === undefined || body === null) return {};
    if (typeof body !== 'object' || Array.isArray(body))
      throw paramError('Expected the request body to be an object of fields');
    return body as Record<string, unknown>;
  }
  // Busboy cuts a field at its size limit and says so only in a flag; the fields together are held
  // to the body limit too, as the other encodings are. The size is counted as the parts arrive
  // rather than read from Content-Length: files have limits of their own (MEDIAFLOW_MAX_INPUT_BYTES).
  const limit = request.routeOptions.bodyLimit;
  const tooLarge = () =>
    tooLargeError(`Request body is larger than the limit of ${limit} bytes (MEDIAFLOW_BODY_LIMIT)`);
  // Busboy throws plain errors for a body it cannot read (no boundary, say): those are the client's.
  if (!/;\s*boundary=/i.test(request.headers['content-type'] ?? ''))
    throw paramError('Malformed request body: multipart/form-data without a boundary');
  let total = 0;
  const fields: Record<string, unknown> = Object.create(null);
  const parts = request.parts();
  // The first call starts the parser, which pipes the body to itself: the watch comes after.
  const first = parts.next();
  const idle = watchIdleBody(request.raw, idleMs);
  try {
    for (let next = first; ; next = parts.next()) {
      // The parser waits for a body that stopped arriving as long as its connection stays open.
      const { done, value: part } = await unlessAborted(next, idle.signal);
      if (done) break;
      const name = typeof part.fieldname === 'string' ? part.fieldname : '';
      let value: unknown;
      if (part.type === 'file') value = await onFile(part, idle.signal);
      else {
        value = part.value;
        total += Buffer.byteLength(name) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
        if (part.valueTruncated || total > limit) throw tooLarge();
      }
      // A part without a name is no field of ours: ignored like any unknown field.
      if (!name) continue;
      const previous = fields[name];
      fields[name] = previous === undefined ? value : [previous, value].flat();
    }
    // The parser ends quietly when the body stops between two parts: a body that did not arrive
    // whole is a client that went away, and nothing of it is kept.
    if (!request.raw.complete) throw clientGone();
  } catch (error) {
    // Answered before the body has all arrived: the rest is read and dropped, so that the client gets
    // the answer and the connection stays usable; a stalled parser would hold it. A body that stops
    // arriving meanwhile is not waited for (its connection is closed), nor is one that already had
    // (its 408 closes the connection: error-handler.ts).
    if (!request.raw.complete) {
      request.raw.unpipe();
      request.raw.resume();
      if (!idle.signal.aborted) dropWhenIdle(request.raw, idleMs);
    }
    if (
      error instanceof MediaflowError ||
      isAbort(error) ||
      (error as { statusCode?: number }).statusCode !== undefined
    )
      throw error;
    throw paramError(`Malformed request body: ${(error as Error).message}`);
  } finally {
    idle.stop();
  }
  return fields;
}
