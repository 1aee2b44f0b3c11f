import http from 'node:http';
import { ERRORS, type ErrorCode } from '../../engine/errors.js';
import { json, responseRef, schemaRef, type Json } from './shared.js';

/**
 * The errors of the document, made from the registry (src/engine/errors.ts): the `Error` schema and
 * one reusable response per status, each listing its codes with their titles and descriptions.
 */

/** The codes an operation or a pipeline run may answer with; the others belong to other routes. */
export const RUN_ERRORS: ErrorCode[] = [
  'MF_ERR_PARAM',
  'MF_ERR_URL',
  'MF_ERR_BAD_REQUEST',
  'MF_ERR_AUTH',
  'MF_ERR_TOO_LARGE',
  'MF_ERR_MEDIA_TYPE',
  'MF_ERR_MEDIA',
  'MF_ERR_IDEMPOTENCY',
  'MF_ERR_INTERNAL',
  'MF_ERR_UNAVAILABLE',
  'MF_ERR_DOWNLOAD',
  'MF_ERR_BUSY',
  'MF_ERR_TIMEOUT',
  'MF_ERR_STORAGE',
];

/** Every code of the registry by its status: one reusable response per status. */
const CODES_BY_STATUS = new Map<number, ErrorCode[]>();
for (const code of Object.keys(ERRORS) as ErrorCode[]) {
  CODES_BY_STATUS.set(ERRORS[code].status, [...(CODES_BY_STATUS.get(ERRORS[code].status) ?? []), code]);
}

/** A status's response name: its HTTP reason phrase in PascalCase (`PayloadTooLarge`), else its first code's title. */
const responseName = (status: number) =>
  (http.STATUS_CODES[status] ?? ERRORS[CODES_BY_STATUS.get(status)![0]!].title).replace(
    /(?:^|[\s-])(\w)/g,
    (_match, letter: string) => letter.toUpperCase(),
  );

/** The content of every error answer: the `Error` schema. */
export const errorContent = json(schemaRef('Error'));

/** A status's response, described from the registry: each of its codes with its title and description. */
function errorResponse(status: number): Json {
  const codes = CODES_BY_STATUS.get(status)!;
  return {
    description: codes.map((code) => `\`${code}\` (${ERRORS[code].title}): ${ERRORS[code].description}`).join(' '),
    ...(codes.includes('MF_ERR_BUSY')
      ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } } }
      : {}),
    content: errorContent,
  };
}

/** The responses of the statuses of `codes`, by reference (see responseRef), for a route's `response`. */
export const errorRefs = (codes: ErrorCode[]) =>
  Object.fromEntries(
    codes.map((code) => ERRORS[code].status).map((status) => [String(status), responseRef(responseName(status))]),
  );

/** An error's `errors`: every problem of a request told at once, each where it is (MediaflowError.errors). */
export const PROBLEMS_SCHEMA: Json = {
  type: 'array',
  description:
    'Present when the request had several problems, told at once (a render document): each with where it is and ' +
    'what is wrong; `error` is the first',
  items: {
    type: 'object',
    required: ['path', 'error'],
    properties: {
      path: { type: 'string', examples: ['tracks[1].clips[0].src'] },
      error: { type: 'string' },
    },
  },
};

/** The `Error` component schema: the text, the code to branch on, and every problem when there were several. */
export function errorSchema(): Json {
  return {
    type: 'object',
    required: ['error', 'code'],
    properties: {
      error: { type: 'string', description: 'What went wrong; never a stack trace or a server path' },
      code: {
        type: 'string',
        enum: Object.keys(ERRORS),
        description: 'The stable code of the condition (docs/errors.md): branch on it, not on the text',
      },
      errors: PROBLEMS_SCHEMA,
    },
  };
}

/** The component responses of the registry's statuses, by their names (`BadRequest`, `PayloadTooLarge`, ...). */
export function errorResponses(): Json {
  return Object.fromEntries([...CODES_BY_STATUS.keys()].map((status) => [responseName(status), errorResponse(status)]));
}
