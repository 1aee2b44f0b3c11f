import http from 'node:http';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../engine/config.js';
import { ERRORS, type ErrorCode } from '../engine/errors.js';
import { mediaTypeOf } from '../engine/storage/media-types.js';
import { sampleParams } from '../engine/plugins/plugin-check.js';
import { FONT_KEYWORD, FORMAT_KEYWORD, inputSpecOf, type PluginDefinition, type TSchema } from '../engine/plugins/plugin.js';
import type { Registry } from '../engine/plugins/registry.js';
import { dashed, SERVER_PATHS } from '../engine/plugins/reserved.js';
import { JOB_STATUSES } from '../engine/jobs/job.js';
import { VERSION } from '../engine/version.js';
import { DOCS_PAGE } from './docs-page.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_METADATA_BYTES } from './limits.js';

/**
 * The OpenAPI 3.1 document of a server, generated from its registry: the same plugin schemas that
 * validate requests, make CLI flags and check pipelines. `GET /openapi.json` serves it and
 * `GET /docs` shows it (Swagger UI); both stay open when an API key is set (they hold no data).
 * It also describes the asynchronous side (docs/jobs.md): the job fields and headers every
 * operation and pipeline takes, the `202` answer, the `/jobs/{id}` routes and the `jobFinished` webhook.
 */

type Json = Record<string, unknown>;


/** Keywords of a parameter schema copied into the document's Schema Objects (TypeBox's symbols and others stay out). */
const SCHEMA_KEYWORDS = ['type', 'description', 'enum', 'default', 'examples', 'minimum', 'maximum', 'maxLength', 'minLength', 'pattern'] as const;

/** The codes an operation or a pipeline run may answer with; the others belong to other routes. */
const RUN_ERRORS: ErrorCode[] = [
  'MF_ERR_PARAM', 'MF_ERR_URL', 'MF_ERR_BAD_REQUEST', 'MF_ERR_AUTH', 'MF_ERR_TOO_LARGE', 'MF_ERR_MEDIA_TYPE', 'MF_ERR_MEDIA',
  'MF_ERR_IDEMPOTENCY', 'MF_ERR_INTERNAL', 'MF_ERR_DOWNLOAD', 'MF_ERR_BUSY', 'MF_ERR_TIMEOUT', 'MF_ERR_STORAGE',
];

/** Every code of the registry by its status: one reusable response per status. */
const CODES_BY_STATUS = new Map<number, ErrorCode[]>();
for (const code of Object.keys(ERRORS) as ErrorCode[]) {
  CODES_BY_STATUS.set(ERRORS[code].status, [...(CODES_BY_STATUS.get(ERRORS[code].status) ?? []), code]);
}

/** A status's response name: its HTTP reason phrase in PascalCase (`PayloadTooLarge`), else its first code's title. */
const responseName = (status: number) =>
  (http.STATUS_CODES[status] ?? ERRORS[CODES_BY_STATUS.get(status)![0]!].title)
    .replace(/(?:^|[\s-])(\w)/g, (_match, letter: string) => letter.toUpperCase());

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

/** A dependency in /health: what it is, whether it answers, and why not. */
const reachability = (kind: Json): Json => ({
  type: 'object',
  required: ['ok'],
  properties: { ...kind, ok: { type: 'boolean' }, error: { type: 'string' } },
});

const json = (schema: Json) => ({ 'application/json': { schema } });
/** The responses of the statuses of `codes`, by reference. */
const errorRefs = (codes: ErrorCode[]) =>
  Object.fromEntries(
    codes
      .map((code) => ERRORS[code].status)
      .map((status) => [String(status), { $ref: `#/components/responses/${responseName(status)}` }]),
  );
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const errorContent = json(schemaRef('Error'));

const SAMPLE_ID = '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f';
const SAMPLE_BASE = 'http://127.0.0.1:8000';

/** The fields every operation and pipeline takes besides its own, for running as a job. */
function jobFields(encoding: 'form' | 'json'): Json {
  const metadata = `Echoed unchanged in the job and its webhook: a string of at most ${MAX_METADATA_BYTES} bytes`;
  return {
    webhook_url: {
      type: 'string',
      format: 'uri',
      description:
        'Run as a job (answer 202) and POST the job to this URL when it succeeds, fails or is cancelled (see the jobFinished webhook). It passes the same address policy as the input URLs, checked at submission (400).',
    },
    metadata:
      encoding === 'form'
        ? { type: 'string', maxLength: MAX_METADATA_BYTES, description: metadata }
        : {
            description: `${metadata}, or an object whose JSON is at most ${MAX_METADATA_BYTES} bytes`,
            oneOf: [
              { type: 'string', maxLength: MAX_METADATA_BYTES },
              { type: 'object', additionalProperties: true },
            ],
          },
  };
}

