import os from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  asWritten,
  baseUrl,
  bytes,
  duration,
  folder,
  list,
  lowerCase,
  oneOf,
  onOff,
  origin,
  text,
  whole,
  type Kind,
} from './config-kinds.js';

/** One setting; without a default it is unset until given (optional in `Config`). */
interface Entry<T> {
  env: string;
  flag: string;
  kind: Kind<T>;
  default?: T;
  /** One line for the CLI's help. */
  help: string;
  /** The docs' Markdown, when it says more than `help`. */
  doc?: string;
  /** The docs' default, when the value alone would not say it (computed, or unset with a meaning). */
  shown?: string;
}

/** An entry whose default is of its kind's type. */
export type Setting = Entry<number> | Entry<string> | Entry<boolean> | Entry<string[]>;

/**
 * The default of MEDIAFLOW_MAX_PIXELS, and the least ceiling the probe and every ffmpeg input get whatever
 * the setting says: the decoders' own limit is raised to at least this, never lowered below it.
 */
export const DEFAULT_MAX_PIXELS = 100_000_000;

/** MEDIAFLOW_WHISPER_BINDING's values: which of whisper.cpp's bindings recognises (speech/bindings/choice.ts). */
export const BINDING_SETTINGS = ['auto', 'fugood', 'napi'] as const;
export type BindingSetting = (typeof BINDING_SETTINGS)[number];

/** The templates shipped with mediaflow, at the package's root (beside src/ and dist/, whichever this file is in). */
const SHIPPED_TEMPLATES = fileURLToPath(new URL('../../templates', import.meta.url));

const DAY = 86_400_000;

/**
 * Every setting, once: its environment variable and `serve` flag, the kind of value it takes, its default, and what it
 * means. The `Config` type, the defaults, the reading of the environment and flags (config.ts), the CLI's flags and
 * docs/configuration.md's table (`npm run docs:config`) are all made from it, in this order.
 */
