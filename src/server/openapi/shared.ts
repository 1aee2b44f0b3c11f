/** What every part of the OpenAPI document uses: JSON objects, `$ref`s, the examples' samples. */

export type Json = Record<string, unknown>;

export const json = (schema: Json) => ({ 'application/json': { schema } });
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/** The job id and the base URL the examples show. */
export const SAMPLE_ID = '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f';
export const SAMPLE_BASE = 'http://127.0.0.1:8000';

/** Any object: a body whose fields the document does not list. */
export const anyObject = { type: 'object', additionalProperties: true };

/** The `security` of a route the API key guards, when the server has one. */
export const apiKeySecurity = (secured: boolean) => (secured ? { security: [{ apiKey: [] }] } : {});
