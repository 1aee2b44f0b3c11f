import type { FastifyRequest } from 'fastify';
import { paramError } from '../engine/errors.js';

/**
 * The request's fields as one flat object, whatever the encoding: multipart/form-data (the
 * interface's), urlencoded or JSON. Files are refused: inputs are referenced by URL.
 */
export async function readFields(request: FastifyRequest): Promise<Record<string, unknown>> {
  if (!request.isMultipart()) {
    const body = request.body;
    if (body === undefined || body === null) return {};
    if (typeof body !== 'object' || Array.isArray(body)) throw paramError('Expected the request body to be an object of fields');
    return body as Record<string, unknown>;
  }
  const fields: Record<string, unknown> = Object.create(null);
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      part.file.resume();
      throw paramError(`File uploads are not supported: pass the file's URL in \`${part.fieldname}\``);
    }
    const previous = fields[part.fieldname];
    fields[part.fieldname] = previous === undefined ? part.value : [previous, part.value].flat();
  }
  return fields;
}
