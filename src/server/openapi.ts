import { readFileSync } from 'node:fs';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../engine/config.js';
import { sampleParams } from '../engine/plugin-check.js';
import { FORMAT_KEYWORD, inputSpecOf, type PluginDefinition, type TSchema } from '../engine/plugin.js';
import type { Registry } from '../engine/registry.js';

/**
 * The OpenAPI 3 document of a server, generated from its registry: the same plugin schemas that
 * validate requests, make CLI flags and check pipelines. `GET /openapi.json` serves it and
 * `GET /docs` shows it (Swagger UI); both stay open when an API key is set (they hold no data).
 */

type Json = Record<string, unknown>;

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Keywords a parameter schema shares with OpenAPI 3.0's Schema Object (TypeBox's symbols and others stay out). */
const SCHEMA_KEYWORDS = ['type', 'description', 'enum', 'default', 'minimum', 'maximum', 'maxLength', 'minLength', 'pattern'] as const;

/** The error statuses an operation may answer with (CONTRACT.md), each as a reusable response. */
const ERROR_RESPONSES: Record<string, { name: string; description: string }> = {
  '400': { name: 'BadRequest', description: 'Missing or invalid parameter (named in the text), unsupported format, too few or too many URLs, or an input URL that is malformed, not http(s) or not allowed' },
  '401': { name: 'Unauthorized', description: 'Missing or wrong `X-API-Key` header, when the server has an API key' },
  '413': { name: 'TooLarge', description: 'The request body or an input is larger than its limit' },
  '415': { name: 'UnsupportedMediaType', description: 'The body is not multipart/form-data, application/x-www-form-urlencoded or application/json' },
  '422': { name: 'Unprocessable', description: 'An input was downloaded but is not usable media, or ffmpeg (or the plugin) refused it' },
  '500': { name: 'InternalError', description: 'Anything else, such as a plugin that failed (`Plugin <name> failed: ...`); details are in the server log' },
  '502': { name: 'DownloadFailed', description: '`Failed to download <url>: <reason>`: DNS, connection, HTTP status >= 400 or time-out' },
  '503': { name: 'Busy', description: 'Queue full, server under pressure or shutting down; retry after `Retry-After` seconds' },
  '504': { name: 'Timeout', description: 'Processing ran past its time limit (MEDIAFLOW_JOB_TIMEOUT)' },
};

const json = (schema: Json) => ({ 'application/json': { schema } });
const errorRefs = (statuses: string[]) => Object.fromEntries(statuses.map((status) => [status, { $ref: `#/components/responses/${ERROR_RESPONSES[status]!.name}` }]));

/** One parameter as a field of a form body or of a JSON body (where a list may also be an array). */
function fieldSchema(property: TSchema, encoding: 'form' | 'json'): Json {
  const source = property as Json;
  const schema: Json = {};
  for (const keyword of SCHEMA_KEYWORDS) if (source[keyword] !== undefined) schema[keyword] = source[keyword];
  if (source[FORMAT_KEYWORD]) schema['x-mediaflow-format'] = true;
  const spec = inputSpecOf(property);
  if (!spec) return schema;
  schema['x-mediaflow-input'] = { kind: spec.kind, list: spec.list, ...(spec.min !== undefined ? { min: spec.min } : {}) };
  if (!spec.list) return { ...schema, format: 'uri' };
  schema.description = `${String(source.description ?? '')} (URLs separated by commas${spec.min && spec.min > 1 ? `, at least ${spec.min}` : ''})`;
  if (encoding === 'form') return schema;
  const { type: _type, ...rest } = schema;
  return {
    ...rest,
    oneOf: [
      { type: 'string', description: 'URLs separated by commas' },
      { type: 'array', items: { type: 'string', format: 'uri' }, minItems: spec.min ?? 1 },
    ],
  };
}

/** The body schema of an operation: its fields, required when they have no default. */
function bodySchema(plugin: PluginDefinition, encoding: 'form' | 'json'): Json {
  const properties = Object.fromEntries(Object.entries(plugin.params.properties).map(([key, property]) => [key, fieldSchema(property, encoding)]));
  const required = (plugin.params.required ?? []).filter((key) => (plugin.params.properties[key] as Json | undefined)?.default === undefined);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: true };
}

