import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MediaflowError } from './errors.js';
import { BINDING_SETTINGS, type BindingSetting } from './speech/binding.js';

/** mediaflow's settings: the table of docs/configuration.md, plus the limits of the hostile-input work. */
export interface Config {
  port: number;
  host: string;
  /** `<dataDir>/uploads` holds outputs, `<dataDir>/work` the jobs' workspaces. */
  dataDir: string;
  /** Base of returned URLs; from the request when unset. */
  publicUrl?: string;
  trustProxy: boolean;
  allowPrivateUrls: boolean;
  /** Host names that may be fetched even when private addresses are refused; empty allows any public host. */
  allowedHosts: string[];
  concurrency: number;
  maxQueue: number;
  apiKey?: string;
  /** More API keys; with two or more keys in all, each key sees only the jobs it submitted. */
  apiKeys: string[];
  maxInputBytes: number;
  maxInputs: number;
  /** Milliseconds for one input's whole download. */
  downloadTimeoutMs: number;
  /** Milliseconds an input may take to send its first byte. */
  firstByteTimeoutMs: number;
  /** Bytes all inputs of one request may add up to. */
  maxRequestBytes: number;
  /** Largest subtitle input, in bytes: its text is decoded and parsed whole, unlike media. */
  maxSubtitleBytes: number;
  /** Largest text field (generate-subtitles' `text`...), in bytes of UTF-8. */
  maxTextBytes: number;
  /** Milliseconds one ffmpeg run may take. */
  jobTimeoutMs: number;
  /** Milliseconds a whole job may take once it has its slot: all its runs, steps and parts together; 0: no limit. */
  jobTotalTimeoutMs: number;
  maxPixels: number;
  /** Milliseconds of media one input may last. */
  maxDurationMs: number;
  /** Clips one render's edit document may hold (docs/render.md). */
  maxClips: number;
  /** Split long frame-by-frame encodes into parts encoded in parallel (docs/fanout.md). */
  fanout: boolean;
  /** Milliseconds of input each part covers, about: parts end at the first keyframe past it. */
  partMs: number;
  /** Only an encode of more input than this, in milliseconds, is split. */
  fanoutMinMs: number;
  /** pino level of the server's JSON logs. */
  logLevel: string;
  /** Milliseconds after which outputs are deleted; 0 keeps them. */
  retentionMs: number;
  /** Largest request body, in bytes. */
  bodyLimit: number;
  /** Bytes of downloaded inputs kept for reuse by later jobs; 0 turns the cache off. */
  cacheBytes: number;
  /** Milliseconds a client has to send a request's headers (from the connection or the previous response). */
  headersTimeoutMs: number;
  /** Milliseconds a client has to send a whole request, headers and body; 0 turns the limit off. */
  requestTimeoutMs: number;
  /** Milliseconds a multipart body may go without a byte arriving before it is refused (408); 0: off. */
  bodyIdleTimeoutMs: number;
  /** Milliseconds an idle keep-alive connection stays open after a response. */
  keepAliveTimeoutMs: number;
  /** Connections open at once; unset: derived from the open-file limit (src/server/connections.ts). */
  maxConnections?: number;
  /** Connections one client address may hold open at once; 0 turns the limit off (behind a proxy). */
  maxConnectionsPerClient: number;
  /** Free bytes the data directory's disk must keep: below, /health is 503 and new jobs get a 507; 0: off. */
  minFreeDiskBytes: number;
  /** Mean event-loop delay, in ms, above which requests get a 503; 0 turns the check off. */
  maxEventLoopDelayMs: number;
  /** MCP sessions over HTTP one API key may hold; past it, its least recently used idle one is closed. 0: no limit. */
  mcpSessionsPerKey: number;
  /** Folder of pipeline definitions (`POST /pipelines/<name>/`, `mediaflow run <name>`). */
  pipelinesDir: string;
  /** Folder of render templates (`template` of /render/, docs/render.md); default: the ones shipped with mediaflow. */
  templatesDir: string;
  /** Operation plugins to load after the built-ins: package names or paths (MEDIAFLOW_PLUGINS, --plugin). */
  plugins: string[];
  /** Runs a job may start before it is failed: a run cut short by a crash or kill -9 counts. */
  jobAttempts: number;
  /** Largest job record, bytes of its JSON: a job whose result would make a larger one fails (docs/jobs.md). */
  maxRecordBytes: number;
  /** `whsec_` + base64: signs webhooks (Standard Webhooks) when set. */
  webhookSecret?: string;
  /** Milliseconds before the first webhook retry; each later one waits about twice the one before. */
  webhookBackoffMs: number;
  /** Webhook attempts in all, the first included. */
  webhookAttempts: number;
  /** Milliseconds a webhook receiver has to answer one attempt. */
  webhookTimeoutMs: number;
  /** Host names (lower case) that webhooks may reach on private addresses, inputs staying refused there. */
  webhookAllowedHosts: string[];
  /** Redis for the queue, job records and events (BullMQ); unset keeps everything in this process. */
  redisUrl?: string;
  /** Jobs this process works at once; 0 makes an API-only process (Redis mode). Default: the concurrency. */
  workers?: number;
  /** Milliseconds after which a job whose worker stopped renewing its lock goes back to the queue (Redis mode). */
  stalledIntervalMs: number;
  /** Serve the BullMQ dashboard at /admin/queues (Redis mode; needs the API key). */
  dashboard: boolean;
  /** Finished queue entries kept for the dashboard, at most this many per queue... */
  dashboardKeepJobs: number;
  /** ...and for at most this many milliseconds. */
  dashboardKeepAgeMs: number;
  /** Publish outputs to this S3-compatible bucket instead of `<dataDir>/uploads`. */
  s3Bucket?: string;
  /** The S3 API's address (MinIO, R2, Spaces); unset: AWS. */
  s3Endpoint?: string;
  /** The bucket's region; unset: from the AWS configuration, else us-east-1. */
  s3Region?: string;
  /** Put before every object key (`<prefix>uploads/...`), to share a bucket. */
  s3Prefix: string;
  /** Address the bucket in the path rather than the host name (MinIO and most self-hosted servers). */
  s3ForcePathStyle: boolean;
  /** Base of public object URLs (a public bucket or a CDN); unset: presigned URLs. */
  s3PublicUrl?: string;
  /** Milliseconds a presigned URL stays valid (at most 7 days). */
  s3UrlTtlMs: number;
  /** Browser origins allowed to call the API (CORS), such as `https://app.example.com`; empty turns CORS off. */
  corsOrigins: string[];
  /** Bearer token that `/metrics` needs; unset, it needs the API key (when there is one). */
  metricsToken?: string;
  /** Where whisper model names are fetched from: `<url>/ggml-<name>.bin` (src/engine/speech/models.ts). */
  whisperModelUrl: string;
  /** The whisper.cpp model `/transcribe/` uses: a known name or a ggml file's path; unset, no transcription (501). */
  whisperModel?: string;
  /** Which whisper.cpp binding recognises: `auto` (the AVX2 build where it can run, else the CPU build) or one. */
  whisperBinding: BindingSetting;
  /** The neural voices' models, `<engine>:<name>=<path or URL>` each (src/engine/voice/tts-models.ts). */
  ttsModels: string[];
}