export const SETTINGS_TABLE = {
  port: {
    env: 'PORT',
    flag: 'port',
    kind: whole(),
    default: 8000,
    help: 'listen port',
  },
  host: {
    env: 'HOST',
    flag: 'host',
    kind: text(),
    default: '127.0.0.1',
    help: 'listen address (0.0.0.0 in containers)',
  },
  dataDir: {
    env: 'MEDIAFLOW_DATA_DIR',
    flag: 'data-dir',
    kind: folder(),
    default: './data',
    help: 'outputs in <data-dir>/uploads, work files in <data-dir>/work',
    doc:
      'outputs in `<data-dir>/uploads`, work files in `<data-dir>/work`, job records in `<data-dir>/jobs`; when it ' +
      'is set, the CLI keeps its work files and cache there too ([Command line](cli.md))',
  },
  publicUrl: {
    env: 'MEDIAFLOW_PUBLIC_URL',
    flag: 'public-url',
    kind: baseUrl(),
    help: 'base of returned URLs (default: from the request)',
    doc: 'base of returned URLs (`mediaflow mcp` on stdio: `file://` URLs of `<data-dir>/uploads` when unset)',
    shown: 'from the request',
  },
  trustProxy: {
    env: 'MEDIAFLOW_TRUST_PROXY',
    flag: 'trust-proxy',
    kind: onOff(),
    default: false,
    help: 'honour X-Forwarded-* headers',
    doc: 'honour `X-Forwarded-Proto`/`X-Forwarded-Host`',
  },
  allowPrivateUrls: {
    env: 'MEDIAFLOW_ALLOW_PRIVATE_URLS',
    flag: 'allow-private-urls',
    kind: onOff(),
    default: false,
    help: 'allow inputs on loopback/private/link-local addresses',
    doc: 'allow inputs on loopback/private/link-local addresses (tests, local use)',
  },
  allowedHosts: {
    env: 'MEDIAFLOW_ALLOWED_HOSTS',
    flag: 'allowed-hosts',
    kind: list(lowerCase),
    default: [],
    help: 'if set, only these host names may be fetched (comma list)',
    shown: 'unset (any public host)',
  },
  concurrency: {
    env: 'MEDIAFLOW_CONCURRENCY',
    flag: 'concurrency',
    kind: whole({ min: 1 }),
    default: Math.max(1, os.availableParallelism()),
    help: 'ffmpeg jobs at once (default: CPU count)',
    doc: 'ffmpeg jobs at once',
    shown: 'CPU count',
  },
  maxQueue: {
    env: 'MEDIAFLOW_MAX_QUEUE',
    flag: 'max-queue',
    kind: whole(),
    default: 100,
    help: 'jobs waiting before 503',
  },
  apiKey: {
    env: 'MEDIAFLOW_API_KEY',
    flag: 'api-key',
    kind: text(),
    help: 'when set, requests need X-API-Key',
    doc:
      'when set, operations, pipelines, `/templates/`, `/jobs/...`, `/mcp` and `/metrics` need the `X-API-Key` ' +
      'header; `/health`, `/fonts`, `/voices`, `/uploads/...` (unguessable names), `/openapi.json`, `/docs` and the ' +
      "[studio](studio.md)'s page (`/studio/`, whose calls carry the key) stay open",
  },
  apiKeys: {
    env: 'MEDIAFLOW_API_KEYS',
    flag: 'api-keys',
    kind: list(asWritten),
    default: [],
    help: 'more API keys (comma list); with several, each key sees only its own jobs',
    doc:
      'more API keys (comma list), accepted like `MEDIAFLOW_API_KEY`; with two or more keys in all, each key sees ' +
      "only the jobs it submitted (another key's job is a 404) and its own `Idempotency-Key`s",
  },
  metricsToken: {
    env: 'MEDIAFLOW_METRICS_TOKEN',
    flag: 'metrics-token',
    kind: text(),
    help: 'Bearer token /metrics needs (default: the API key, if set)',
    doc: '`/metrics` needs `Authorization: Bearer <token>` (the API key still works); open when neither is set',
    shown: 'unset (the API key)',
  },
  corsOrigins: {
    env: 'MEDIAFLOW_CORS_ORIGINS',
    flag: 'cors-origins',
    kind: list(origin),
    default: [],
    help: 'browser origins allowed to call the API (CORS; comma list; default: none)',
    doc:
      'browser origins allowed to call the API, comma-separated (`https://app.example.com`); preflights answered, ' +
      '`Location` and `Retry-After` readable',
    shown: 'unset (CORS off)',
  },
  maxInputBytes: {
    env: 'MEDIAFLOW_MAX_INPUT_BYTES',
    flag: 'max-input-bytes',
    kind: bytes(),
    default: 1024 ** 3,
    help: 'largest input, downloaded or uploaded, bytes',
    doc: 'largest input: a download, or a file uploaded ([docs/files.md](files.md)) (413)',
  },
  maxInputs: {
    env: 'MEDIAFLOW_MAX_INPUTS',
    flag: 'max-inputs',
    kind: whole(),
    default: 50,
    help: 'inputs (URLs and files) in one request',
    doc: 'inputs (URLs and file parts) in one request; also the file parts `POST /files/` takes at once',
  },
  maxRequestBytes: {
    env: 'MEDIAFLOW_MAX_REQUEST_BYTES',
    flag: 'max-request-bytes',
    kind: bytes(),
    default: 4 * 1024 ** 3,
    help: 'bytes all inputs of one request may add up to (downloads, or the files uploaded with it)',
    doc: 'bytes all inputs of one request may add up to; the files uploaded with one request count together (413)',
  },
  maxSubtitleBytes: {
    env: 'MEDIAFLOW_MAX_SUBTITLE_BYTES',
    flag: 'max-subtitle-bytes',
    kind: bytes(),
    default: 5 * 1024 ** 2,
    help: 'largest subtitle input, bytes',
    doc:
      'largest subtitle input (URL, own output or local file); subtitles are read whole as text, so their limit is ' +
      "far below media's (413)",
  },
  maxTextBytes: {
    env: 'MEDIAFLOW_MAX_TEXT_BYTES',
    flag: 'max-text-bytes',
    kind: bytes(),
    default: 1024 ** 2,
    help: 'largest text field, bytes of UTF-8',
    doc: "largest text field, such as generate-subtitles' and speak's `text`, in bytes of UTF-8 (413)",
  },
  downloadTimeoutMs: {
    env: 'MEDIAFLOW_DOWNLOAD_TIMEOUT',
    flag: 'download-timeout',
    kind: duration(),
    default: 120_000,
    help: "one input's whole download",
    doc: "time one input's whole download may take",
  },
  firstByteTimeoutMs: {
    env: 'MEDIAFLOW_FIRST_BYTE_TIMEOUT',
    flag: 'first-byte-timeout',
    kind: duration(),
    default: 30_000,
    help: 'wait for the first byte of an input',
    doc: "time to wait for an input's response",
  },
  jobTimeoutMs: {
    env: 'MEDIAFLOW_JOB_TIMEOUT',
    flag: 'job-timeout',
    kind: duration(),
    default: 1_800_000,
    help: 'time one ffmpeg run may take',
    doc: 'time one ffmpeg run may take (then 504)',
  },
  jobTotalTimeoutMs: {
    env: 'MEDIAFLOW_JOB_TOTAL_TIMEOUT',
    flag: 'job-total-timeout',
    kind: duration(),
    // MEDIAFLOW_MAX_DURATION's default: the longest input, encoded in parts at about its own speed, still fits.
    default: 4 * 3_600_000,
    help: 'time a whole job may take: downloads, every ffmpeg run, step and part together; 0 turns it off',
    doc:
      'time one job may take from when it gets its slot: its downloads, every ffmpeg run, in-process step and part ' +
      'of a split encode together (then 504 naming the setting; the per-run limit above bounds each run); `0` ' +
      'turns it off. The default lets the longest input (`MEDIAFLOW_MAX_DURATION`) be encoded in parts at about ' +
      'its own speed',
  },
  maxPixels: {
    env: 'MEDIAFLOW_MAX_PIXELS',
    flag: 'max-pixels',
    kind: whole(),
    default: DEFAULT_MAX_PIXELS,
    help: 'pixels of one image or video frame',
  },
  maxDurationMs: {
    env: 'MEDIAFLOW_MAX_DURATION',
    flag: 'max-duration',
    kind: duration(),
    default: 4 * 3_600_000,
    help: 'longest input media',
    doc: "longest input media; also the longest output an operation may ask for (a render's timeline, a slideshow)",
  },
  maxClips: {
    env: 'MEDIAFLOW_MAX_CLIPS',
    flag: 'max-clips',
    kind: whole(),
    default: 200,
    help: "clips in one render's edit document",
    doc: "clips in one [render](render.md)'s edit document, over all its tracks (400 past it)",
  },
  fanout: {
    env: 'MEDIAFLOW_FANOUT',
    flag: 'fanout',
    kind: onOff(),
    default: true,
    help: 'split long frame-by-frame encodes into parts run on any worker (0: never)',
    doc:
      'split a long frame-by-frame encode (convert-video with a re-encode, add-subtitles, add-text, overlay-image, ' +
      "precise trim and cut) into parts encoded at once, by this process's slots or by any worker; `0` never " +
      "splits; a request's `fanout=false` keeps that one in one pass ([docs/fanout.md](fanout.md))",
  },
  partMs: {
    env: 'MEDIAFLOW_PART_SECONDS',
    flag: 'part-seconds',
    kind: duration(),
    default: 60_000,
    help: 'input length of one part of a split encode, ending at the next keyframe',
    doc: 'input length of one part of a split encode: a part ends at the first keyframe at or past it',
  },
  fanoutMinMs: {
    env: 'MEDIAFLOW_FANOUT_MIN',
    flag: 'fanout-min',
    kind: duration(),
    default: 180_000,
    help: 'only encodes of more input than this are split',
  },
  logLevel: {
    env: 'MEDIAFLOW_LOG_LEVEL',
    flag: 'log-level',
    kind: text(),
    default: 'info',
    help: 'log level: fatal, error, warn, info, debug, silent',
  },
  retentionMs: {
    env: 'MEDIAFLOW_RETENTION',
    flag: 'retention',
    kind: duration(),
    default: 24 * 3_600_000,
    help: 'age after which outputs are deleted; 0 keeps them',
    doc:
      'outputs and uploaded files older than this are deleted by a sweeper, with the records of their jobs; `0` ' +
      'keeps them',
  },
  cacheBytes: {
    env: 'MEDIAFLOW_CACHE_BYTES',
    flag: 'cache-bytes',
    kind: bytes(),
    default: 1024 ** 3,
    help: 'bytes of inputs kept for reuse (HTTP caching rules); 0 turns it off',
    doc:
      'inputs kept in `<data-dir>/cache` for reuse by later jobs, by HTTP caching rules (`max-age`, ' +
      '`ETag`/`Last-Modified` revalidation; `no-store` and `private` never kept); `0` turns it off',
  },
  minFreeDiskBytes: {
    env: 'MEDIAFLOW_MIN_FREE_DISK',
    flag: 'min-free-disk',
    kind: bytes(),
    // Room for a few outputs and every record write: one job's work files alone can take this much.
    default: 256 * 1024 ** 2,
    help: 'free bytes the data directory must keep; below them /health is 503 and new jobs get 507; 0 turns it off',
    doc:
      "free bytes the data directory's file system must keep: below them `/health` answers 503 (`disk.ok: false`) " +
      'and new jobs get a 507; uploaded files reserve their space above it as they arrive (507 when they do not ' +
      'fit beside the uploads under way); `0` turns the check off',
  },
  maxEventLoopDelayMs: {
    env: 'MEDIAFLOW_MAX_EVENT_LOOP_DELAY',
    flag: 'max-event-loop-delay',
    kind: whole(),
    default: 1000,
    help: 'event-loop delay (ms) above which requests get a 503; 0 turns it off',
    doc: 'mean event-loop delay (ms) above which requests get a 503; `0` turns the check off',
  },
  mcpSessionsPerKey: {
    env: 'MEDIAFLOW_MCP_SESSIONS_PER_KEY',
    flag: 'mcp-sessions-per-key',
    kind: whole(),
    default: 100,
    help:
      "MCP sessions one API key may hold open over HTTP; past it, the key's least recently used idle one is closed " +
      '(0: no limit but the server-wide 1000)',
    doc:
      "MCP sessions one API key may hold open on `/mcp`; an `initialize` past it closes the key's least recently " +
      "used idle session (a 503 when all are busy); `0`: no limit but the server's 1000 " +
      '([docs/mcp.md](mcp.md#over-http))',
  },
  headersTimeoutMs: {
    env: 'MEDIAFLOW_HEADERS_TIMEOUT',
    flag: 'headers-timeout',
    kind: duration({ min: 1000 }),
    default: 20_000,
    help: "time a client has to send a request's headers (then 408 or closed)",
    doc:
      "time a client has to send a request's headers, from its connection or its previous response (then 408 or " +
      'closed); at most the request time limit',
  },
  requestTimeoutMs: {
    env: 'MEDIAFLOW_REQUEST_TIMEOUT',
    flag: 'request-timeout',
    kind: duration(),
    default: 60_000,
    help: 'time a client has to send a whole request, body included (then 408); 0 turns it off',
    doc:
      "time a client has to send a whole request, body included (then 408); the answer's time is not counted; `0` " +
      'turns it off',
  },
  bodyIdleTimeoutMs: {
    env: 'MEDIAFLOW_BODY_IDLE_TIMEOUT',
    flag: 'body-idle-timeout',
    kind: duration(),
    default: 10_000,
    help: 'time a multipart body may go without a byte arriving (then 408, files removed); 0 turns it off',
    doc:
      'time a multipart body (files) may go without a byte arriving while the server waits for one (then 408, the ' +
      'connection closed and what had arrived removed at once); an upload that keeps arriving, however slowly, is ' +
      'not cut by it; `0` turns it off',
  },
  keepAliveTimeoutMs: {
    env: 'MEDIAFLOW_KEEP_ALIVE_TIMEOUT',
    flag: 'keep-alive-timeout',
    kind: duration(),
    default: 5000,
    help: 'idle keep-alive connections are closed after this',
  },
  maxConnections: {
    env: 'MEDIAFLOW_MAX_CONNECTIONS',
    flag: 'max-connections',
    kind: whole(),
    help: 'connections open at once; more are closed (default: from the open-file limit)',
    doc: 'connections open at once; more are closed as they arrive',
    shown: 'the open-file limit less a quarter (at least 256): `768` at `ulimit -n 1024`',
  },
  maxConnectionsPerClient: {
    env: 'MEDIAFLOW_MAX_CONNECTIONS_PER_CLIENT',
    flag: 'max-connections-per-client',
    kind: whole(),
    default: 64,
    help: 'connections one client address may hold; 0 turns it off (behind a proxy)',
    doc:
      'connections one client address may hold open; more are closed as they arrive; behind a reverse proxy every ' +
      "client has the proxy's address: raise it or `0` (off) and limit clients at the proxy " +
      '([docs/security.md](security.md#connections-srcserverconnectionsts))',
  },
  bodyLimit: {
    env: 'MEDIAFLOW_BODY_LIMIT',
    flag: 'body-limit',
    kind: bytes(),
    default: 1024 * 1024,
    help: 'largest request body, bytes (the text fields of a multipart body; files have the input limits)',
    doc: 'largest request body; in a multipart body, its text fields (files have the input limits above)',
  },
  pipelinesDir: {
    env: 'MEDIAFLOW_PIPELINES_DIR',
    flag: 'pipelines-dir',
    kind: folder(),
    default: './pipelines',
    help: 'folder of pipeline definitions',
    doc: 'folder of pipeline definitions ([Pipelines](pipelines.md))',
  },
  templatesDir: {
    env: 'MEDIAFLOW_TEMPLATES',
    flag: 'templates',
    kind: folder(),
    default: SHIPPED_TEMPLATES,
    help: "folder of render templates (default: mediaflow's own templates/)",
    doc: 'folder of [render](render.md#templates) templates: `<name>.json`, each an edit document with merge fields',
    shown: 'the `templates/` shipped with mediaflow',
  },
  whisperModel: {
    env: 'MEDIAFLOW_WHISPER_MODEL',
    flag: 'whisper-model',
    kind: text(),
    help:
      'the whisper.cpp model /transcribe/ uses: a known name (base.en, fetched on first use) or the path of a ggml ' +
      '.bin file; unset: transcription is off',
    doc:
      'the whisper.cpp model `/transcribe/` recognises speech with: a known name (`tiny.en`, `base.en`, `base`, ' +
      '`small`, ...), fetched from `MEDIAFLOW_WHISPER_MODEL_URL` into `<data dir>/models` when a transcription ' +
      'first needs it and kept only if its SHA-256 is the published one, or the path of a ggml `.bin` file ' +
      '([docs/transcription.md](transcription.md))',
    shown: 'unset (no transcription: `/transcribe/` answers 501)',
  },
  whisperBinding: {
    env: 'MEDIAFLOW_WHISPER_BINDING',
    flag: 'whisper-binding',
    kind: oneOf(BINDING_SETTINGS),
    default: 'auto',
    help:
      'which whisper.cpp binding recognises speech: auto (@napi-rs/whisper where it is installed and the CPU has ' +
      'AVX2, else @fugood), fugood or napi',
    doc:
      'which whisper.cpp binding recognises speech: `auto` takes `@napi-rs/whisper` (an AVX2 build, about 25 times ' +
      'faster; installed by hand beside a production install) where it is installed and the CPU has AVX2, FMA, ' +
      "F16C and BMI2, else `@fugood`'s CPU build; `napi` or `fugood` takes that one, and `/transcribe/` answers a " +
      '501 saying what to install when it is missing; `/health` says which under `transcription.binding` ([The ' +
      'binding](transcription.md#the-binding))',
  },
  ttsModels: {
    env: 'MEDIAFLOW_TTS_MODELS',
    flag: 'tts-models',
    kind: list(asWritten),
    default: [],
    help:
      'the neural voices (Piper, Kokoro): <engine>:<name>=<path or URL> each, comma list; a URL ends with ' +
      '#sha256=<hex>+<hex>..., one per file, and is fetched once into <data-dir>/voices',
    doc:
      "the neural voices' models (Piper, Kokoro), a comma list of `<engine>:<name>=<source>`: " +
      "`piper:amy=/srv/voices/en_US-amy-low.onnx` (Piper's `.onnx` with its `.onnx.json` beside it), " +
      "`kokoro:en=/srv/kokoro-en-v0_19` (sherpa-onnx's Kokoro folder), or a URL ending with " +
      '`#sha256=<hex>+<hex>...`, one SHA-256 per file, fetched once into `<data-dir>/voices` and kept only when ' +
      "every file's SHA-256 is the one given; they speak where `sherpa-onnx-node` is installed ([Neural " +
      'voices](voice.md#neural-voices-piper-and-kokoro))',
    shown: 'unset (no neural voices)',
  },
  jobAttempts: {
    env: 'MEDIAFLOW_JOB_ATTEMPTS',
    flag: 'job-attempts',
    kind: whole({ min: 1 }),
    default: 2,
    help: 'runs a job may start; a run cut short by a restart counts',
    doc: 'runs a job may start; a run cut short by a restart counts (then `failed`)',
  },
  maxRecordBytes: {
    env: 'MEDIAFLOW_MAX_RECORD_BYTES',
    flag: 'max-record-bytes',
    kind: bytes(),
    // The request's fields (a body of MEDIAFLOW_BODY_LIMIT, 1 MiB) with room for the result and its webhook copy.
    default: 4 * 1024 ** 2,
    help: 'largest job record, bytes of JSON; a job whose result is larger fails',
    doc:
      "largest job record, in bytes of its JSON (the request's fields, the result and the webhook's copy of it): a " +
      'job whose result would make a larger one fails with a 413 instead, and a larger record file found at start ' +
      'is not loaded ([docs/jobs.md](jobs.md#record-size))',
  },
  webhookSecret: {
    env: 'MEDIAFLOW_WEBHOOK_SECRET',
    flag: 'webhook-secret',
    kind: text(),
    help: 'whsec_ + base64: sign webhooks (Standard Webhooks)',
  },
  webhookBackoffMs: {
    env: 'MEDIAFLOW_WEBHOOK_BACKOFF',
    flag: 'webhook-backoff',
    kind: duration(),
    default: 5 * 60_000,
    help: 'wait before the first webhook retry; each later one about doubles',
  },
  webhookAttempts: {
    env: 'MEDIAFLOW_WEBHOOK_ATTEMPTS',
    flag: 'webhook-attempts',
    kind: whole({ min: 1 }),
    default: 8,
    help: 'webhook attempts in all (8 at 5m span about ten hours)',
  },
  webhookTimeoutMs: {
    env: 'MEDIAFLOW_WEBHOOK_TIMEOUT',
    flag: 'webhook-timeout',
    kind: duration(),
    default: 15_000,
    help: 'time a webhook receiver has to answer one attempt',
  },
  webhookAllowedHosts: {
    env: 'MEDIAFLOW_WEBHOOK_ALLOWED_HOSTS',
    flag: 'webhook-allowed-hosts',
    kind: list(lowerCase),
    default: [],
    help: 'host names webhooks may reach on private addresses (an n8n beside mediaflow; comma list)',
  },
  redisUrl: {
    env: 'MEDIAFLOW_REDIS_URL',
    flag: 'redis-url',
    kind: text(),
    help: 'Redis URL: queue, job records and events shared by many processes (BullMQ)',
    doc:
      'Redis for the queue, job records and events (BullMQ), shared by any number of API and worker processes ' +
      '([docs/scaling.md](scaling.md))',
    shown: 'unset (one process)',
  },
  workers: {
    env: 'MEDIAFLOW_WORKERS',
    flag: 'workers',
    kind: whole(),
    help: 'jobs this process works at once; 0: API only (default: the concurrency)',
    doc: 'jobs this `serve` process works at once; `0`: API only (needs Redis)',
    shown: 'the concurrency',
  },
  stalledIntervalMs: {
    env: 'MEDIAFLOW_STALLED_INTERVAL',
    flag: 'stalled-interval',
    kind: duration(),
    default: 30_000,
    help:
      "how soon a dead worker's job goes back to the queue (Redis mode); a job no worker or queue holds, " +
      'after two such intervals',
    doc:
      'how soon a job whose worker died goes back to the queue (Redis mode); a job no worker or queue holds (a ' +
      'Redis outage as it started or ended), after two such intervals (both modes)',
  },
  dashboard: {
    env: 'MEDIAFLOW_DASHBOARD',
    flag: 'dashboard',
    kind: onOff(),
    default: false,
    help: 'serve the queue dashboard at /admin/queues (Redis mode; needs the API key)',
    doc:
      'the BullMQ dashboard at `/admin/queues` (Redis mode; needs `MEDIAFLOW_API_KEY`, which a browser gives as ' +
      'the Basic-auth password)',
  },
  studio: {
    env: 'MEDIAFLOW_STUDIO',
    flag: 'studio',
    kind: onOff(),
    default: true,
    help: 'serve the studio page at /studio/ (0: off)',
    doc:
      'the [studio page](studio.md) at `/studio/` (`0`: off; it needs a build with dev dependencies: ' +
      '[deploy](deploy.md#the-studio))',
  },
  dashboardKeepJobs: {
    env: 'MEDIAFLOW_DASHBOARD_KEEP_JOBS',
    flag: 'dashboard-keep-jobs',
    kind: whole(),
    default: 1000,
    help: 'finished jobs the queue keeps for the dashboard, per queue (Redis mode; 0 keeps none)',
  },
  dashboardKeepAgeMs: {
    env: 'MEDIAFLOW_DASHBOARD_KEEP_AGE',
    flag: 'dashboard-keep-age',
    kind: duration(),
    default: 24 * 3_600_000,
    help: 'how long the queue keeps a finished job for the dashboard (Redis mode)',
  },
  s3Bucket: {
    env: 'MEDIAFLOW_S3_BUCKET',
    flag: 's3-bucket',
    kind: text(),
    help: 'publish outputs to this S3-compatible bucket (credentials: the standard AWS chain)',
    doc:
      'publish outputs to this S3-compatible bucket; credentials from the standard AWS chain ' +
      '([docs/scaling.md](scaling.md#storage-s3-minio-r2-spaces))',
    shown: 'unset (local folder)',
  },
  s3Endpoint: {
    env: 'MEDIAFLOW_S3_ENDPOINT',
    flag: 's3-endpoint',
    kind: text(),
    help: 'S3 API address for MinIO, R2, Spaces (default: AWS)',
    doc: 'S3 API address for MinIO, R2, Spaces',
    shown: 'AWS',
  },
  s3Region: {
    env: 'MEDIAFLOW_S3_REGION',
    flag: 's3-region',
    kind: text(),
    help: 'bucket region (default: the AWS configuration, else us-east-1)',
    doc: 'bucket region (`auto` for R2)',
    shown: 'AWS configuration, else `us-east-1`',
  },
  s3Prefix: {
    env: 'MEDIAFLOW_S3_PREFIX',
    flag: 's3-prefix',
    kind: text(),
    default: '',
    help: 'key prefix before uploads/ (to share a bucket)',
    doc: 'key prefix before `uploads/`, to share a bucket',
  },
  s3ForcePathStyle: {
    env: 'MEDIAFLOW_S3_FORCE_PATH_STYLE',
    flag: 's3-force-path-style',
    kind: onOff(),
    default: false,
    help: 'path-style bucket addressing (MinIO and most self-hosted servers)',
  },
  s3PublicUrl: {
    env: 'MEDIAFLOW_S3_PUBLIC_URL',
    flag: 's3-public-url',
    kind: baseUrl(),
    help: 'base of public object URLs (public bucket or CDN); default: presigned URLs',
    doc: 'base of public object URLs (a public bucket or a CDN)',
    shown: 'unset (presigned URLs)',
  },
  s3UrlTtlMs: {
    env: 'MEDIAFLOW_S3_URL_TTL',
    flag: 's3-url-ttl',
    // S3 refuses presigned URLs valid for longer than 7 days.
    kind: duration({ min: 1000, max: 7 * DAY }),
    default: 24 * 3_600_000,
    help: 'how long presigned URLs stay valid (at most 7d); signed again at each GET /jobs/<id>',
    doc: 'how long presigned URLs stay valid (at most `7d`); signed again at each `GET /jobs/<id>`',
  },
  whisperModelUrl: {
    env: 'MEDIAFLOW_WHISPER_MODEL_URL',
    flag: 'whisper-model-url',
    kind: baseUrl(),
    default: 'https://huggingface.co/ggerganov/whisper.cpp/resolve/main',
    help: 'where whisper model names are fetched from, once, as <url>/ggml-<name>.bin (SHA-256 checked)',
    doc:
      "where a whisper model name is fetched from on first use (by default, whisper.cpp's published models), as " +
      '`<url>/ggml-<name>.bin`, into ' +
      '`<data-dir>/models`; kept only when its SHA-256 is the published one ([Models](transcription.md#models))',
  },
  // Read before the CLI builds its commands (src/cli/main.ts), so the plugins' subcommands exist;
  // every command takes a repeatable --plugin.
  plugins: {
    env: 'MEDIAFLOW_PLUGINS',
    flag: 'plugin',
    kind: list(asWritten),
    default: [],
    help: 'operation plugins to load: package names or paths (comma list; the flag is repeatable)',
    doc:
      'operation plugins to load after the built-ins: package names or paths, comma-separated; `--plugin` is ' +
      'repeatable, and every command takes it ([Plugins](plugins.md#loading))',
  },
} satisfies Record<string, Setting>;
