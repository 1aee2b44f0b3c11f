import { createHash, timingSafeEqual } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import underPressure from '@fastify/under-pressure';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Binaries } from '../engine/binaries.js';
import type { Config } from '../engine/config.js';
import { createContainer, TOKENS } from '../engine/container.js';
import type { Engine } from '../engine/engine.js';
import { MediaflowError } from '../engine/errors.js';
import { binaryVersion } from '../engine/ffmpeg.js';
import type { Registry } from '../engine/registry.js';
import type { JobQueue } from '../engine/queue.js';
import { readFields } from './body.js';
import { createMetrics } from './metrics.js';
import { installErrorHandler } from './error-handler.js';

export interface ServerOptions {
  config: Config;
  registry: Registry;
  binaries?: Binaries;
  /** Fastify's logger options; `false` for silence. */
  logger?: boolean | { level: string };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time check of the X-API-Key header against the configured key. */
function hasValidKey(request: FastifyRequest, key: string): boolean {
  const given = request.headers['x-api-key'];
  return typeof given === 'string' && timingSafeEqual(digest(given), digest(key));
}

/** `{base_url}`: the configured public URL, or the scheme and host the request came in on. */
function baseUrl(request: FastifyRequest, config: Config): string {
  return config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** The Fastify app: one POST route per registered operation, uploads, health. Not yet listening. */
export async function buildServer(options: ServerOptions): Promise<{ app: FastifyInstance; engine: Engine }> {
  const { config, registry } = options;
  const metrics = createMetrics();
  const container = createContainer({ config, registry, observer: metrics.observer, ...(options.binaries ? { binaries: options.binaries } : {}) });
  const engine = container.resolve<Engine>(TOKENS.Engine);
  const queue = container.resolve<JobQueue>(TOKENS.Queue);
  metrics.watchQueue(queue);
  const binaries = container.resolve<Binaries>(TOKENS.Binaries);
  const uploads = path.join(config.dataDir, 'uploads');
  await mkdir(uploads, { recursive: true });

  const app = Fastify({
    logger: options.logger ?? { level: 'info' },
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
    // Paths like /merge-audios and /merge-audios/ both reach the route.
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: () => crypto.randomUUID(),
  });
  installErrorHandler(app, config.bodyLimit);
  metrics.install(app);
  // Refuse work with a 503 while the event loop lags or the heap is nearly full, rather than fall over.
  await app.register(underPressure, {
    maxEventLoopDelay: 1000,
    maxHeapUsedBytes: Math.floor(v8.getHeapStatistics().heap_size_limit * 0.9),
    retryAfter: 10,
  });
  await app.register(formbody, { bodyLimit: config.bodyLimit });
  await app.register(multipart, {
    limits: { fieldSize: config.bodyLimit, fields: 200, parts: 201, files: 1, fileSize: 0 },
  });
  await app.register(fastifyStatic, {
    root: uploads,
    prefix: '/uploads/',
    index: false,
    list: false,
    // Files being published carry a leading dot; they are never served.
    dotfiles: 'ignore',
    serveDotFiles: false,
    decorateReply: false,
    setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
  });

  const versions = Promise.all([binaryVersion(binaries.ffmpeg), binaryVersion(binaries.ffprobe)]);
  app.get('/health', async () => {
    const [ffmpeg, ffprobe] = await versions;
    return {
      status: 'ok',
      ffmpeg: { version: ffmpeg, source: binaries.ffmpegSource },
      ffprobe: { version: ffprobe, source: binaries.ffprobeSource },
      queue: { waiting: queue.waiting, running: queue.running, concurrency: config.concurrency, max_waiting: config.maxQueue },
      operations: registry.list().map((p) => p.name),
    };
  });

  for (const plugin of registry.list()) {
    app.post(plugin.path, async (request, reply) => {
      if (config.apiKey && !hasValidKey(request, config.apiKey)) {
        throw new MediaflowError('MF_ERR_AUTH', 'Invalid or missing API key');
      }
      const fields = await readFields(request);
      // A client that hangs up takes its job off the queue, or stops its ffmpeg.
      const controller = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) controller.abort(new DOMException('Client disconnected', 'AbortError'));
      };
      reply.raw.on('close', onClose);
      try {
        const result = await engine.run(plugin.name, fields, { signal: controller.signal });
        request.log.info({ job: result.id, operation: result.operation, timings: result.timings }, 'job finished');
        return { message: result.message, [result.field]: `${baseUrl(request, config)}/uploads/${result.path}` };
      } finally {
        reply.raw.off('close', onClose);
      }
    });
  }
  return { app, engine };
}
