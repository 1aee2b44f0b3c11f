/** What every part of the OpenAPI document uses: JSON objects, `$ref`s, the examples' samples. */

export type Json = Record<string, unknown>;

export const json = (schema: Json) => ({ 'application/json': { schema } });
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/**
 * A route's response that is one of the document's component responses. @fastify/swagger makes a Response Object of
 * each schema of a route's `response` and has no form for a reference, so the schema carries this key, which
 * finishDocument (document.ts) turns into the `$ref`. Responses are serialized with JSON.stringify (app.ts), so the
 * schema never shapes an answer.
 */
export const RESPONSE_REF = 'x-mediaflow-response';
export const responseRef = (name: string) => ({ [RESPONSE_REF]: name });

/** The job id and the base URL the examples show. */
export const SAMPLE_ID = '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f';
export const SAMPLE_BASE = 'http://127.0.0.1:8000';

/** Any object: a body whose fields the document does not list. */
export const anyObject = { type: 'object', additionalProperties: true };

/** The `security` of a route the API key guards, when the server has one. */
export const apiKeySecurity = (secured: boolean) => (secured ? { security: [{ apiKey: [] }] } : {});

/**
 * A request body's description: @fastify/swagger keeps a body's description only when it has one media type, so a
 * route with several says it here and finishDocument puts it in place.
 */
export const REQUEST_DESCRIPTION = 'x-mediaflow-request-description';

/**
 * A route's `config` that documents it at its path with a trailing slash, as the server names it elsewhere (`POST
 * /files/`, a pipeline's `path`); Fastify registers it without, and both forms answer (ignoreTrailingSlash).
 */
export const DOCUMENTED_WITH_SLASH = {
  swaggerTransform: ({ schema, url }: { schema: object; url: string }) => ({ schema, url: `${url}/` }),
};