/** The header parameters of every operation and pipeline run: `Prefer` and `Idempotency-Key`. */
const JOB_PARAMETERS = [parameterRef('Prefer'), parameterRef('IdempotencyKey')];

/** The output paths (with `{id}`) a plugin may answer with: its sample params, and each choice of each enum parameter. */
function outputPaths(plugin: PluginDefinition): string[] {
  const sample = sampleParams(plugin.params);
  const variants: Array<Record<string, unknown>> = [sample];
  for (const [key, property] of Object.entries(plugin.params.properties)) {
    const choices = (property as Json).enum;
    if (Array.isArray(choices)) for (const value of choices) variants.push({ ...sample, [key]: value });
  }
  const paths = new Set<string>();
  for (const params of variants) {
    try {
      paths.add(plugin.output(params as never).path);
    } catch {
      // A plugin whose output() wants other params: its sample path (checked at registration) is enough.
    }
  }
  return [...paths];
}

/**
 * The media types of `/uploads/{file}` (outputs directly under uploads) and `/uploads/{dir}/{file}`
 * (outputs in a folder of their own; pipeline results, `<run>/<result>.<ext>`, may be any output's type).
 */
function uploadMediaTypes(registry: Registry): { file: string[]; dirFile: string[] } {
  const file = new Set<string>();
  const dirFile = new Set<string>();
  for (const plugin of registry.list()) {
    for (const output of outputPaths(plugin)) {
      const type = mediaTypeOf(output);
      if (!output.includes('/')) file.add(type);
      dirFile.add(type);
    }
  }
  return { file: [...file].sort(), dirFile: [...dirFile].sort() };
}

/**
 * The fields of a request that works as it is in /docs' "Try it out" (a URL aside): the required
 * ones and those with a default or examples, with those values (lists as comma text). Optional
 * fields without either are left out rather than shown at some bound (a 8192x8192 frame, say).
 */
function exampleFields(plugin: PluginDefinition): Json {
  const required = new Set(plugin.params.required ?? []);
  return Object.fromEntries(
    Object.entries(sampleParams(plugin.params))
      .filter(([key]) => {
        const property = plugin.params.properties[key] as Json;
        return required.has(key) || property.default !== undefined || property.examples !== undefined;
      })
      .map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]),
  );
}

/**
 * One parameter as a field of a form body or of a JSON body (where a list may also be an array),
 * with its example. A text's length is bounded by the body limit too: its `maxLength` says the
 * smaller of the two, and its description that the limit counts bytes.
 */
function fieldSchema(property: TSchema, encoding: 'form' | 'json', example: unknown, bodyLimit: number | undefined): Json {
  const source = property as Json;
  const schema: Json = {};
  for (const keyword of SCHEMA_KEYWORDS) if (source[keyword] !== undefined) schema[keyword] = source[keyword];
  if (source[FORMAT_KEYWORD]) schema['x-mediaflow-format'] = true;
  if (source[FONT_KEYWORD]) schema['x-mediaflow-font'] = true;
  if (schema.examples === undefined && example !== undefined) schema.examples = [example];
  if (bodyLimit !== undefined && typeof schema.maxLength === 'number') {
    schema.maxLength = Math.min(schema.maxLength, bodyLimit);
    schema.description = `${String(schema.description ?? '')} (at most ${schema.maxLength} characters; the whole request body is at most ${bodyLimit} bytes, MEDIAFLOW_BODY_LIMIT, and a character may take up to 4 bytes of UTF-8)`;
  }
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
function bodySchema(plugin: PluginDefinition, encoding: 'form' | 'json', bodyLimit: number | undefined): Json {
  const examples = exampleFields(plugin);
  const properties = Object.fromEntries(Object.entries(plugin.params.properties).map(([key, property]) => [key, fieldSchema(property, encoding, examples[key], bodyLimit)]));
  const required = (plugin.params.required ?? []).filter((key) => (plugin.params.properties[key] as Json | undefined)?.default === undefined);
  return { type: 'object', properties: { ...properties, ...jobFields(encoding) }, ...(required.length > 0 ? { required } : {}), additionalProperties: true };
}

/**
 * What went wrong without failing the job (engine.ts' JobResult), in a success body: absent when
 * nothing did. The job result shows it too, being that same body.
 */
const WARNINGS_SCHEMA: Json = {
  type: 'array',
  items: { type: 'string' },
  description: 'Present only when something went wrong that did not fail the job, such as burned-in characters no installed font has (they render as empty boxes)',
  examples: [['No font has glyphs for U+65E5, U+672C: they render as empty boxes; install fonts-noto-cjk']],
};

/** The JSON body an operation answers with: `message`, its output field, and `warnings` when there are some. */
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
  const url = `${SAMPLE_BASE}/uploads/${output.path.replaceAll('{id}', SAMPLE_ID)}`;
  return {
    schema: {
      type: 'object',
      required: ['message', output.field],
      properties: {
        message: { type: 'string', description: 'What was done', ...(message ? { examples: [message] } : {}) },
        [output.field]: { type: 'string', format: 'uri', description: `URL of the output: {base_url}/uploads/${output.path} ({id} is a random UUID v4)`, examples: [url] },
        warnings: WARNINGS_SCHEMA,
      },
    },
    example: { ...(message ? { message } : {}), [output.field]: url },
  };
}

