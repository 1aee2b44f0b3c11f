import type { FastifyInstance } from 'fastify';
import type { Config } from '../engine/config.js';
import { ENGINE_NAMES } from '../engine/contract/speech.js';
import type { Binaries } from '../engine/exec/binaries.js';
import { binaryVersion } from '../engine/exec/ffmpeg.js';
import type { Registry } from '../engine/plugins/registry.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { speechStatus } from '../engine/speech/recognise.js';
import { diskSpace } from '../engine/storage/disk-space.js';
import type { OutputStore } from '../engine/storage/storage.js';
import { installedFonts } from '../engine/subtitles/fonts.js';
import type { JobService } from '../jobs/service.js';
import type { ServerServices } from '../runtime.js';
import { anyObject, json, type Json } from './openapi/shared.js';

/**
 * The routes that describe the server itself, open like /docs (they hold no data): `GET /health`, and the values some
 * fields may take, `GET /fonts` and `GET /voices`.
 */

export interface ServerRouteOptions {
  config: Config;
  registry: Registry;
  binaries: Binaries;
  jobs: JobService;
  store: OutputStore;
  voices: ServerServices['voices'];
  speech: ServerServices['speech'];
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

/** A dependency in /health: what it is, whether it answers, and why not. */
const reachability = (kind: Json): Json => ({
  type: 'object',
  required: ['ok'],
  properties: { ...kind, ok: { type: 'boolean' }, error: { type: 'string' } },
});

/** The engines of text to speech. */
const engineName: Json = { type: 'string', enum: [...ENGINE_NAMES] };

/** One engine of text to speech in /health (EngineStatus). */
const voiceEngine: Json = {
  type: 'object',
  required: ['engine', 'available', 'voices'],
  properties: {
    engine: engineName,
    available: { type: 'boolean', description: 'Whether it speaks here' },
    voices: { type: 'integer', description: 'How many voices it has here' },
    error: { type: 'string', description: 'Why it cannot speak (or some of its models), and what to install or set' },
  },
};

/** The body of /health, up (200) or not (503). */
function healthBody(status: 'ok' | 'unavailable'): Json {
  return json({
    type: 'object',
    required: ['status', 'role', 'jobs', 'storage', 'disk'],
    properties: {
      status: { type: 'string', enum: [status] },
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
      transcription: {
        type: 'object',
        description:
          "Whether `/transcribe/` works here: whisper.cpp's binding installed and " +
          'MEDIAFLOW_WHISPER_MODEL a usable model; `model` is its file name, `error` why it does ' +
          'not work (what to install or set)',
        required: ['available', 'model'],
        properties: {
          available: { type: 'boolean' },
          model: { type: ['string', 'null'] },
          error: { type: 'string' },
        },
      },
      voices: {
        type: 'array',
        description: 'The engines of text to speech (`/speak/`), best first: whether each speaks here',
        items: voiceEngine,
      },
    },
  });
}

const HEALTH_DOCS = {
  operationId: 'health',
  summary:
    "The process's role, whether the job backend (Redis) and the storage answer, the ffmpeg and ffprobe " +
    'in use, the queue, the operations loaded, and whether transcription and which voices are available',
  tags: ['server'],
  response: {
    200: {
      description:
        'Up: the job backend and the storage answer, and the data directory has MEDIAFLOW_MIN_FREE_DISK free',
      content: healthBody('ok'),
    },
    503: {
      description:
        'Unavailable: the job backend (Redis) or the storage does not answer (`jobs.error` or ' +
        '`storage.error` says why), or the data directory has less than MEDIAFLOW_MIN_FREE_DISK free ' +
        '(`disk.ok` false); with `Retry-After`',
      content: healthBody('unavailable'),
    },
  },
};

const FONTS_DOCS = {
  operationId: 'fonts',
  summary: 'The font families installed on the server: the values a caption `font` field may take',
  tags: ['server'],
  response: {
    200: {
      description:
        'Family names as fontconfig knows them, sorted; read once per process (restart after installing fonts)',
      content: json({
        type: 'object',
        required: ['fonts'],
        properties: {
          fonts: {
            type: 'array',
            items: { type: 'string' },
            examples: [['DejaVu Sans', 'Noto Sans', 'Noto Sans CJK JP']],
          },
        },
      }),
    },
  },
};

const VOICES_DOCS = {
  operationId: 'voices',
  summary: "The voices of text to speech installed on the server: the values `/speak/`'s `voice` may take",
  description:
    'Every voice of every engine that speaks here, the best engine first (neural voices, espeak-ng, flite); ' +
    'its `id` is what `voice` takes. Looked up once per process. Open, like /fonts: it describes the server.',
  tags: ['server'],
  response: {
    200: {
      description: 'The voices, engine by engine',
      content: json({
        type: 'object',
        required: ['voices'],
        properties: {
          voices: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'engine', 'language', 'name'],
              properties: {
                id: { type: 'string', description: '<engine>:<name>', examples: ['espeak:en-us'] },
                engine: engineName,
                language: { type: 'string', description: 'A BCP 47 tag', examples: ['en-US'] },
                name: { type: 'string', examples: ['en-us'] },
              },
            },
          },
        },
      }),
    },
  },
};

/** Registers `GET /health`, `GET /fonts` and `GET /voices`. */
export function registerServerRoutes(app: FastifyInstance, options: ServerRouteOptions): void {
  const { config, registry, binaries, jobs, store, voices, speech } = options;
  const versions = Promise.all([binaryVersion(binaries.ffmpeg), binaryVersion(binaries.ffprobe)]);
  app.get(SERVER_PATHS.health, { schema: HEALTH_DOCS }, async (_request, reply) => {
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
  app.get(SERVER_PATHS.fonts, { schema: FONTS_DOCS }, async () => ({ fonts: installedFonts() }));
  // The voices /speak/'s `voice` may name; open for the same reason.
  app.get(SERVER_PATHS.voices, { schema: VOICES_DOCS }, async () => ({ voices: await voices.list() }));
}
