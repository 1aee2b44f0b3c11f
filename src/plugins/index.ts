import { loadPlugins, type PluginLoadOptions } from '../engine/plugins/plugin-loader.js';
import { Registry } from '../engine/plugins/registry.js';
import { loadBuiltins } from './builtins.js';

/** Every built-in operation, in the order of src/plugins/builtins.ts. */
export const builtinPlugins = await loadBuiltins();

/** A registry holding the built-ins; third-party plugins are registered after them. */
export function builtinRegistry(): Registry {
  return new Registry(builtinPlugins);
}

/**
 * The built-ins, then the third-party plugins that `mediaflow.config.*`, `MEDIAFLOW_PLUGINS` and
 * `--plugin` name (see src/engine/plugins/plugin-loader.ts). Throws when one cannot be loaded or is invalid.
 */
export async function loadRegistry(options: PluginLoadOptions = {}): Promise<Registry> {
  const registry = builtinRegistry();
  await loadPlugins(registry, options);
  return registry;
}