/** Where a plugin came from, as the open document may say it: a package name, or a file's name without its folder (no server paths). */
function publicSource(source: string): string {
  return source.replace(/^(\S+)/, (entry) => (/^(\.|\/|file:|[A-Za-z]:\\)/.test(entry) ? path.basename(entry) : entry));
}

/** The path as it also answers: without its trailing slash, or with one. */
const otherForm = (route: string) => (route.endsWith('/') ? route.replace(/\/+$/, '') : `${route}/`);

/** The OpenAPI path item of one operation. */
function operation(plugin: PluginDefinition, registry: Registry, secured: boolean, bodyLimit: number | undefined): Json {
  const info = registry.infoOf(plugin.name);
  const builtIn = !info || info.source === 'built-in';
  const version = builtIn ? VERSION : info?.version;
  const example = exampleFields(plugin);
  const success = successSchema(plugin);
  // One path per operation keeps /docs readable; the other form is said here (and in info.description).
  const also = `Also answered at \`${otherForm(plugin.path)}\`: the trailing slash is optional. Other methods than POST on this path are a 405 with \`Allow: POST\`.`;
  return {
    post: {
      operationId: plugin.name,
      summary: plugin.summary,
      description: plugin.description ? `${plugin.description}\n\n${also}` : also,
      tags: [builtIn ? 'operations' : 'plugins'],
      'x-mediaflow-plugin': {
        name: plugin.name,
        source: publicSource(info?.source ?? 'built-in'),
        ...(version ? { version } : {}),
        cli: `mediaflow ${dashed(plugin.name)}`,
      },
      ...(secured ? { security: [{ apiKey: [] }] } : {}),
      parameters: JOB_PARAMETERS,
      requestBody: {
        required: true,
        description:
          'The fields as multipart/form-data (as the README shows), application/x-www-form-urlencoded or application/json; unknown fields are ignored. With `webhook_url` or `Prefer: respond-async` the operation runs as a job (202).',
        content: {
          'multipart/form-data': { schema: bodySchema(plugin, 'form', bodyLimit), example },
          'application/x-www-form-urlencoded': { schema: bodySchema(plugin, 'form', bodyLimit), example },
          'application/json': { schema: bodySchema(plugin, 'json', bodyLimit), example },
        },
      },
      responses: {
        '200': { description: 'Done (a synchronous request): the output is published under /uploads/', content: { 'application/json': { schema: success.schema, example: success.example } } },
        '202': { $ref: '#/components/responses/Accepted' },
        ...errorRefs(RUN_ERRORS),
      },
    },
  };
}

