import type { FastifyRequest } from 'fastify';
import { isAbort, MediaflowError, paramError, tooLargeError } from '../engine/errors.js';

/** The 400 for a file part: uploads are refused whatever their size, and the message says where URLs go instead. */
function uploadRefused(field: string, urlFields: readonly string[]): MediaflowError {
  const named = urlFields.map((name) => `\`${name}\``).join(', ');
  if (urlFields.includes(field))
    return paramError(`File uploads are not supported: pass the file's URL in \`${field}\``);
  if (urlFields.length === 0)
    return paramError(`File uploads are not supported, and there is no field \`${field}\`: inputs are given by URL`);
  return paramError(
    `File uploads are not supported, and there is no field \`${field}\`: pass the files' URLs in ${named}`,
  );
}

/**
 * The request's fields as one flat object, whatever the encoding: multipart/form-data (the
 * interface's), urlencoded or JSON. Files are refused: inputs are referenced by URL, in the
 * fields `urlFields` names (for the message).
 */
export async function readFields(
  request: FastifyRequest,
  urlFields: readonly string[] = [],
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
  // rather than read from Content-Length: a large body is most often a file, which gets its own
  // answer (uploads are not supported) rather than one about the body limit.
  const limit = request.routeOptions.bodyLimit;
  const tooLarge = () =>
    tooLargeError(`Request body is larger than the limit of ${limit} bytes (MEDIAFLOW_BODY_LIMIT)`);
  // Busboy throws plain errors for a body it cannot read (no boundary, say): those are the client's.
  if (!/;\s*boundary=/i.test(request.headers['content-type'] ?? ''))
    throw paramError('Malformed request body: multipart/form-data without a boundary');
  let total = 0;
  const fields: Record<string, unknown> = Object.create(null);
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        part.file.resume();
        throw uploadRefused(part.fieldname, urlFields);
      }
      const name = typeof part.fieldname === 'string' ? part.fieldname : '';
      total += Buffer.byteLength(name) + (typeof part.value === 'string' ? Buffer.byteLength(part.value) : 0);
      if (part.valueTruncated || total > limit) throw tooLarge();
      // A part without a name is no field of ours: ignored like any unknown field.
      if (!name) continue;
      const previous = fields[name];
      fields[name] = previous === undefined ? part.value : [previous, part.value].flat();
    }
  } catch (error) {
    if (
      error instanceof MediaflowError ||
      isAbort(error) ||
      (error as { statusCode?: number }).statusCode !== undefined
    )
      throw error;
    throw paramError(`Malformed request body: ${(error as Error).message}`);
  }
  return fields;
}
