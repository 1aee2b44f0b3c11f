import { ENGINE_NAMES } from '../../engine/contract/speech.js';
import { errorRefs } from './error-responses.js';
import { anyObject, json, type Json } from './shared.js';

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

/** The routes of the server itself: fonts, voices, health and metrics. */
export function serverRoutes(secured: boolean, metricsToken: boolean): Json {
  return {
    '/fonts': {
      get: {
        operationId: 'fonts',
        summary: 'The font families installed on the server: the values a caption `font` field may take',
        tags: ['server'],
        responses: {
          '200': {
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
      },
    },
    '/voices': {
      get: {
        operationId: 'voices',
        summary: "The voices of text to speech installed on the server: the values `/speak/`'s `voice` may take",
        description:
          'Every voice of every engine that speaks here, the best engine first (neural voices, espeak-ng, flite); ' +
          'its `id` is what `voice` takes. Looked up once per process. Open, like /fonts: it describes the server.',
        tags: ['server'],
        responses: {
          '200': {
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
      },
    },
    '/health': {
      get: {
        operationId: 'health',
        summary:
          "The process's role, whether the job backend (Redis) and the storage answer, the ffmpeg and ffprobe " +
          'in use, the queue, the operations loaded, and whether transcription and which voices are available',
        tags: ['server'],
        responses: Object.fromEntries(
          [
            [
              '200',
              'Up: the job backend and the storage answer, and the data directory has MEDIAFLOW_MIN_FREE_DISK free',
            ],
            [
              '503',
              'Unavailable: the job backend (Redis) or the storage does not answer (`jobs.error` or ' +
                '`storage.error` says why), or the data directory has less than MEDIAFLOW_MIN_FREE_DISK free ' +
                '(`disk.ok` false); with `Retry-After`',
            ],
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
        description:
          'Needs `Authorization: Bearer <MEDIAFLOW_METRICS_TOKEN>` when the server has a metrics token, else ' +
          'the API key (as `X-API-Key` or a Bearer token) when it has one; open otherwise.',
        tags: ['server'],
        // Any one of these: the metrics token, or the API key in either header.
        ...(metricsToken || secured
          ? {
              security: [
                ...(metricsToken ? [{ metricsToken: [] }] : []),
                ...(secured ? [{ apiKey: [] }, { apiKeyBearer: [] }] : []),
              ],
            }
          : {}),
        responses: {
          '200': {
            description: 'Metrics in the Prometheus text format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...(metricsToken || secured ? errorRefs(['MF_ERR_AUTH']) : {}),
        },
      },
    },
  };
}
