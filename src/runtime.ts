import 'reflect-metadata';
import path from 'node:path';
import { container as rootContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { resolveBinaries, type Binaries } from './engine/exec/binaries.js';
import type { Config } from './engine/config.js';
import { Engine } from './engine/run/engine.js';
import type { EngineObserver } from './engine/run/engine-deps.js';
import { InputCache } from './engine/inputs/input-cache.js';
import type { JobBackend, Role } from './jobs/backend.js';
import type { RedisPartsDeps } from './jobs/fanout/redis-parts.js';
import type { PartRunner } from './engine/run/fanout/part-runner.js';
import type { JobObserver, JobService } from './jobs/service.js';
import { silentLogger, type Logger } from './engine/logger.js';
import type { Registry } from './engine/plugins/registry.js';
import { Slots } from './engine/exec/slots.js';
import { speechSettings } from './engine/speech/speech-settings.js';
import type { SpeechSettings } from './engine/contract/speech.js';
import { TextWorkers } from './engine/subtitles/text-workers.js';
import { LocalOutputStore, Workspaces, workRootOf, type OutputStore } from './engine/storage/storage.js';
import { Voices } from './engine/voice/voices.js';

/**
 * A token that carries the type it resolves to, so `resolve` needs no type argument. Tokens, not
 * classes: esbuild (tsx, vitest) emits no decorator metadata, so injection by type would break there.
 */
export type Token<T> = symbol & { readonly resolvesTo?: T };
const token = <T>(name: string): Token<T> => Symbol(name) as Token<T>;

export const TOKENS = {
  Config: token<Config>('Config'),
  Binaries: token<Binaries>('Binaries'),
  Logger: token<Logger>('Logger'),
  Registry: token<Registry>('Registry'),
  Store: token<OutputStore>('OutputStore'),
  Workspaces: token<Workspaces>('Workspaces'),
  Slots: token<Slots>('Slots'),
  InputCache: token<InputCache>('InputCache'),
  Observer: token<EngineObserver>('EngineObserver'),
  Engine: token<Engine>('Engine'),
  Parts: token<PartRunner>('PartRunner'),
  Voices: token<Voices>('Voices'),
  Speech: token<SpeechSettings>('SpeechSettings'),
  TextWorkers: token<TextWorkers>('TextWorkers'),
  Jobs: token<JobService>('JobService'),
} as const;

/** The part a token names, made (with the parts it needs) on first use. */
export const resolve = <T>(c: DependencyContainer, part: Token<T>): T => c.resolve<T>(part);

/** Registers how a part is made: from the parts it resolves, once per runtime, when first needed. */
function provide<T>(c: DependencyContainer, part: Token<T>, make: (c: DependencyContainer) => T): void {
  c.register<T>(part, { useFactory: instanceCachingFactory(make) });
}

export interface RuntimeOptions {
  config: Config;
  registry: Registry;
  logger?: Logger;
  binaries?: Binaries;
  /** Where outputs go; defaults to the configured bucket, else `<dataDir>/uploads`. */
  store?: OutputStore;
  /** Where job workspaces go; defaults to `<dataDir>/work` (`work/pid-<pid>` with Redis). */
  workRoot?: string;
  /** Gets called back from each job, for metrics. */
  observer?: EngineObserver;
  /** Where reusable downloads are kept; defaults to `<dataDir>/cache`. */
  cacheDir?: string;
}

/**
 * The composition root: a child container that knows how to make every part of one process (a
 * server, a worker or a CLI run), each part made once, from the configuration, when first resolved.
 * What the caller gives (the CLI's output folder, a test's binaries) takes the place of the default.
 * Asynchronous because the parts the configuration chooses are loaded then: the AWS SDK only with a bucket.
 */
export async function createRuntime(options: RuntimeOptions): Promise<DependencyContainer> {
  const { config } = options;
  // An S3-compatible bucket when MEDIAFLOW_S3_BUCKET is set, else the local folder the server serves.
  const buckets =
    options.store === undefined && config.s3Bucket ? await import('./engine/storage/bucket-store.js') : undefined;
  return compose(
    options,
    () => buckets?.bucketStoreOf(config) ?? new LocalOutputStore(path.join(config.dataDir, 'uploads')),
  );
}

/** The container of createRuntime, its outputs going to `options.store`, else to the store `defaultStore` makes. */
function compose(options: RuntimeOptions, defaultStore: () => OutputStore): DependencyContainer {
  const c = rootContainer.createChildContainer();
  const { config } = options;
  c.register(TOKENS.Config, { useValue: config });
  c.register(TOKENS.Registry, { useValue: options.registry });
  c.register(TOKENS.Logger, { useValue: options.logger ?? silentLogger });
  if (options.observer) c.register(TOKENS.Observer, { useValue: options.observer });
  provide(c, TOKENS.Binaries, () => options.binaries ?? resolveBinaries());
  provide(c, TOKENS.Store, () => options.store ?? defaultStore());
  // With Redis, processes may share the data directory: each then works in a folder of its own.
  const workRoot = options.workRoot ?? workRootOf(config.dataDir, config.redisUrl !== undefined);
  provide(c, TOKENS.Workspaces, () => new Workspaces(workRoot));
  provide(c, TOKENS.Slots, () => new Slots(config.concurrency));
  const cacheDir = options.cacheDir ?? path.join(config.dataDir, 'cache');
  provide(c, TOKENS.InputCache, () => new InputCache(cacheDir, config.cacheBytes));
  // Text to speech: the engines it finds are looked up once, when first asked.
  provide(c, TOKENS.Voices, (c) => new Voices({ settings: config, ffmpeg: resolve(c, TOKENS.Binaries).ffmpeg }));
  provide(c, TOKENS.Speech, () => speechSettings(config));
  // Its threads start on first use, one per job slot at most.
  provide(c, TOKENS.TextWorkers, () => new TextWorkers(config.concurrency));
  provide(
    c,
    TOKENS.Engine,
    (c) =>
      new Engine({
        config,
        registry: resolve(c, TOKENS.Registry),
        logger: resolve(c, TOKENS.Logger),
        binaries: resolve(c, TOKENS.Binaries),
        store: resolve(c, TOKENS.Store),
        workspaces: resolve(c, TOKENS.Workspaces),
        slots: resolve(c, TOKENS.Slots),
        voices: resolve(c, TOKENS.Voices),
        speech: resolve(c, TOKENS.Speech),
        textWorkers: resolve(c, TOKENS.TextWorkers),
        ...(c.isRegistered(TOKENS.Observer, true) ? { observer: resolve(c, TOKENS.Observer) } : {}),
        // A cache size of 0 turns the cache off: every input is downloaded every time.
        ...(config.cacheBytes > 0 ? { cache: resolve(c, TOKENS.InputCache) } : {}),
        // Redis mode's split encodes put their parts on the shared queue (wireJobs); else they run in this process.
        ...(c.isRegistered(TOKENS.Parts, true) ? { parts: resolve(c, TOKENS.Parts) } : {}),
      }),
  );
  return c;
}

/**
 * Adds the job stack to a container: the embedded store under `<dataDir>/jobs` with the
 * in-process queue, or Redis when MEDIAFLOW_REDIS_URL is set. Asynchronous because the store
 * loads its records; the server and the worker call it, the CLI (which runs operations
 * directly) does not, and so never loads the job stack.
 */
export async function wireJobs(c: DependencyContainer, role: Role, observer?: JobObserver): Promise<JobService> {
  const [{ createJobBackend }, { jobHandlers }, { JobService }] = await Promise.all([
    import('./jobs/backend.js'),
    import('./jobs/handlers.js'),
    import('./jobs/service.js'),
  ]);
  const config = resolve(c, TOKENS.Config);
  const logger = resolve(c, TOKENS.Logger);
  const outputStore = resolve(c, TOKENS.Store);
  let backend = await createJobBackend(config, role, logger);
  if (backend.redis) backend = await withParts(c, { ...backend, redis: backend.redis });
  // After the parts are wired: the engine is made with their runner.
  const handlers = jobHandlers({
    engine: resolve(c, TOKENS.Engine),
    registry: resolve(c, TOKENS.Registry),
    store: outputStore,
    pipelinesDir: config.pipelinesDir,
  });
  const jobs = new JobService({
    handlers,
    outputStore,
    config,
    backend,
    logger,
    ...(observer ? { observer } : {}),
  });
  c.register(TOKENS.Jobs, { useValue: jobs });
  // Every process looks for jobs that a Redis outage or a crash left with no worker and no queue entry.
  jobs.watch(config.stalledIntervalMs);
  return jobs;
}

/**
 * Redis mode's parts queue (docs/fanout.md): registered as the engine's part runner, shown on the dashboard, and
 * closed with the backend.
 */
async function withParts(c: DependencyContainer, backend: RedisPartsDeps['backend']): Promise<JobBackend> {
  const { redisParts } = await import('./jobs/fanout/redis-parts.js');
  const parts = redisParts({
    config: resolve(c, TOKENS.Config),
    backend,
    store: resolve(c, TOKENS.Store),
    slots: resolve(c, TOKENS.Slots),
    workspaces: resolve(c, TOKENS.Workspaces),
    ffmpeg: resolve(c, TOKENS.Binaries).ffmpeg,
    logger: resolve(c, TOKENS.Logger),
  });
  c.register(TOKENS.Parts, { useValue: parts.runner });
  return {
    ...backend,
    bullQueues: [...(backend.bullQueues ?? []), parts.queue],
    close: async () => {
      await parts.close();
      await backend.close();
    },
  };
}

/**
 * What the HTTP server uses: the engine, the store it serves or links outputs from (and keeps uploaded files in), work
 * folders, ffmpeg and the job stack.
 */
export interface ServerServices {
  engine: Engine;
  store: OutputStore;
  /** Work folders: files uploaded with a request wait in one until they are published. */
  workspaces: Workspaces;
  binaries: Binaries;
  jobs: JobService;
  /** The voices of text to speech, which GET /voices lists and /health sums up. */
  voices: Voices;
  /** The engine's speech recognition, which /health describes. */
  speech: SpeechSettings;
}

/**
 * The server's runtime (and `mediaflow mcp`'s, a server on stdio); its job stack in the 'api' role works jobs
 * too, unless MEDIAFLOW_WORKERS is 0.
 */
export async function serverServices(options: RuntimeOptions, jobObserver?: JobObserver): Promise<ServerServices> {
  const c = await createRuntime(options);
  // The job stack first: in Redis mode it gives the engine its part runner.
  const jobs = await wireJobs(c, 'api', jobObserver);
  const engine = resolve(c, TOKENS.Engine);
  const binaries = resolve(c, TOKENS.Binaries);
  return {
    engine,
    store: resolve(c, TOKENS.Store),
    workspaces: resolve(c, TOKENS.Workspaces),
    binaries,
    jobs,
    voices: resolve(c, TOKENS.Voices),
    speech: resolve(c, TOKENS.Speech),
  };
}

/** `mediaflow worker`'s runtime: the job stack alone, working jobs from the shared queue. */
export async function workerServices(options: RuntimeOptions): Promise<JobService> {
  return wireJobs(await createRuntime(options), 'worker');
}

/**
 * What a CLI run uses: the engine, and the work folders `--output` is staged in. No job stack: the
 * CLI runs operations directly. The CLI names its output folder, so no store is chosen (or loaded).
 */
export interface CliServices {
  engine: Engine;
  workspaces: Workspaces;
}

export function cliServices(options: RuntimeOptions & { store: OutputStore }): CliServices {
  const c = compose(options, () => options.store);
  return { engine: resolve(c, TOKENS.Engine), workspaces: resolve(c, TOKENS.Workspaces) };
}
