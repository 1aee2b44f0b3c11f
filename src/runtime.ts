import 'reflect-metadata';
import path from 'node:path';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { resolveBinaries, type Binaries } from './engine/run/binaries.js';
import { bucketStoreOf } from './engine/storage/bucket-store.js';
import type { Config } from './engine/config.js';
import { Engine, type EngineObserver } from './engine/run/engine.js';
import { InputCache } from './engine/inputs/input-cache.js';
import { createJobBackend, type Role } from './engine/jobs/backend.js';
import { JobService, type JobObserver } from './engine/jobs/service.js';
import { silentLogger, type Logger } from './engine/logger.js';
import { Registry } from './engine/plugins/registry.js';
import { Slots } from './engine/run/slots.js';
import { LocalOutputStore, Workspaces, workRootOf, type OutputStore } from './engine/storage/storage.js';

/**
 * Explicit tokens: esbuild (tsx, vitest) emits no decorator metadata, so injection by type would
 * break there. Everything is registered as a value or a factory under these.
 */
export const TOKENS = {
  Config: Symbol('Config'),
  Binaries: Symbol('Binaries'),
  Logger: Symbol('Logger'),
  Registry: Symbol('Registry'),
  Store: Symbol('OutputStore'),
  Workspaces: Symbol('Workspaces'),
  Engine: Symbol('Engine'),
  Jobs: Symbol('JobService'),
} as const;

export interface WiringOptions {
  config: Config;
  registry: Registry;
  logger?: Logger;
  binaries?: Binaries;
  /** Where outputs go; defaults to `<dataDir>/uploads`. */
  store?: OutputStore;
  /** Where job workspaces go; defaults to `<dataDir>/work`. */
  workRoot?: string;
  /** Gets called back from each job, for metrics. */
  observer?: EngineObserver;
  /** Where reusable downloads are kept; defaults to `<dataDir>/cache`. */
  cacheDir?: string;
}

/** A child container with the engine and its parts wired; each server or CLI run gets its own. */
export function createContainer(options: WiringOptions): DependencyContainer {
  const c = rootContainer.createChildContainer();
  const { config } = options;
  c.register(TOKENS.Config, { useValue: config });
  c.register(TOKENS.Registry, { useValue: options.registry });
  c.register(TOKENS.Logger, { useValue: options.logger ?? silentLogger });
  c.register(TOKENS.Binaries, { useValue: options.binaries ?? resolveBinaries() });
  c.register(TOKENS.Store, { useValue: options.store ?? bucketStoreOf(config) ?? new LocalOutputStore(path.join(config.dataDir, 'uploads')) });
  c.register(TOKENS.Workspaces, { useValue: new Workspaces(options.workRoot ?? workRootOf(config.dataDir, config.redisUrl !== undefined)) });
  const engine = new Engine({
    config,
    registry: c.resolve(TOKENS.Registry),
    logger: c.resolve(TOKENS.Logger),
    binaries: c.resolve(TOKENS.Binaries),
    store: c.resolve(TOKENS.Store),
    workspaces: c.resolve(TOKENS.Workspaces),
    slots: new Slots(config.concurrency),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(config.cacheBytes > 0 ? { cache: new InputCache(options.cacheDir ?? path.join(config.dataDir, 'cache'), config.cacheBytes) } : {}),
  });
  c.register(TOKENS.Engine, { useValue: engine });
  return c;
}

/**
 * Adds the job stack to a container: the embedded store under `<dataDir>/jobs` with the
 * in-process queue, or Redis when MEDIAFLOW_REDIS_URL is set. Asynchronous because the store
 * loads its records; the server and the worker call it, the CLI (which runs operations
 * directly) does not.
 */
export async function wireJobs(c: DependencyContainer, role: Role, observer?: JobObserver): Promise<JobService> {
  const config = c.resolve<Config>(TOKENS.Config);
  const logger = c.resolve<Logger>(TOKENS.Logger);
  const jobs = new JobService({
    engine: c.resolve<Engine>(TOKENS.Engine),
    config,
    backend: await createJobBackend(config, role, logger),
    logger,
    ...(observer ? { observer } : {}),
  });
  c.register(TOKENS.Jobs, { useValue: jobs });
  // Every process looks for jobs that a Redis outage or a crash left with no worker and no queue entry.
  jobs.watch(config.stalledIntervalMs);
  return jobs;
}