/** The JSON body an operation answers with: `message` and its output field. */
function successSchema(plugin: PluginDefinition): { schema: Json; example: Json } {
  const sample = sampleParams(plugin.params);
  let output = { field: 'output_file', path: '{id}' };
  let message = '';
  try {
    output = plugin.output(sample as never);
    message = plugin.message(sample as never);
  } catch {
    // The registry asked output() already; a message() that needs real params just gets no example.
  }
  const url = `http://127.0.0.1:8000/uploads/${output.path.replaceAll('{id}', '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f')}`;
  return {
    schema: {
      type: 'object',
      required: ['message', output.field],
      properties: {
        message: { type: 'string', description: 'What was done', ...(message ? { example: message } : {}) },
        [output.field]: { type: 'string', format: 'uri', description: `URL of the output: {base_url}/uploads/${output.path} ({id} is a random UUID v4)`, example: url },
      },
    },
    example: { ...(message ? { message } : {}), [output.field]: url },
  };
}

/** Where a plugin came from, as the open document may say it: a package name, or a file's name without its folder (no server paths). */
function publicSource(source: string): string {
  return source.replace(/^(\S+)/, (entry) => (/^(\.|\/|file:|[A-Za-z]:\\)/.test(entry) ? path.basename(entry) : entry));
}

/** The OpenAPI path item of one operation. */
function operation(plugin: PluginDefinition, registry: Registry, secured: boolean): Json {
  const info = registry.infoOf(plugin.name);
  const builtIn = !info || info.source === 'built-in';
  const version = builtIn ? pkg.version : info?.version;
  const sample = Object.fromEntries(Object.entries(sampleParams(plugin.params)).map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]));
  const success = successSchema(plugin);
  return {
    post: {
      operationId: plugin.name,
      summary: plugin.summary,
      ...(plugin.description ? { description: plugin.description } : {}),
      tags: [builtIn ? 'operations' : 'plugins'],
      'x-mediaflow-plugin': {
        name: plugin.name,
        source: publicSource(info?.source ?? 'built-in'),
        ...(version ? { version } : {}),
        cli: `mediaflow ${plugin.name.replace(/_/g, '-')}`,
      },
      ...(secured ? { security: [{ apiKey: [] }] } : {}),
      requestBody: {
        required: true,
        description: 'The fields as multipart/form-data (as the interface), application/x-www-form-urlencoded or application/json; unknown fields are ignored',
        content: {
          'multipart/form-data': { schema: bodySchema(plugin, 'form') },
          'application/x-www-form-urlencoded': { schema: bodySchema(plugin, 'form') },
          'application/json': { schema: bodySchema(plugin, 'json'), example: sample },
        },
      },
      responses: {
        '200': { description: 'Done: the output is published under /uploads/', content: { 'application/json': { schema: success.schema, example: success.example } } },
        ...errorRefs(Object.keys(ERROR_RESPONSES)),
      },
    },
  };
}