/** A variable, its `serve` flag, and how to read it: the single description behind env, flags and docs. */
export interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: 'int' | 'string' | 'bool' | 'duration' | 'list';
  /** A list whose items keep their case (paths, package names); other lists are lower-cased (host names). */
  keepCase?: boolean;
  description: string;
}

export const SETTINGS: readonly Setting[] = [
  { key: 'port', env: 'PORT', flag: 'port', kind: 'int', description: 'listen port' },
  { key: 'host', env: 'HOST', flag: 'host', kind: 'string', description: 'listen address (0.0.0.0 in containers)' },
  {
    key: 'dataDir',
    env: 'MEDIAFLOW_DATA_DIR',
    flag: 'data-dir',
    kind: 'string',
    description: 'outputs in <data-dir>/uploads, work files in <data-dir>/work',
  },
  {
    key: 'publicUrl',
    env: 'MEDIAFLOW_PUBLIC_URL',
    flag: 'public-url',
    kind: 'string',
    description: 'base of returned URLs (default: from the request)',
  },
  {
    key: 'trustProxy',
    env: 'MEDIAFLOW_TRUST_PROXY',
    flag: 'trust-proxy',
    kind: 'bool',
    description: 'honour X-Forwarded-* headers',
  },
  {
    key: 'allowPrivateUrls',
    env: 'MEDIAFLOW_ALLOW_PRIVATE_URLS',
    flag: 'allow-private-urls',
    kind: 'bool',
    description: 'allow inputs on loopback/private/link-local addresses',
  },
  {
    key: 'allowedHosts',
    env: 'MEDIAFLOW_ALLOWED_HOSTS',
    flag: 'allowed-hosts',
    kind: 'list',
    description: 'if set, only these host names may be fetched (comma list)',
  },
  {
    key: 'concurrency',
    env: 'MEDIAFLOW_CONCURRENCY',
    flag: 'concurrency',
    kind: 'int',
    description: 'ffmpeg jobs at once (default: CPU count)',
  },
  {
    key: 'maxQueue',
    env: 'MEDIAFLOW_MAX_QUEUE',
    flag: 'max-queue',
    kind: 'int',
    description: 'jobs waiting before 503',
  },
  {
    key: 'apiKey',
    env: 'MEDIAFLOW_API_KEY',
    flag: 'api-key',
    kind: 'string',
    description: 'when set, requests need X-API-Key',
  },
  {
    key: 'apiKeys',
    env: 'MEDIAFLOW_API_KEYS',
    flag: 'api-keys',
    kind: 'list',
    keepCase: true,
    description: 'more API keys (comma list); with several, each key sees only its own jobs',
  },
  {
    key: 'metricsToken',
    env: 'MEDIAFLOW_METRICS_TOKEN',
    flag: 'metrics-token',
    kind: 'string',
    description: 'Bearer token /metrics needs (default: the API key, if set)',
  },
  {
    key: 'corsOrigins',
    env: 'MEDIAFLOW_CORS_ORIGINS',
    flag: 'cors-origins',
    kind: 'list',
    description: 'browser origins allowed to call the API (CORS; comma list; default: none)',
  },
  {
    key: 'maxInputBytes',
    env: 'MEDIAFLOW_MAX_INPUT_BYTES',
    flag: 'max-input-bytes',
    kind: 'int',
    description: 'largest input, downloaded or uploaded, bytes',
  },
  {
    key: 'maxInputs',
    env: 'MEDIAFLOW_MAX_INPUTS',
    flag: 'max-inputs',
    kind: 'int',
    description: 'inputs (URLs and files) in one request',
  },
  {
    key: 'maxRequestBytes',
    env: 'MEDIAFLOW_MAX_REQUEST_BYTES',
    flag: 'max-request-bytes',
    kind: 'int',
    description: 'bytes all inputs of one request may add up to (downloads, or the files uploaded with it)',
  },
  {
    key: 'maxSubtitleBytes',
    env: 'MEDIAFLOW_MAX_SUBTITLE_BYTES',
    flag: 'max-subtitle-bytes',
    kind: 'int',
    description: 'largest subtitle input, bytes',
  },
  {
    key: 'maxTextBytes',
    env: 'MEDIAFLOW_MAX_TEXT_BYTES',
    flag: 'max-text-bytes',
    kind: 'int',
    description: 'largest text field, bytes of UTF-8',
  },
  {
    key: 'downloadTimeoutMs',
    env: 'MEDIAFLOW_DOWNLOAD_TIMEOUT',
    flag: 'download-timeout',
    kind: 'duration',
    description: "one input's whole download",
  },
  {
    key: 'firstByteTimeoutMs',
    env: 'MEDIAFLOW_FIRST_BYTE_TIMEOUT',
    flag: 'first-byte-timeout',
    kind: 'duration',
    description: 'wait for the first byte of an input',
  },
  {
    key: 'jobTimeoutMs',
    env: 'MEDIAFLOW_JOB_TIMEOUT',
    flag: 'job-timeout',
    kind: 'duration',
    description: 'time one ffmpeg run may take',
  },
  {
    key: 'jobTotalTimeoutMs',
    env: 'MEDIAFLOW_JOB_TOTAL_TIMEOUT',
    flag: 'job-total-timeout',
    kind: 'duration',
    description: 'time a whole job may take: downloads, every ffmpeg run, step and part together; 0 turns it off',
  },
  {
    key: 'maxPixels',
    env: 'MEDIAFLOW_MAX_PIXELS',
    flag: 'max-pixels',
    kind: 'int',
    description: 'pixels of one image or video frame',
  },
  {
    key: 'maxDurationMs',
    env: 'MEDIAFLOW_MAX_DURATION',
    flag: 'max-duration',
    kind: 'duration',
    description: 'longest input media',
  },
  {
    key: 'maxClips',
    env: 'MEDIAFLOW_MAX_CLIPS',
    flag: 'max-clips',
    kind: 'int',
    description: "clips in one render's edit document",
  },
  {
    key: 'fanout',
    env: 'MEDIAFLOW_FANOUT',
    flag: 'fanout',
    kind: 'bool',
    description: 'split long frame-by-frame encodes into parts run on any worker (0: never)',
  },
  {
    key: 'partMs',
    env: 'MEDIAFLOW_PART_SECONDS',
    flag: 'part-seconds',
    kind: 'duration',
    description: 'input length of one part of a split encode, ending at the next keyframe',
  },
  {
    key: 'fanoutMinMs',
    env: 'MEDIAFLOW_FANOUT_MIN',
    flag: 'fanout-min',
    kind: 'duration',
    description: 'only encodes of more input than this are split',
  },
  {
    key: 'logLevel',
    env: 'MEDIAFLOW_LOG_LEVEL',
    flag: 'log-level',
    kind: 'string',
    description: 'log level: fatal, error, warn, info, debug, silent',
  },
  {
    key: 'retentionMs',
    env: 'MEDIAFLOW_RETENTION',
    flag: 'retention',
    kind: 'duration',
    description: 'age after which outputs are deleted; 0 keeps them',
  },
  {
    key: 'cacheBytes',
    env: 'MEDIAFLOW_CACHE_BYTES',
    flag: 'cache-bytes',
    kind: 'int',
    description: 'bytes of inputs kept for reuse (HTTP caching rules); 0 turns it off',
  },
  {
    key: 'minFreeDiskBytes',
    env: 'MEDIAFLOW_MIN_FREE_DISK',
    flag: 'min-free-disk',
    kind: 'int',
    description:
      'free bytes the data directory must keep; below them /health is 503 and new jobs get 507; 0 turns it off',
  },
  {
    key: 'maxEventLoopDelayMs',
    env: 'MEDIAFLOW_MAX_EVENT_LOOP_DELAY',
    flag: 'max-event-loop-delay',
    kind: 'int',
    description: 'event-loop delay (ms) above which requests get a 503; 0 turns it off',
  },
  {
    key: 'mcpSessionsPerKey',
    env: 'MEDIAFLOW_MCP_SESSIONS_PER_KEY',
    flag: 'mcp-sessions-per-key',
    kind: 'int',
    description:
      "MCP sessions one API key may hold open over HTTP; past it, the key's least recently used idle one is closed " +
      '(0: no limit but the server-wide 1000)',
  },
  {
    key: 'headersTimeoutMs',
    env: 'MEDIAFLOW_HEADERS_TIMEOUT',
    flag: 'headers-timeout',
    kind: 'duration',
    description: "time a client has to send a request's headers (then 408 or closed)",
  },
  {
    key: 'requestTimeoutMs',
    env: 'MEDIAFLOW_REQUEST_TIMEOUT',
    flag: 'request-timeout',
    kind: 'duration',
    description: 'time a client has to send a whole request, body included (then 408); 0 turns it off',
  },
  {
    key: 'bodyIdleTimeoutMs',
    env: 'MEDIAFLOW_BODY_IDLE_TIMEOUT',
    flag: 'body-idle-timeout',
    kind: 'duration',
    description: 'time a multipart body may go without a byte arriving (then 408, files removed); 0 turns it off',
  },
  {
    key: 'keepAliveTimeoutMs',
    env: 'MEDIAFLOW_KEEP_ALIVE_TIMEOUT',
    flag: 'keep-alive-timeout',
    kind: 'duration',
    description: 'idle keep-alive connections are closed after this',
  },
  {
    key: 'maxConnections',
    env: 'MEDIAFLOW_MAX_CONNECTIONS',
    flag: 'max-connections',
    kind: 'int',
    description: 'connections open at once; more are closed (default: from the open-file limit)',
  },
  {
    key: 'maxConnectionsPerClient',
    env: 'MEDIAFLOW_MAX_CONNECTIONS_PER_CLIENT',
    flag: 'max-connections-per-client',
    kind: 'int',
    description: 'connections one client address may hold; 0 turns it off (behind a proxy)',
  },
  {
    key: 'bodyLimit',
    env: 'MEDIAFLOW_BODY_LIMIT',
    flag: 'body-limit',
    kind: 'int',
    description: 'largest request body, bytes (the text fields of a multipart body; files have the input limits)',
  },
  {
    key: 'pipelinesDir',
    env: 'MEDIAFLOW_PIPELINES_DIR',
    flag: 'pipelines-dir',
    kind: 'string',
    description: 'folder of pipeline definitions',
  },
  {
    key: 'templatesDir',
    env: 'MEDIAFLOW_TEMPLATES',
    flag: 'templates',
    kind: 'string',
    description: "folder of render templates (default: mediaflow's own templates/)",
  },
  {
    key: 'whisperModel',
    env: 'MEDIAFLOW_WHISPER_MODEL',
    flag: 'whisper-model',
    kind: 'string',
    description:
      'the whisper.cpp model /transcribe/ uses: a known name (base.en, fetched on first use) or the path of a ggml ' +
      '.bin file; unset: transcription is off',
  },
  {
    key: 'whisperBinding',
    env: 'MEDIAFLOW_WHISPER_BINDING',
    flag: 'whisper-binding',
    kind: 'string',
    description:
      'which whisper.cpp binding recognises speech: auto (@napi-rs/whisper where it is installed and the CPU has ' +
      'AVX2, else @fugood), fugood or napi',
  },
  {
    key: 'ttsModels',
    env: 'MEDIAFLOW_TTS_MODELS',
    flag: 'tts-models',
    kind: 'list',
    keepCase: true,
    description:
      'the neural voices (Piper, Kokoro): <engine>:<name>=<path or URL> each, comma list; a URL ends with ' +
      '#sha256=<hex>+<hex>..., one per file, and is fetched once into <data-dir>/voices',
  },
  {
    key: 'jobAttempts',
    env: 'MEDIAFLOW_JOB_ATTEMPTS',
    flag: 'job-attempts',
    kind: 'int',
    description: 'runs a job may start; a run cut short by a restart counts',
  },
  {
    key: 'maxRecordBytes',
    env: 'MEDIAFLOW_MAX_RECORD_BYTES',
    flag: 'max-record-bytes',
    kind: 'int',
    description: 'largest job record, bytes of JSON; a job whose result is larger fails',
  },
  {
    key: 'webhookSecret',
    env: 'MEDIAFLOW_WEBHOOK_SECRET',
    flag: 'webhook-secret',
    kind: 'string',
    description: 'whsec_ + base64: sign webhooks (Standard Webhooks)',
  },
  {
    key: 'webhookBackoffMs',
    env: 'MEDIAFLOW_WEBHOOK_BACKOFF',
    flag: 'webhook-backoff',
    kind: 'duration',
    description: 'wait before the first webhook retry; each later one about doubles',
  },
  {
    key: 'webhookAttempts',
    env: 'MEDIAFLOW_WEBHOOK_ATTEMPTS',
    flag: 'webhook-attempts',
    kind: 'int',
    description: 'webhook attempts in all (8 at 5m span about ten hours)',
  },
  {
    key: 'webhookTimeoutMs',
    env: 'MEDIAFLOW_WEBHOOK_TIMEOUT',
    flag: 'webhook-timeout',
    kind: 'duration',
    description: 'time a webhook receiver has to answer one attempt',
  },
  {
    key: 'webhookAllowedHosts',
    env: 'MEDIAFLOW_WEBHOOK_ALLOWED_HOSTS',
    flag: 'webhook-allowed-hosts',
    kind: 'list',
    description: 'host names webhooks may reach on private addresses (an n8n beside mediaflow; comma list)',
  },
  {
    key: 'redisUrl',
    env: 'MEDIAFLOW_REDIS_URL',
    flag: 'redis-url',
    kind: 'string',
    description: 'Redis URL: queue, job records and events shared by many processes (BullMQ)',
  },
  {
    key: 'workers',
    env: 'MEDIAFLOW_WORKERS',
    flag: 'workers',
    kind: 'int',
    description: 'jobs this process works at once; 0: API only (default: the concurrency)',
  },
  {
    key: 'stalledIntervalMs',
    env: 'MEDIAFLOW_STALLED_INTERVAL',
    flag: 'stalled-interval',
    kind: 'duration',
    description:
      "how soon a dead worker's job goes back to the queue (Redis mode); a job no worker or queue holds, " +
      'after two such intervals',
  },
  {
    key: 'dashboard',
    env: 'MEDIAFLOW_DASHBOARD',
    flag: 'dashboard',
    kind: 'bool',
    description: 'serve the queue dashboard at /admin/queues (Redis mode; needs the API key)',
  },
  {
    key: 'dashboardKeepJobs',
    env: 'MEDIAFLOW_DASHBOARD_KEEP_JOBS',
    flag: 'dashboard-keep-jobs',
    kind: 'int',
    description: 'finished jobs the queue keeps for the dashboard, per queue (Redis mode; 0 keeps none)',
  },
  {
    key: 'dashboardKeepAgeMs',
    env: 'MEDIAFLOW_DASHBOARD_KEEP_AGE',
    flag: 'dashboard-keep-age',
    kind: 'duration',
    description: 'how long the queue keeps a finished job for the dashboard (Redis mode)',
  },
  {
    key: 's3Bucket',
    env: 'MEDIAFLOW_S3_BUCKET',
    flag: 's3-bucket',
    kind: 'string',
    description: 'publish outputs to this S3-compatible bucket (credentials: the standard AWS chain)',
  },
  {
    key: 's3Endpoint',
    env: 'MEDIAFLOW_S3_ENDPOINT',
    flag: 's3-endpoint',
    kind: 'string',
    description: 'S3 API address for MinIO, R2, Spaces (default: AWS)',
  },
  {
    key: 's3Region',
    env: 'MEDIAFLOW_S3_REGION',
    flag: 's3-region',
    kind: 'string',
    description: 'bucket region (default: the AWS configuration, else us-east-1)',
  },
  {
    key: 's3Prefix',
    env: 'MEDIAFLOW_S3_PREFIX',
    flag: 's3-prefix',
    kind: 'string',
    description: 'key prefix before uploads/ (to share a bucket)',
  },
  {
    key: 's3ForcePathStyle',
    env: 'MEDIAFLOW_S3_FORCE_PATH_STYLE',
    flag: 's3-force-path-style',
    kind: 'bool',
    description: 'path-style bucket addressing (MinIO and most self-hosted servers)',
  },
  {
    key: 's3PublicUrl',
    env: 'MEDIAFLOW_S3_PUBLIC_URL',
    flag: 's3-public-url',
    kind: 'string',
    description: 'base of public object URLs (public bucket or CDN); default: presigned URLs',
  },
  {
    key: 's3UrlTtlMs',
    env: 'MEDIAFLOW_S3_URL_TTL',
    flag: 's3-url-ttl',
    kind: 'duration',
    description: 'how long presigned URLs stay valid (at most 7d); signed again at each GET /jobs/<id>',
  },
  {
    key: 'whisperModelUrl',
    env: 'MEDIAFLOW_WHISPER_MODEL_URL',
    flag: 'whisper-model-url',
    kind: 'string',
    description: 'where whisper model names are fetched from, once, as <url>/ggml-<name>.bin (SHA-256 checked)',
  },
  // Read before the CLI builds its commands (src/cli/main.ts), so the plugins' subcommands exist;
  // every command takes a repeatable --plugin.
  {
    key: 'plugins',
    env: 'MEDIAFLOW_PLUGINS',
    flag: 'plugin',
    kind: 'list',
    keepCase: true,
    description: 'operation plugins to load: package names or paths (comma list; the flag is repeatable)',
  },
];

