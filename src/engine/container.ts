import 'reflect-metadata';
import path from 'node:path';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { resolveBinaries, type Binaries } from './binaries.js';
import type { Config } from './config.js';
import { Engine, type EngineObserver } from './engine.js';
import { InputCache } from './input-cache.js';
import { silentLogger, type Logger } from './logger.js';
import { LocalJobQueue, type JobQueue } from './queue.js';
import { Registry } from './registry.js';
import { LocalOutputStore, Workspaces, type OutputStore } from './storage.js';

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
  Queue: Symbol('JobQueue'),
  Engine: Symbol('Engine'),
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
  c.register(TOKENS.Store, { useValue: options.store ?? new LocalOutputStore(path.join(config.dataDir, 'uploads')) });
  c.register(TOKENS.Workspaces, { useValue: new Workspaces(options.workRoot ?? path.join(config.dataDir, 'work')) });
  c.register(TOKENS.Queue, { useValue: new LocalJobQueue(config.concurrency, config.maxQueue) as JobQueue });
  const engine = new Engine({
    config,
    registry: c.resolve(TOKENS.Registry),
    logger: c.resolve(TOKENS.Logger),
    binaries: c.resolve(TOKENS.Binaries),
    store: c.resolve(TOKENS.Store),
    workspaces: c.resolve(TOKENS.Workspaces),
    queue: c.resolve(TOKENS.Queue),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(config.cacheBytes > 0 ? { cache: new InputCache(options.cacheDir ?? path.join(config.dataDir, 'cache'), config.cacheBytes) } : {}),
  });
  c.register(TOKENS.Engine, { useValue: engine });
  return c;
}
