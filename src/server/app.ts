import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import cors from '@fastify/cors';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Binaries } from '../engine/exec/binaries.js';
import { apiKeysOf, type Config } from '../engine/config.js';
import { serverServices } from '../runtime.js';
import { diskSpace } from '../engine/storage/disk-space.js';
import type { Engine } from '../engine/run/engine.js';
import { MediaflowError, paramError } from '../engine/errors.js';
import { checkNesting } from '../engine/nesting.js';
import { inputSpecOf, paramMarked, VALUES_KEYWORD } from '../engine/contract/plugin.js';
import { binaryVersion } from '../engine/exec/ffmpeg.js';
import { installedFonts } from '../engine/subtitles/fonts.js';
import { speechStatus } from '../engine/speech/recognise.js';
import { contentTypeOf } from '../engine/storage/media-types.js';
import type { Registry } from '../engine/plugins/registry.js';
import type { OutputStore } from '../engine/storage/storage.js';
import type { JobService } from '../jobs/service.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { apiKeyCheck, keyOwner, metricsCheck } from './auth.js';
import { JOB_FIELD_NAMES } from './limits.js';
import { UploadGate, type UploadContext } from './file-parts.js';
import { registerFilesRoute } from './files-route.js';
import { registerJobRoutes } from './job-routes.js';
import { registerMcpRoutes } from './mcp-route.js';
import { submitJob, type SubmitContext } from './job-submission.js';
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

/** Whether a dependency answers, and why not. */
async function reach(check: () => Promise<void>): Promise<{ ok: boolean; error?: string }> {
  try {
    await check();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
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
  });
  limitConnections(app.server, config, app.log);
  installErrorHandler(app, config);
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
  metrics.install(app, metricsCheck(config));
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

  const versions = Promise.all([binaryVersion(binaries.ffmpeg), binaryVersion(binaries.ffprobe)]);
  app.get(SERVER_PATHS.health, async (_request, reply) => {
    const [[ffmpeg, ffprobe], backend, storage, disk, voiceEngines] = await Promise.all([
      versions,
      reach(() => jobs.backend.ping()),
      reach(() => store.check()),
      // The code only (ENOENT, EACCES): the system's message names the data directory, and /health is open.
      diskSpace(config.dataDir, config.minFreeDiskBytes).catch((error: NodeJS.ErrnoException) => ({
        ok: false,
        error: `cannot measure free space (${error.code ?? 'unknown'})`,
      })),
      voices.status(),
    ]);
    const depth = backend.ok ? await jobs.queue.depth().catch(() => undefined) : undefined;
    // Low disk is unavailable, not degraded: a job taken now would fail part way with a 507.
    const healthy = backend.ok && storage.ok && disk.ok;
    if (!healthy) void reply.status(503).header('retry-after', '5');
    return {
      status: healthy ? 'ok' : 'unavailable',
      role: jobs.backend.works ? 'api+worker' : 'api',
      jobs: { backend: jobs.backend.kind, ...backend },
      storage: { kind: store.servedHere ? 'local' : 's3', ...storage },
      disk,
      ffmpeg: { version: ffmpeg, source: binaries.ffmpegSource },
      ffprobe: { version: ffprobe, source: binaries.ffprobeSource },
      queue: { ...depth, concurrency: config.concurrency, max_waiting: config.maxQueue },
      operations: registry.list().map((p) => p.name),
      // Whether /transcribe/ works here (binding and model), and the model's file name; the model file is read once.
      transcription: speechStatus(speech),
      // Which engines of text to speech speak here, with how many voices, or why not (looked up once).
      voices: voiceEngines,
    };
  });

  // The families a caption `font` may name; open like /health (it describes the server, it holds no data).
  app.get(SERVER_PATHS.fonts, async () => ({ fonts: installedFonts() }));
  // The voices /speak/'s `voice` may name; open for the same reason.
  app.get(SERVER_PATHS.voices, async () => ({ voices: await voices.list() }));

  // The key is checked when the request arrives, before its body is read or parsed: a client without
  // it gets a 401 whatever it sends, and costs no parsing.
  const checkKey = apiKeyCheck(config);
  const ownerOf = keyOwner(config);
  const gate = new UploadGate(uploadsAtOnce(config));
  const uploads: UploadContext = { config, store, workspaces, ffprobe: binaries.ffprobe, gate };
  const submit: SubmitContext = { jobs, config, uploads, baseUrl: (request) => baseUrl(request, config), ownerOf };
  registerFilesRoute(app, { uploads, onRequest: checkKey, baseUrl: submit.baseUrl });
  for (const plugin of registry.list()) {
    const inputFields = Object.entries(plugin.params.properties).flatMap(([key, schema]) =>
      inputSpecOf(schema) ? [key] : [],
    );
    // An operation of named values takes a form's other fields as values, and a file part of another name as one.
    const ownFields = paramMarked(plugin.params, VALUES_KEYWORD)
      ? [...Object.keys(plugin.params.properties), ...JOB_FIELD_NAMES]
      : undefined;
    app.post(plugin.path, { onRequest: checkKey }, (request, reply) =>
      submitJob(request, reply, 'operation', plugin.name, submit, inputFields, ownFields),
    );
    // Another method on an operation's path is the wrong method, not a missing route (HEAD comes with GET).
    app.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url: plugin.path,
      handler: async (request, reply) => {
        void reply.header('allow', 'POST');
        throw new MediaflowError(
          'MF_ERR_METHOD',
          `Method ${request.method} is not allowed on ${plugin.path}: send a POST with the fields`,
        );
      },
    });
  }
  await registerPipelineRoutes(app, { config, registry, onRequest: checkKey, submit });
  registerTemplatesRoute(app, { templatesDir: config.templatesDir, onRequest: checkKey });
  registerJobRoutes(app, jobs, checkKey, ownerOf, apiKeysOf(config).length > 0);
  registerTemplateDocumentRoute(app, { templatesDir: config.templatesDir, onRequest: checkKey });
  // The studio page (docs/studio.md): open like /docs, its API calls carry the key.
  if (config.studio) registerStudio(app);
  // Every operation and pipeline as an MCP tool, over streamable HTTP (docs/mcp.md).
  registerMcpRoutes(app, { config, registry, jobs, onRequest: checkKey, submit });
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
  // GET /openapi.json and /docs: made from the same registry, open without the API key (they hold no data).
  await registerApiDocs(app, registry, config);
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