/** Every API key configured (MEDIAFLOW_API_KEY and MEDIAFLOW_API_KEYS), once each. */
export const apiKeysOf = (config: Pick<Config, 'apiKey' | 'apiKeys'>): string[] => [
  ...new Set([...(config.apiKey ? [config.apiKey] : []), ...config.apiKeys]),
];

/**
 * The default of MEDIAFLOW_MAX_PIXELS, and the least ceiling the probe and every ffmpeg input get whatever
 * the setting says: the decoders' own limit is raised to at least this, never lowered below it.
 */
export const DEFAULT_MAX_PIXELS = 100_000_000;

/** The templates shipped with mediaflow, at the package's root (beside src/ and dist/, whichever this file is in). */
const SHIPPED_TEMPLATES = fileURLToPath(new URL('../../templates', import.meta.url));

/** The defaults, as docs/configuration.md lists them. */
export function defaultConfig(): Config {
  return {
    port: 8000,
    host: '127.0.0.1',
    dataDir: './data',
    trustProxy: false,
    allowPrivateUrls: false,
    allowedHosts: [],
    concurrency: Math.max(1, os.availableParallelism()),
    maxQueue: 100,
    apiKeys: [],
    maxInputBytes: 1024 ** 3,
    maxInputs: 50,
    maxRequestBytes: 4 * 1024 ** 3,
    maxSubtitleBytes: 5 * 1024 ** 2,
    maxTextBytes: 1024 ** 2,
    downloadTimeoutMs: 120_000,
    firstByteTimeoutMs: 30_000,
    jobTimeoutMs: 1_800_000,
    // MEDIAFLOW_MAX_DURATION's default: the longest input, encoded in parts at about its own speed, still fits.
    jobTotalTimeoutMs: 4 * 3_600_000,
    maxPixels: DEFAULT_MAX_PIXELS,
    maxDurationMs: 4 * 3_600_000,
    maxClips: 200,
    logLevel: 'info',
    retentionMs: 24 * 3_600_000,
    bodyLimit: 1024 * 1024,
    maxEventLoopDelayMs: 1000,
    mcpSessionsPerKey: 100,
    headersTimeoutMs: 20_000,
    requestTimeoutMs: 60_000,
    bodyIdleTimeoutMs: 10_000,
    keepAliveTimeoutMs: 5000,
    maxConnectionsPerClient: 64,
    cacheBytes: 1024 ** 3,
    // Room for a few outputs and every record write: one job's work files alone can take this much.
    minFreeDiskBytes: 256 * 1024 ** 2,
    pipelinesDir: './pipelines',
    templatesDir: SHIPPED_TEMPLATES,
    plugins: [],
    jobAttempts: 2,
    // The request's fields (a body of MEDIAFLOW_BODY_LIMIT, 1 MiB) with room for the result and its webhook copy.
    maxRecordBytes: 4 * 1024 ** 2,
    fanout: true,
    partMs: 60_000,
    fanoutMinMs: 180_000,
    webhookBackoffMs: 5 * 60_000,
    webhookAttempts: 8,
    webhookTimeoutMs: 15_000,
    webhookAllowedHosts: [],
    stalledIntervalMs: 30_000,
    dashboard: false,
    dashboardKeepJobs: 1000,
    dashboardKeepAgeMs: 24 * 3_600_000,
    s3Prefix: '',
    s3ForcePathStyle: false,
    s3UrlTtlMs: 24 * 3_600_000,
    corsOrigins: [],
    // whisper.cpp's own published models.
    whisperModelUrl: 'https://huggingface.co/ggerganov/whisper.cpp/resolve/main',
    whisperBinding: 'auto',
    ttsModels: [],
  };
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);
const UNIT_MS: Record<string, number> = { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function configError(setting: Setting, raw: string, expected: string): MediaflowError {
  return new MediaflowError(
    'MF_ERR_PARAM',
    `Expected ${setting.env} (--${setting.flag}) to be ${expected}, got \`${raw}\``,
  );
}

/** Reads one raw value (from the environment or a flag) as its setting's kind. */
export function parseSetting(setting: Setting, raw: string | boolean): Config[keyof Config] {
  if (typeof raw === 'boolean') return raw;
  const text = raw.trim();
  switch (setting.kind) {
    case 'bool': {
      const lower = text.toLowerCase();
      if (TRUE.has(lower)) return true;
      if (FALSE.has(lower)) return false;
      throw configError(setting, raw, 'one of 1, true, yes, on, 0, false, no, off');
    }
    case 'int': {
      if (!/^\d+$/.test(text)) throw configError(setting, raw, 'a whole number');
      return Number(text);
    }
    case 'duration': {
      const match = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/i.exec(text);
      if (!match) throw configError(setting, raw, 'a duration such as 30, 30s, 5m, 24h or 7d');
      return Math.round(Number(match[1]) * UNIT_MS[match[2]!.toLowerCase()]!);
    }
    case 'list': {
      const items = text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      return setting.keepCase ? items : items.map((item) => item.toLowerCase());
    }
    case 'string':
      return text;
  }
}

/**
 * The configuration from defaults, then the environment, then explicit overrides (flags win).
 * Unset or empty variables keep their default.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<keyof Config, string | boolean>> = {},
): Config {
  const config = defaultConfig() as unknown as Record<string, unknown>;
  for (const setting of SETTINGS) {
    const fromEnv = env[setting.env];
    const raw = overrides[setting.key] ?? (fromEnv === undefined || fromEnv === '' ? undefined : fromEnv);
    if (raw !== undefined) config[setting.key] = parseSetting(setting, raw);
  }
  const result = config as unknown as Config;
  for (const key of ['concurrency', 'jobAttempts', 'webhookAttempts'] as const) {
    if (result[key] < 1)
      throw configError(
        SETTINGS.find((s) => s.key === key)!,
        String(result[key]),
        'at least 1',
      );
  }
  if (result.headersTimeoutMs < 1000)
    throw configError(
      SETTINGS.find((s) => s.key === 'headersTimeoutMs')!,
      `${result.headersTimeoutMs / 1000}s`,
      'at least 1s',
    );
  // S3 refuses presigned URLs valid for longer than 7 days.
  if (result.s3UrlTtlMs > 7 * 86_400_000 || result.s3UrlTtlMs < 1000) {
    throw configError(
      SETTINGS.find((s) => s.key === 's3UrlTtlMs')!,
      `${result.s3UrlTtlMs / 1000}s`,
      'from 1s to 7d',
    );
  }
  if (result.s3PublicUrl) result.s3PublicUrl = result.s3PublicUrl.replace(/\/+$/, '');
  result.dataDir = path.resolve(result.dataDir);
  result.pipelinesDir = path.resolve(result.pipelinesDir);
  result.templatesDir = path.resolve(result.templatesDir);
  if (result.publicUrl) result.publicUrl = result.publicUrl.replace(/\/+$/, '');
  result.whisperModelUrl = result.whisperModelUrl.replace(/\/+$/, '');
  if (!BINDING_SETTINGS.includes(result.whisperBinding)) {
    throw configError(
      SETTINGS.find((s) => s.key === 'whisperBinding')!,
      result.whisperBinding,
      `one of ${BINDING_SETTINGS.join(', ')}`,
    );
  }
  // A browser's Origin header has no trailing slash.
  result.corsOrigins = result.corsOrigins.map((origin) => origin.replace(/\/+$/, ''));
  return result;
}
