import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import cors from '@fastify/cors';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Binaries } from '../engine/exec/binaries.js';
import { apiKeysOf, type Config } from '../engine/config.js';
import { serverServices } from '../runtime.js';
import type { Engine } from '../engine/run/engine.js';
import { paramError } from '../engine/errors.js';
import { checkNesting } from '../engine/nesting.js';
import { contentTypeOf } from '../engine/storage/media-types.js';
import type { Registry } from '../engine/plugins/registry.js';
import type { OutputStore } from '../engine/storage/storage.js';
import type { JobService } from '../jobs/service.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { apiKeyCheck, keyOwner, metricsCheck } from './auth.js';
import { UploadGate, type UploadContext } from './file-parts.js';
import { registerFilesRoute } from './files-route.js';
import { registerJobRoutes } from './job-routes.js';
import { registerMcpRoutes } from './mcp-route.js';
import type { SubmitContext } from './job-submission.js';
import { registerOperationRoutes } from './operation-routes.js';
import { registerServerRoutes } from './server-routes.js';
import { AJV_OPTIONS, validationError } from './validation.js';
import { registerPipelineRoutes } from './pipeline-routes.js';
import { registerTemplatesRoute } from './templates-route.js';
import { createMetrics } from './metrics.js';
import { registerApiDocs } from './openapi/docs-page.js';
import { registerStudio } from './studio-route.js';
import { registerTemplateDocumentRoute } from './template-document-route.js';
import { clientErrorHandler, frameworkErrors, installErrorHandler } from './error-handler.js';
import { registerUrlencoded } from './urlencoded.js';
import { limitConnections, timeLimitOptions, uploadsAtOnce } from './connections.js';
import { installPressureCheck } from './pressure.js';

export interface ServerOptions {
  config: Config;
  registry: Registry;
  binaries?: Binaries;
  /** Fastify's logger options; `false` for silence. */
  logger?: boolean | { level: string };
}