/** The routes mediaflow has besides its operations. */
function serverRoutes(secured: boolean): Json {
  const security = secured ? { security: [{ apiKey: [] }] } : {};
  const nameParameter = { name: 'name', in: 'path', required: true, description: 'The pipeline: a file <name>.yaml, .yml or .json in the pipelines folder', schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' } };
  const anyObject = { type: 'object', additionalProperties: true };
  return {
    '/health': {
      get: {
        operationId: 'health',
        summary: 'The ffmpeg and ffprobe in use, the queue, and the operations loaded',
        tags: ['server'],
        responses: {
          '200': {
            description: 'Up',
            content: json({
              type: 'object',
              required: ['status'],
              properties: {
                status: { type: 'string', enum: ['ok'] },
                ffmpeg: anyObject,
                ffprobe: anyObject,
                queue: anyObject,
                operations: { type: 'array', items: { type: 'string' } },
              },
            }),
          },
        },
      },
    },
    '/metrics': {
      get: { operationId: 'metrics', summary: 'Prometheus metrics', tags: ['server'], responses: { '200': { description: 'Metrics in the Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } } },
    },
    '/uploads/{file}': {
      get: {
        operationId: 'upload',
        summary: 'An output, by the URL an operation answered with (Range requests supported)',
        tags: ['server'],
        parameters: [{ name: 'file', in: 'path', required: true, description: 'The rest of the output URL after /uploads/ (it may hold one /)', schema: { type: 'string' } }],
        responses: {
          '200': { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          '404': { description: 'No such output (or it expired)', content: json({ $ref: '#/components/schemas/Error' }) },
        },
      },
    },
    '/pipelines': {
      get: {
        operationId: 'listPipelines',
        summary: 'The pipelines of the pipelines folder, with their inputs',
        tags: ['pipelines'],
        ...security,
        responses: { '200': { description: 'The pipelines', content: json({ type: 'object', properties: { pipelines: { type: 'array', items: anyObject } } }) }, ...errorRefs(['401']) },
      },
    },
    '/pipelines/{name}/': {
      get: {
        operationId: 'describePipeline',
        summary: "A pipeline's inputs, steps and results",
        tags: ['pipelines'],
        ...security,
        parameters: [nameParameter],
        responses: {
          '200': { description: 'The pipeline', content: json(anyObject) },
          '404': { description: 'No such pipeline', content: json({ $ref: '#/components/schemas/Error' }) },
          ...errorRefs(['400', '401']),
        },
      },
      post: {
        operationId: 'runPipeline',
        summary: 'Run a pipeline with the fields as its inputs',
        tags: ['pipelines'],
        ...security,
        parameters: [nameParameter],
        requestBody: {
          required: true,
          description: "The pipeline's inputs as fields (see GET /pipelines/{name}/), in any of the three encodings",
          content: { 'multipart/form-data': { schema: anyObject }, 'application/x-www-form-urlencoded': { schema: anyObject }, 'application/json': { schema: anyObject } },
        },
        responses: {
          '200': {
            description: "Done: each result's URL",
            content: json({ type: 'object', required: ['message', 'outputs'], properties: { message: { type: 'string' }, outputs: { type: 'object', additionalProperties: true } } }),
          },
          '404': { description: 'No such pipeline', content: json({ $ref: '#/components/schemas/Error' }) },
          ...errorRefs(Object.keys(ERROR_RESPONSES)),
        },
      },
    },
  };
}

/** The OpenAPI 3.0 document for a registry (and, when it is given, the server's configuration). */
export function openApiDocument(registry: Registry, config?: Pick<Config, 'apiKey' | 'publicUrl'>): Json {
  const secured = Boolean(config?.apiKey);
  const third = registry.list().filter((plugin) => registry.sourceOf(plugin.name) !== 'built-in');
  const paths: Json = {};
  for (const plugin of registry.list()) paths[plugin.path] = operation(plugin, registry, secured);
  Object.assign(paths, serverRoutes(secured));
  return {
    openapi: '3.0.3',
    info: {
      title: 'mediaflow',
      version: pkg.version,
      description:
        'Media processing by URL with ffmpeg. Every operation is a POST taking multipart/form-data, application/x-www-form-urlencoded or application/json with the same field names, with or without the trailing slash. Lists are comma-separated. Errors are always `{"error": "<text>"}`.' +
        (third.length > 0 ? ` Operations from plugins: ${third.map((plugin) => plugin.name).join(', ')}.` : ''),
      license: { name: 'MIT' },
    },
    ...(config?.publicUrl ? { servers: [{ url: config.publicUrl }] } : {}),
    tags: [
      { name: 'operations', description: 'The built-in operations' },
      ...(third.length > 0 ? [{ name: 'plugins', description: 'Operations added by plugins' }] : []),
      { name: 'pipelines', description: 'Pipelines of operations, defined in files' },
      { name: 'server', description: 'Health, metrics and outputs' },
    ],
    paths,
    components: {
      schemas: {
        Error: { type: 'object', required: ['error'], properties: { error: { type: 'string', description: 'What went wrong; never a stack trace or a server path' } } },
      },
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map(([status, response]) => [
          response.name,
          {
            description: response.description,
            ...(status === '503' ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } } } : {}),
            content: json({ $ref: '#/components/schemas/Error' }),
          },
        ]),
      ),
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Needed when the server has MEDIAFLOW_API_KEY set' } },
    },
  };
}

/** Serves the document at `/openapi.json` (and `/docs/json`) and Swagger UI at `/docs`. */
export async function registerApiDocs(app: FastifyInstance, registry: Registry, config: Config): Promise<void> {
  const document = openApiDocument(registry, config);
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', async () => app.swagger());
}
