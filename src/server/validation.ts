import type { FastifySchemaValidationError } from 'fastify';
import { paramError, type MediaflowError } from '../engine/errors.js';

/**
 * How Fastify checks what a route's schema declares (its path parameters and query; the bodies of operations and
 * pipelines stay with their own validators, job-submission.ts), and how a refusal reads: a 400 `MF_ERR_PARAM` in the
 * project's shape, naming the field.
 */

/** A schema keyword saying what a field must be, as its refusal puts it: `Expected \`limit\` to be <this>, got ...`. */
export const EXPECTED = 'x-expected';

/**
 * Fastify's `ajv` option. Errors carry the value and the field's schema (`verbose`), which the refusal names. Formats
 * are documentation only: an id that is no UUID is an unknown job (404), as before routes had schemas.
 */
export const AJV_OPTIONS = { customOptions: { verbose: true, validateFormats: false, keywords: [EXPECTED] } };

/** Where a value was: Fastify's name of the part of the request. */
const PARTS: Record<string, string> = {
  params: 'path parameter',
  querystring: 'query parameter',
  headers: 'header',
  body: 'field',
};

/** The value a refusal quotes: a list as its items joined, as a query repeats a name. */
const shown = (value: unknown) => (Array.isArray(value) ? value.join(',') : String(value));

/** Fastify's `schemaErrorFormatter`: the first problem as a 400 `MF_ERR_PARAM` (its handler answers it). */
export function validationError(errors: FastifySchemaValidationError[], part: string): MediaflowError {
  const [error] = errors as Array<FastifySchemaValidationError & { data?: unknown; parentSchema?: object }>;
  const missing = (error?.params as { missingProperty?: string } | undefined)?.missingProperty;
  const field = missing ?? error?.instancePath.split('/').filter(Boolean).join('.') ?? '';
  const expected =
    error?.parentSchema && !missing ? (error.parentSchema as Record<string, unknown>)[EXPECTED] : undefined;
  if (typeof expected === 'string')
    return paramError(`Expected \`${field}\` to be ${expected}, got \`${shown(error!.data)}\``);
  return paramError(`Invalid ${PARTS[part] ?? part} \`${field}\`: ${error?.message ?? 'not valid'}`);
}

/**
 * A route-level `validatorCompiler` that lets every request through, for a route whose handler reads and checks the
 * request itself: an operation's or a pipeline's fields (multipart, urlencoded or JSON, read by their own validator,
 * which takes form text as numbers and comma lists and names the field it refuses) and its job headers
 * (job-submission.ts), /files/' parts, MCP's messages. Their schemas document them; Fastify's validator would refuse or
 * coerce them otherwise.
 */
export const handlerValidates = () => () => true;