/** `{base_url}`: the configured public URL, or the scheme and host the request came in on. */
function baseUrl(request: FastifyRequest, config: Config): string {
  return config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** The Fastify app: one POST route per registered operation, uploads, health. Not yet listening. */
export async function buildServer(
  options: ServerOptions,
): Promise<{ app: FastifyInstance; engine: Engine; jobs: JobService; store: OutputStore }> {
  const { config, registry } = options;
  const metrics = createMetrics();
  const uploadsDir = path.join(config.dataDir, 'uploads');
  await mkdir(uploadsDir, { recursive: true });

  const app = Fastify({
    logger: options.logger ?? { level: 'info' },
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
    // Paths like /merge-audios and /merge-audios/ both reach the route.
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: () => crypto.randomUUID(),
    // A URL that does not decode, a request not received in time or not parseable get the same
    // `{error, code}` body as every other error.
    frameworkErrors,
    clientErrorHandler,
    ...timeLimitOptions(config),
    // What a route's schema declares is checked (validation.ts), and a refusal is a 400 in the `{error, code}` shape.
    ajv: AJV_OPTIONS,
    schemaErrorFormatter: validationError,
  });
  limitConnections(app.server, config, app.log);
  installErrorHandler(app, config);
  // Answers are JSON.stringify'd as before routes had schemas: a response schema documents a body, and Fastify's
  // serializer would drop every field it does not list.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // GET /openapi.json and /docs, open without the API key (they hold no data): made from the schemas of the routes
  // registered after this.
  await registerApiDocs(app, registry, config);
  const secured = apiKeysOf(config).length > 0;
  const runtime = { config, registry, logger: app.log, observer: metrics.observer };
  const { engine, store, workspaces, binaries, jobs, voices, speech } = await serverServices(
    { ...runtime, ...(options.binaries ? { binaries: options.binaries } : {}) },
    metrics.jobObserver,
  );
  // Any client may give a webhook_url: unsigned, a receiver cannot tell this server's deliveries
  // from forged ones sent by whoever learnt its URL.
  if (!config.webhookSecret) {
    app.log.warn(
      'webhooks are sent unsigned: set MEDIAFLOW_WEBHOOK_SECRET so receivers can verify them (docs/security.md)',
    );
  }
  metrics.watchJobs(jobs);
  // Browsers on the listed origins may call the API (off unless MEDIAFLOW_CORS_ORIGINS lists some).
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'DELETE'],
      // A script reads the job's URL of a 202 and when to retry a 503.
      exposedHeaders: ['Location', 'Retry-After'],
      maxAge: 600,
    });
  }
  metrics.install(app, metricsCheck(config), { metricsToken: Boolean(config.metricsToken), secured });
  // Refuse work with a 503 while the event loop lags or the heap is nearly full, rather than fall over.
  installPressureCheck(app, config.maxEventLoopDelayMs);
  // Fastify parses text/plain by default; a plain-text body holds no fields, so it is a 415 like
  // any type other than the three encodings.
  app.removeContentTypeParser('text/plain');
  registerUrlencoded(app, config.bodyLimit);
  // Every parsed body, on every route, before any code walks it.
  app.addHook('preValidation', async (request) => checkNesting(request.body));
  // Files count against the input limits as they are streamed to disk (file-parts.ts); the parser's
  // own size limit only stands behind that count. As many files as a job may have inputs.
  await app.register(multipart, {
    limits: {
      fieldSize: config.bodyLimit,
      fields: 200,
      parts: 200 + config.maxInputs,
      files: config.maxInputs,
      fileSize: config.maxInputBytes + 1,
    },
  });
  await app.register(fastifyStatic, {
    root: uploadsDir,
    prefix: `${SERVER_PATHS.uploads}/`,
    index: false,
    list: false,
    // Files being published carry a leading dot; they are never served.
    dotfiles: 'ignore',
    serveDotFiles: false,
    decorateReply: false,
    setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
  });
  // Subtitles get the media-type table's type (the `mime` table lacks ASS) and their UTF-8 charset.
  app.addHook('onSend', async (request, reply, payload) => {
    const file = request.url.split('?')[0]!;
    if (
      request.url.startsWith(`${SERVER_PATHS.uploads}/`) &&
      /\.(srt|vtt|ass)$/i.test(file) &&
      reply.statusCode < 300
    ) {
      void reply.header('content-type', contentTypeOf(file));
    }
    return payload;
  });

  registerServerRoutes(app, { config, registry, binaries, jobs, store, voices, speech });

  // The key is checked when the request arrives, before its body is read or parsed: a client without
  // it gets a 401 whatever it sends, and costs no parsing.
  const checkKey = apiKeyCheck(config);
  const ownerOf = keyOwner(config);
  const gate = new UploadGate(uploadsAtOnce(config));
  const uploads: UploadContext = { config, store, workspaces, ffprobe: binaries.ffprobe, gate };
  const submit: SubmitContext = { jobs, config, uploads, baseUrl: (request) => baseUrl(request, config), ownerOf };
  registerFilesRoute(app, { uploads, onRequest: checkKey, baseUrl: submit.baseUrl, secured });
  registerOperationRoutes(app, { registry, onRequest: checkKey, submit, secured }, config.bodyLimit);
  await registerPipelineRoutes(app, { config, registry, onRequest: checkKey, submit, secured });
  registerTemplatesRoute(app, { templatesDir: config.templatesDir, onRequest: checkKey, secured });
  registerJobRoutes(app, jobs, checkKey, ownerOf, secured);
  registerTemplateDocumentRoute(app, { templatesDir: config.templatesDir, onRequest: checkKey, secured });
  // The studio page (docs/studio.md): open like /docs, its API calls carry the key.
  if (config.studio) registerStudio(app);
  // Every operation and pipeline as an MCP tool, over streamable HTTP (docs/mcp.md).
  registerMcpRoutes(app, { config, registry, jobs, onRequest: checkKey, submit, secured });
  if (config.dashboard) {
    const queues = jobs.backend.bullQueues;
    if (!queues || !config.apiKey)
      throw paramError(
        'MEDIAFLOW_DASHBOARD needs MEDIAFLOW_REDIS_URL (the queues it shows) and MEDIAFLOW_API_KEY (it is never open)',
      );
    // Bull Board loads only for the dashboard.
    const { registerDashboard } = await import('./dashboard.js');
    await registerDashboard(app, queues, config.apiKey);
  }
  // What a stopped process left: queued and interrupted jobs run, owed webhooks go out.
  app.addHook('onClose', () => jobs.shutdown(0));
  // Redis keeps its queue itself, and BullMQ gives a dead worker's jobs to another.
  if (jobs.backend.kind === 'embedded') {
    const recovered = await jobs.recover();
    if (Object.values(recovered).some((count) => count > 0))
      app.log.info(recovered, 'picked up jobs left by an earlier run');
  }
  return { app, engine, jobs, store };
}
