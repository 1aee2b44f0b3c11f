import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { Config } from '../../engine/config.js';
import type { Registry } from '../../engine/plugins/registry.js';
import { VERSION } from '../../engine/version.js';
import { errorResponses, errorSchema } from './error-responses.js';
import { jobResponses, jobSchemas, webhooks } from './jobs.js';
import { REQUEST_DESCRIPTION, RESPONSE_REF, type Json } from './shared.js';
import { EXPECTED } from '../validation.js';
import { uploadParameters, uploadRoutes } from './uploads.js';

/**
 * The OpenAPI 3.1 document of a server: @fastify/swagger makes its paths from the schemas every route declares
 * (the operations' from the same plugin schemas that validate requests, make CLI flags and check pipelines); this is
 * the rest of it: info, tags, the security schemes, the components routes refer to, the `jobFinished` webhook, and the
 * outputs under /uploads/ (served by @fastify/static's one wildcard route, so described here). `GET /openapi.json`
 * serves it and `GET /docs` shows it (Swagger UI); both stay open when an API key is set (they hold no data).
 */

/** The document-level part of the document, for @fastify/swagger's `openapi` option. */
export function documentOptions(
  registry: Registry,
  config: Pick<Config, 'publicUrl'>,
): NonNullable<FastifyDynamicSwaggerOptions['openapi']> {
  const third = registry.list().filter((plugin) => registry.sourceOf(plugin.name) !== 'built-in');
  return {
    openapi: '3.1.0',
    info: {
      title: 'mediaflow',
      version: VERSION,
      description:
        'Media processing by URL with ffmpeg. Every operation is a POST taking multipart/form-data, ' +
        'application/x-www-form-urlencoded or application/json with the same field names, with or without the ' +
        'trailing slash. Lists are comma-separated. A URL field also takes a file part of its name, and ' +
        'POST /files/ keeps files whose URLs any operation takes. Errors are always `{"error": "<text>", "code": ' +
        '"MF_ERR_..."}`, the code naming the condition.' +
        ' An operation or pipeline with a `webhook_url` field or the header `Prefer: respond-async` runs as a ' +
        "job: the answer is 202 with the job's URL, which GET /jobs/{id} reads, /jobs/{id}/events follows and " +
        'DELETE cancels; the jobFinished webhook reports its end.' +
        (third.length > 0 ? ` Operations from plugins: ${third.map((plugin) => plugin.name).join(', ')}.` : ''),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    ...(config.publicUrl ? { servers: [{ url: config.publicUrl }] } : {}),
    tags: [
      { name: 'operations', description: 'The built-in operations' },
      ...(third.length > 0 ? [{ name: 'plugins', description: 'Operations added by plugins' }] : []),
      { name: 'pipelines', description: 'Pipelines of operations, defined in files' },
      {
        name: 'jobs',
        description: 'Operations and pipelines run asynchronously: status, events, cancellation and the webhook',
      },
      { name: 'server', description: 'Health, metrics, uploaded files and outputs' },
    ],
    paths: uploadRoutes(registry) as never,
    webhooks: webhooks() as never,
    components: {
      schemas: { Error: errorSchema(), ...jobSchemas() } as never,
      parameters: uploadParameters() as never,
      responses: { ...jobResponses(), ...errorResponses() } as never,
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Needed when the server has MEDIAFLOW_API_KEY or MEDIAFLOW_API_KEYS set',
        },
        apiKeyBearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'The API key as a Bearer token: taken by /metrics only (what Prometheus sends)',
        },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'MEDIAFLOW_METRICS_TOKEN, for /metrics' },
      },
    },
  };
}

/**
 * What @fastify/swagger has no form for, put in place once it has made the document: a route's response that is a
 * component response becomes its `$ref` (responseRef), a body of several media types gets its description, and
 * parameters lose the keyword that words their refusal.
 */
export function finishDocument({ openapiObject }: { openapiObject: Json }): Json {
  for (const item of Object.values(openapiObject.paths as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(item)) {
      if (typeof operation.responses !== 'object') continue;
      const responses = operation.responses as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        const content = response.content as Record<string, { schema?: Json }> | undefined;
        const name = content?.['application/json']?.schema?.[RESPONSE_REF];
        if (typeof name === 'string') responses[status] = { $ref: `#/components/responses/${name}` };
      }
      // The keyword that words a refusal (validation.ts) is the server's own, not part of the parameter's schema.
      for (const parameter of (operation.parameters ?? []) as Json[])
        if (parameter.schema) delete (parameter.schema as Json)[EXPECTED];
      if (operation[REQUEST_DESCRIPTION] !== undefined) {
        (operation.requestBody as Json).description = operation[REQUEST_DESCRIPTION];
        delete operation[REQUEST_DESCRIPTION];
      }
    }
  }
  return openapiObject;
}