/** `GET /uploads/{file}` and `GET /uploads/{dir}/{file}`: the outputs, with their media types and Range requests. */
function uploadRoutes(registry: Registry): Json {
  const types = uploadMediaTypes(registry);
  // Outputs are bytes of their media type; OpenAPI 3.1 describes such a body by its media type alone.
  const bytes = (mediaTypes: string[]) => Object.fromEntries(mediaTypes.map((type) => [type, {}]));
  const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
  const fileParameter = (description: string) => ({ name: 'file', in: 'path', required: true, description, schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' } });
  const route = (operationId: string, parameters: Json[], mediaTypes: string[], examplePath: string): Json => ({
    get: {
      operationId,
      summary: 'An output, by the URL an operation, a pipeline or a job answered with',
      description: `For example \`${SAMPLE_BASE}/uploads/${examplePath}\`. Open without the API key (its name holds a random UUID). Range requests are answered with 206 Partial Content; \`If-None-Match\` and \`If-Modified-Since\` with 304. Text types (subtitles) come with \`; charset=utf-8\`. Outputs are deleted after MEDIAFLOW_RETENTION.`,
      tags: ['server'],
      parameters: [...parameters, parameterRef('Range')],
      responses: {
        '200': {
          description: 'The whole file',
          headers: {
            'Accept-Ranges': header('`bytes`', { type: 'string', enum: ['bytes'] }),
            ETag: header('A validator for If-None-Match and If-Range'),
            'Last-Modified': header('When the output was written'),
          },
          content: bytes(mediaTypes),
        },
        '206': {
          description: 'Partial Content: the byte range the `Range` header asked for',
          headers: {
            'Content-Range': header('`bytes <first>-<last>/<size>`', { type: 'string', pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$' }),
            'Accept-Ranges': header('`bytes`', { type: 'string', enum: ['bytes'] }),
          },
          content: bytes(mediaTypes),
        },
        '304': { description: 'Not Modified: the client holds this version (If-None-Match, If-Modified-Since)' },
        '404': { description: 'No such output (or it expired)', content: errorContent },
        '416': { description: 'Range Not Satisfiable: the range lies outside the file', content: errorContent },
      },
    },
  });
  return {
    '/uploads/{file}': route('upload', [fileParameter('The output\'s name, such as `<id>_cropped.jpg` or `<id>_merged.mp4`')], types.file, `${SAMPLE_ID}_cropped.jpg`),
    '/uploads/{dir}/{file}': route(
      'uploadInFolder',
      [
        { name: 'dir', in: 'path', required: true, description: "The output's folder: the request's (or pipeline run's) random UUID", schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' } },
        fileParameter("The output's name in its folder, such as `merged_output.mp3` or a pipeline result's `<result>.<ext>`"),
      ],
      types.dirFile,
      `${SAMPLE_ID}/merged_output.mp3`,
    ),
  };
}

/** A sample job, for the documents' examples. */
function sampleJob(base: string): Json {
  return {
    job_id: SAMPLE_ID,
    kind: 'operation',
    name: 'merge-audios',
    status: 'succeeded',
    stage: 'succeeded',
    progress: 100,
    created_at: '2025-01-01T12:00:00.000Z',
    started_at: '2025-01-01T12:00:00.120Z',
    finished_at: '2025-01-01T12:00:04.870Z',
    result: { message: 'Audios merged successfully', output_file: `${base}/uploads/${SAMPLE_ID}/merged_output.mp3` },
    error: null,
    metadata: 'order 1234',
    webhook: { url: 'https://example.com/hooks/mediaflow', attempts: 1, last_status: 204, delivered_at: '2025-01-01T12:00:05.010Z' },
  };
}

/** The routes of jobs: status, events and cancellation. */
function jobRoutes(secured: boolean): Json {
  const security = secured ? { security: [{ apiKey: [] }] } : {};
  const jobContent = (example: Json) => ({ 'application/json': { schema: schemaRef('Job'), example } });
  const notFound = { $ref: '#/components/responses/JobNotFound' };
  const job = sampleJob(SAMPLE_BASE);
  return {
    '/jobs/{id}': {
      parameters: [parameterRef('JobId')],
      get: {
        operationId: 'getJob',
        summary: 'A job: its status, stage, progress, and its result or error',
        tags: ['jobs'],
        ...security,
        responses: { '200': { description: 'The job', content: jobContent(job) }, '404': notFound, ...errorRefs(['MF_ERR_AUTH']) },
      },
      delete: {
        operationId: 'cancelJob',
        summary: 'Cancel a queued or running job: its ffmpeg is stopped and its files removed',
        tags: ['jobs'],
        ...security,
        responses: {
          '200': {
            description: 'The job, now cancelled',
            content: jobContent({ ...job, status: 'cancelled', stage: 'cancelled', progress: 40, result: null, webhook: null }),
          },
          '404': notFound,
          '409': { description: 'The job has already finished (succeeded, failed or cancelled)', content: errorContent },
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
    },
    '/jobs/{id}/events': {
      parameters: [parameterRef('JobId')],
      get: {
        operationId: 'jobEvents',
        summary: "A job's changes as Server-Sent Events",
        description:
          'One event at each change of the job (progress at most every 500 ms), its `data:` line the Job object as JSON (see the Job schema); the stream ends after the job reaches succeeded, failed or cancelled.',
        tags: ['jobs'],
        ...security,
        responses: {
          '200': {
            description: 'An event stream of Job objects',
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'Events, each a `data:` line holding a Job object (JSON) and an empty line' },
                example: `data: ${JSON.stringify({ ...job, status: 'running', stage: 'process', progress: 42, finished_at: null, result: null, webhook: null })}\n\n`,
              },
            },
          },
          '404': notFound,
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
    },
  };
}

/** The routes mediaflow has besides its operations. */
function serverRoutes(registry: Registry, secured: boolean, metricsToken: boolean): Json {
  const security = secured ? { security: [{ apiKey: [] }] } : {};
  const nameParameter = { name: 'name', in: 'path', required: true, description: 'The pipeline: a file <name>.yaml, .yml or .json in the pipelines folder', schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' } };
  const anyObject = { type: 'object', additionalProperties: true };
  return {
    '/fonts': {
      get: {
        operationId: 'fonts',
        summary: 'The font families installed on the server: the values a caption `font` field may take',
        tags: ['server'],
        responses: {
          '200': {
            description: 'Family names as fontconfig knows them, sorted; read once per process (restart after installing fonts)',
            content: json({
              type: 'object',
              required: ['fonts'],
              properties: { fonts: { type: 'array', items: { type: 'string' }, examples: [['DejaVu Sans', 'Noto Sans', 'Noto Sans CJK JP']] } },
            }),
          },
        },
      },
    },
    '/health': {
      get: {
        operationId: 'health',
        summary: "The process's role, whether the job backend (Redis) and the storage answer, the ffmpeg and ffprobe in use, the queue, and the operations loaded",
        tags: ['server'],
        responses: Object.fromEntries(
          [
            ['200', 'Up: the job backend and the storage answer, and the data directory has MEDIAFLOW_MIN_FREE_DISK free'],
            ['503', 'Unavailable: the job backend (Redis) or the storage does not answer (`jobs.error` or `storage.error` says why), or the data directory has less than MEDIAFLOW_MIN_FREE_DISK free (`disk.ok` false); with `Retry-After`'],
          ].map(([status, description]) => [
            status,
            {
              description,
              content: json({
                type: 'object',
                required: ['status', 'role', 'jobs', 'storage', 'disk'],
                properties: {
                  status: { type: 'string', enum: [status === '200' ? 'ok' : 'unavailable'] },
                  role: { type: 'string', enum: ['api', 'api+worker'], description: '`api` with `--workers 0`' },
                  jobs: reachability({ backend: { type: 'string', enum: ['embedded', 'redis'] } }),
                  storage: reachability({ kind: { type: 'string', enum: ['local', 's3'] } }),
                  disk: {
                    type: 'object',
                    description: "Free space of the data directory's file system",
                    required: ['ok'],
                    properties: {
                      free_bytes: { type: 'integer' },
                      min_free_bytes: { type: 'integer', description: 'MEDIAFLOW_MIN_FREE_DISK (0: not checked)' },
                      ok: { type: 'boolean' },
                      error: { type: 'string' },
                    },
                  },
                  ffmpeg: anyObject,
                  ffprobe: anyObject,
                  queue: anyObject,
                  operations: { type: 'array', items: { type: 'string' } },
                },
              }),
            },
          ]),
        ),
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description: 'Needs `Authorization: Bearer <MEDIAFLOW_METRICS_TOKEN>` when the server has a metrics token, else the API key (as `X-API-Key` or a Bearer token) when it has one; open otherwise.',
        tags: ['server'],
        // Any one of these: the metrics token, or the API key in either header.
        ...(metricsToken || secured ? { security: [...(metricsToken ? [{ metricsToken: [] }] : []), ...(secured ? [{ apiKey: [] }, { apiKeyBearer: [] }] : [])] } : {}),
        responses: {
          '200': { description: 'Metrics in the Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...(metricsToken || secured ? errorRefs(['MF_ERR_AUTH']) : {}),
        },
      },
    },
    ...uploadRoutes(registry),
    '/pipelines': {
      get: {
        operationId: 'listPipelines',
        summary: 'The pipelines of the pipelines folder, with their inputs',
        tags: ['pipelines'],
        ...security,
        responses: { '200': { description: 'The pipelines', content: json({ type: 'object', properties: { pipelines: { type: 'array', items: anyObject } } }) }, ...errorRefs(['MF_ERR_AUTH']) },
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
          ...errorRefs(['MF_ERR_PARAM', 'MF_ERR_AUTH']),
        },
      },
      post: {
        operationId: 'runPipeline',
        summary: 'Run a pipeline with the fields as its inputs',
        tags: ['pipelines'],
        ...security,
        parameters: [nameParameter, ...JOB_PARAMETERS],
        requestBody: {
          required: true,
          description:
            "The pipeline's inputs as fields (see GET /pipelines/{name}/), in any of the three encodings; a field that is not one of its inputs (nor `webhook_url` or `metadata`) is a 400. With `webhook_url` or `Prefer: respond-async` the pipeline runs as a job (202).",
          content: {
            'multipart/form-data': { schema: { ...anyObject, properties: jobFields('form') } },
            'application/x-www-form-urlencoded': { schema: { ...anyObject, properties: jobFields('form') } },
            'application/json': { schema: { ...anyObject, properties: jobFields('json') } },
          },
        },
        responses: {
          '200': {
            description: "Done (a synchronous request): each result's URL",
            content: json({ type: 'object', required: ['message', 'outputs'], properties: { message: { type: 'string' }, outputs: { type: 'object', additionalProperties: true } } }),
          },
          '202': { $ref: '#/components/responses/Accepted' },
          '404': { description: 'No such pipeline', content: json({ $ref: '#/components/schemas/Error' }) },
          ...errorRefs(RUN_ERRORS),
        },
      },
    },
  };
}

const JOB_STATUS = { type: 'string', enum: [...JOB_STATUSES] };

/** The component schemas of jobs: `JobAccepted` (the 202 body) and `Job`. */
function jobSchemas(): Json {
  const dateTime = (description: string, nullable: boolean) => ({ type: nullable ? ['string', 'null'] : 'string', format: 'date-time', description });
  return {
    JobAccepted: {
      type: 'object',
      description: 'The answer of an asynchronous request (202)',
      required: ['job_id', 'status', 'status_url'],
      properties: {
        job_id: { type: 'string', format: 'uuid', description: "The job's id, a random UUID v4" },
        status: { ...JOB_STATUS, description: "`queued` for a new job; a request that repeats an Idempotency-Key gets the job's status now" },
        status_url: { type: 'string', format: 'uri', description: '`{base_url}/jobs/<job_id>`: GET it for the job, `/events` after it for its changes, DELETE it to cancel' },
      },
      examples: [{ job_id: SAMPLE_ID, status: 'queued', status_url: `${SAMPLE_BASE}/jobs/${SAMPLE_ID}` }],
    },
    Job: {
      type: 'object',
      description: 'An operation or pipeline run as a job: GET /jobs/{id}, each event of /jobs/{id}/events, and the body of the jobFinished webhook',
      required: ['job_id', 'kind', 'name', 'status', 'stage', 'progress', 'created_at', 'started_at', 'finished_at', 'result', 'error', 'metadata', 'webhook'],
      properties: {
        job_id: { type: 'string', format: 'uuid', description: "The job's id, a random UUID v4" },
        kind: { type: 'string', enum: ['operation', 'pipeline'] },
        name: { type: 'string', description: "The operation's name (as GET /health lists it) or the pipeline's" },
        status: { ...JOB_STATUS, description: 'succeeded, failed and cancelled are terminal' },
        stage: {
          type: 'string',
          description: "What the job is doing now, such as `download`, `probe`, `process` or `publish` (in a pipeline, prefixed by the step's name), and its status once it has finished",
        },
        progress: { type: 'integer', minimum: 0, maximum: 100, description: 'Percent done; it never goes down' },
        created_at: dateTime('When the job was accepted (ISO 8601, UTC)', false),
        started_at: dateTime('When it started running, or null', true),
        finished_at: dateTime('When it reached its terminal status, or null', true),
        result: {
          type: ['object', 'null'],
          description: "Exactly the synchronous success body once succeeded: an operation's `{message, <output field>: url}` (with `warnings` when there are some), a pipeline's `{message, outputs}`; else null",
          required: ['message'],
          properties: { message: { type: 'string' }, warnings: WARNINGS_SCHEMA },
          additionalProperties: true,
        },
        error: {
          type: ['object', 'null'],
          description:
            'Once failed, the status, text and code the synchronous request would have answered with; else null',
          required: ['status', 'error', 'code'],
          properties: {
            status: { type: 'integer', minimum: 400, maximum: 599 },
            error: { type: 'string' },
            code: { type: 'string', enum: Object.keys(ERRORS), description: 'As in an error answer (docs/errors.md)' },
          },
        },
        metadata: {
          type: ['string', 'object', 'null'],
          maxLength: MAX_METADATA_BYTES,
          additionalProperties: true,
          description: 'The `metadata` field of the request, unchanged, or null',
        },
        webhook: {
          type: ['object', 'null'],
          description: 'The delivery to `webhook_url`, or null when the request had none',
          required: ['url', 'attempts', 'last_status', 'delivered_at'],
          properties: {
            url: {
              type: 'string',
              description:
                'The `webhook_url` as scheme, host and path: its user info is left out and a query shows as `?(query redacted)` (it often holds the receiver\'s token). Deliveries go to the full URL.',
              examples: ['https://hooks.example.com/zap?(query redacted)'],
            },
            attempts: { type: 'integer', minimum: 0, description: 'Deliveries tried so far' },
            last_status: { type: ['integer', 'null'], description: "The HTTP status of the last attempt's answer, or null (none yet, or no answer)" },
            delivered_at: dateTime('When a 2xx answer came, or null', true),
          },
        },
      },
    },
  };
}

/** The top-level `webhooks` of the document: `jobFinished`, the POST to a job's `webhook_url`. */
function webhooks(): Json {
  return {
    jobFinished: {
      post: {
        operationId: 'jobFinished',
        summary: 'A job succeeded, failed or was cancelled: mediaflow POSTs it to its webhook_url',
        description:
          'The body is the Job as JSON. A 2xx answer within 15 s is a delivery; anything else is retried with exponential back-off and jitter, across restarts: the first retry after MEDIAFLOW_WEBHOOK_BACKOFF (default 5m), each later one after about twice the previous delay, MEDIAFLOW_WEBHOOK_ATTEMPTS attempts in all (default 8). Redirects are not followed. ' +
          'With MEDIAFLOW_WEBHOOK_SECRET (`whsec_` + base64) set, verify `webhook-signature` as the Standard Webhooks specification says: the base64 HMAC-SHA256, keyed with the decoded secret, of `<webhook-id>.<webhook-timestamp>.<body>`.',
        tags: ['jobs'],
        parameters: [
          { name: 'webhook-id', in: 'header', required: true, description: "The delivery's id, the same on every attempt, so a receiver can drop repeats (Standard Webhooks)", schema: { type: 'string' } },
          { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix time of the attempt, in seconds (part of what is signed)', schema: { type: 'string', pattern: '^[0-9]+$' } },
          {
            name: 'webhook-signature',
            in: 'header',
            required: false,
            description:
              'Present when the server has MEDIAFLOW_WEBHOOK_SECRET set: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` (Standard Webhooks; receivers accept any of several space-separated signatures)',
            schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: schemaRef('Job'), example: sampleJob('https://mediaflow.example.com') } } },
        responses: {
          '2XX': { description: 'Delivered: no more attempts' },
          default: { description: 'Not delivered (as is no answer within 15 s, or a redirect): retried later' },
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document for a registry (and, when it is given, the server's configuration). */
export function openApiDocument(
  registry: Registry,
  config?: Pick<Config, 'apiKey' | 'publicUrl'> & Partial<Pick<Config, 'apiKeys' | 'bodyLimit' | 'metricsToken'>>,
): Json {
  const secured = Boolean(config?.apiKey) || Boolean(config?.apiKeys?.length);
  const third = registry.list().filter((plugin) => registry.sourceOf(plugin.name) !== 'built-in');
  const paths: Json = {};
  for (const plugin of registry.list()) paths[plugin.path] = operation(plugin, registry, secured, config?.bodyLimit);
  Object.assign(paths, serverRoutes(registry, secured, Boolean(config?.metricsToken)), jobRoutes(secured));
  return {
    openapi: '3.1.0',
    info: {
      title: 'mediaflow',
      version: VERSION,
      description:
        'Media processing by URL with ffmpeg. Every operation is a POST taking multipart/form-data, application/x-www-form-urlencoded or application/json with the same field names, with or without the trailing slash. Lists are comma-separated. Errors are always `{"error": "<text>", "code": "MF_ERR_..."}`, the code naming the condition.' +
        ' An operation or pipeline with a `webhook_url` field or the header `Prefer: respond-async` runs as a job: the answer is 202 with the job\'s URL, which GET /jobs/{id} reads, /jobs/{id}/events follows and DELETE cancels; the jobFinished webhook reports its end.' +
        (third.length > 0 ? ` Operations from plugins: ${third.map((plugin) => plugin.name).join(', ')}.` : ''),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    ...(config?.publicUrl ? { servers: [{ url: config.publicUrl }] } : {}),
    tags: [
      { name: 'operations', description: 'The built-in operations' },
      ...(third.length > 0 ? [{ name: 'plugins', description: 'Operations added by plugins' }] : []),
      { name: 'pipelines', description: 'Pipelines of operations, defined in files' },
      { name: 'jobs', description: 'Operations and pipelines run asynchronously: status, events, cancellation and the webhook' },
      { name: 'server', description: 'Health, metrics and outputs' },
    ],
    paths,
    webhooks: webhooks(),
    components: {
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'code'],
          properties: {
            error: { type: 'string', description: 'What went wrong; never a stack trace or a server path' },
            code: {
              type: 'string',
              enum: Object.keys(ERRORS),
              description: 'The stable code of the condition (docs/errors.md): branch on it, not on the text',
            },
          },
        },
        ...jobSchemas(),
      },
      parameters: {
        Prefer: {
          name: 'Prefer',
          in: 'header',
          required: false,
          description: '`respond-async` (RFC 7240) runs the request as a job and answers 202 (as a `webhook_url` field does); without it (or the field) the request is answered when done',
          schema: { type: 'string' },
          example: 'respond-async',
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            "A second request with the same key and the same fields gets the first request's answer (202 with the same job_id, or the same synchronous answer) and runs nothing; the same key with other fields is a 422. A key lives as long as its job's record.",
          schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
          example: 'order-1234-thumbnail',
        },
        JobId: { name: 'id', in: 'path', required: true, description: "The job's id (job_id)", schema: { type: 'string', format: 'uuid' } },
        Range: {
          name: 'Range',
          in: 'header',
          required: false,
          description: 'Bytes to read, such as `bytes=0-1023`; the answer is then 206 Partial Content',
          schema: { type: 'string', pattern: '^bytes=' },
          example: 'bytes=0-1023',
        },
      },
      responses: {
        Accepted: {
          description: 'Accepted as a job (a `webhook_url` field or `Prefer: respond-async`), once the fields are valid: follow `status_url`',
          headers: { Location: { required: true, description: 'The job\'s URL, as `status_url`', schema: { type: 'string', format: 'uri' } } },
          content: json(schemaRef('JobAccepted')),
        },
        JobNotFound: { description: 'No such job (unknown, or its record expired with its outputs)', content: errorContent },
        ...Object.fromEntries(
          [...CODES_BY_STATUS.keys()].map((status) => [responseName(status), errorResponse(status)]),
        ),
      },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Needed when the server has MEDIAFLOW_API_KEY or MEDIAFLOW_API_KEYS set' },
        apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'The API key as a Bearer token: taken by /metrics only (what Prometheus sends)' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'MEDIAFLOW_METRICS_TOKEN, for /metrics' },
      },
    },
  };
}

/** Serves the document at `/openapi.json` (and `/docs/json`) and Swagger UI at `/docs`. */
export async function registerApiDocs(app: FastifyInstance, registry: Registry, config: Config): Promise<void> {
  const document = openApiDocument(registry, config);
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: SERVER_PATHS.docs, staticCSP: true, uiConfig: { docExpansion: 'list', deepLinking: true }, ...DOCS_PAGE });
  app.get(SERVER_PATHS.openapi, async () => app.swagger());
}
