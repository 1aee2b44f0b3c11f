/**
 * The `mediaflow` package's public entry. Plugins use the SDK part (`definePlugin`, the schema
 * helpers, `argv`, `escapeFilterValue`, the facts types, the errors); programs that embed
 * mediaflow use the rest (load plugins, build or start the server, the OpenAPI document).
 * Nothing else in the package is public: a plugin never reaches into `src/engine`.
 */

// The plugin SDK: everything a plugin may use, the built-ins included.
export * from './sdk.js';

// Config files: `mediaflow.config.js` may `export default defineConfig({ plugins: [...] })`.
export {
  CONFIG_FILES,
  defineConfig,
  loadPlugins,
  PluginConfigError,
  pluginFlags,
  type MediaflowConfigFile,
  type PluginLoadOptions,
} from './engine/plugins/plugin-loader.js';

// Registries: the built-ins, then the plugins of the config file, MEDIAFLOW_PLUGINS and --plugin.
export { PluginError, Registry, type PluginInfo } from './engine/plugins/registry.js';
export { builtinPlugins, builtinRegistry, loadRegistry } from './plugins/index.js';

// Embedding the server.
export { loadConfig, type Config } from './engine/config.js';
export { resolveBinaries, type Binaries } from './engine/exec/binaries.js';
export type { ServerOptions } from './server/app.js';
export { startServer } from './server/start.js';
export { openApiDocument } from './server/api-document.js';
export type { Engine, JobResult } from './engine/run/engine.js';
export type { JobOptions } from './engine/run/job-run.js';

/**
 * Builds the server (Fastify, the routes, the job stack) without listening. Fastify and the job stack load at the
 * first call: a plugin imports this entry for the SDK alone, in every process that loads it (`mediaflow --version`
 * too).
 */
export const buildServer: typeof import('./server/app.js').buildServer = async (options) =>
  (await import('./server/app.js')).buildServer(options);
