import type { Config } from '../../engine/config.js';
import type { Registry } from '../../engine/plugins/registry.js';
import { errorResponses, errorSchema } from './error-responses.js';
import { filesRoute } from './files.js';
import { jobHeaderParameters } from './job-fields.js';
import { jobParameters, jobResponses, jobRoutes, jobSchemas, webhooks } from './jobs.js';
import { operation } from './operations.js';
import { pipelineRoutes } from './pipelines.js';
import { serverRoutes } from './server-routes.js';
import { templateRoutes } from './templates.js';
import { VERSION } from '../../engine/version.js';
import type { Json } from './shared.js';
import { uploadParameters, uploadRoutes } from './uploads.js';
import { studioRoutes } from './studio.js';

/**
 * The OpenAPI 3.1 document of a server, generated from its registry: the same plugin schemas that
 * validate requests, make CLI flags and check pipelines. `GET /openapi.json` serves it and
 * `GET /docs` shows it (Swagger UI); both stay open when an API key is set (they hold no data).
 * It also describes the asynchronous side (docs/jobs.md): the job fields and headers every
 * operation and pipeline takes, the `202` answer, the `/jobs/{id}` routes and the `jobFinished` webhook.
 */

/** The OpenAPI 3.1 document for a registry (and, when it is given, the server's configuration). */
export function openApiDocument(
  registry: Registry,
  config?: Pick<Config, 'apiKey' | 'publicUrl'> & Partial<Pick<Config, 'apiKeys' | 'bodyLimit' | 'metricsToken'>>,
): Json {
  const secured = Boolean(config?.apiKey) || Boolean(config?.apiKeys?.length);
  const third = registry.list().filter((plugin) => registry.sourceOf(plugin.name) !== 'built-in');
  const paths: Json = {};
  for (const plugin of registry.list()) paths[plugin.path] = operation(plugin, registry, secured, config?.bodyLimit);
  Object.assign(
    paths,
    serverRoutes(secured, Boolean(config?.metricsToken)),
    filesRoute(secured),
    uploadRoutes(registry),
    pipelineRoutes(secured),
    templateRoutes(secured),
    jobRoutes(secured),
    studioRoutes(secured),
  );
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
    ...(config?.publicUrl ? { servers: [{ url: config.publicUrl }] } : {}),
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
    paths,
    webhooks: webhooks(),
    components: {
      schemas: { Error: errorSchema(), ...jobSchemas() },
      parameters: { ...jobHeaderParameters(), ...jobParameters(), ...uploadParameters() },
      responses: { ...jobResponses(), ...errorResponses() },
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
