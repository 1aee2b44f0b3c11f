import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { LocalOutputStore } from '../engine/storage/storage.js';
import { cliServices, type CliServices } from '../runtime.js';
import { cliDirs } from './work-dirs.js';

/** The runtime of one CLI run: outputs under `outDir`, work files and cache where `cliDirs` says. */
export async function cliRuntime(config: Config, registry: Registry, outDir: string): Promise<CliServices> {
  return cliServices({ config, registry, store: new LocalOutputStore(outDir), ...(await cliDirs(process.env)) });
}
