import type { Config } from '../engine/config.js';
import { createContainer, TOKENS } from '../engine/container.js';
import type { Registry } from '../engine/plugins/registry.js';
import type { Engine } from '../engine/run/engine.js';
import { LocalOutputStore } from '../engine/storage/storage.js';
import { cliDirs } from './work-dirs.js';

/** An engine for one CLI run: outputs under `outDir`, work files and cache where `cliDirs` says. */
export async function cliEngine(config: Config, registry: Registry, outDir: string): Promise<Engine> {
  const dirs = await cliDirs(process.env);
  const container = createContainer({ config, registry, store: new LocalOutputStore(outDir), ...dirs });
  return container.resolve<Engine>(TOKENS.Engine);
}
