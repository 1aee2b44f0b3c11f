import { pluginFlags, pluginRequests, registerPlugins } from '../engine/plugins/plugin-loader.js';
import { Registry } from '../engine/plugins/registry.js';
import { isBuiltinName, loadBuiltins } from '../plugins/builtins.js';

/**
 * The operations a command line needs, with the third-party plugins that `mediaflow.config.*`, `MEDIAFLOW_PLUGINS`
 * and its `--plugin` flags name (one that cannot load throws): every built-in, for help and for the CLI's own
 * commands. A command line that runs one built-in operation, with no third-party plugin to check against the others,
 * gets that operation alone: the other operations' modules do not load (docs/performance.md, "Start-up").
 */
export async function commandRegistry(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Registry> {
  const requests = await pluginRequests({ cwd, env, plugins: pluginFlags(args) });
  const [command] = args;
  const alone = requests.length === 0 && command !== undefined && isBuiltinName(command) ? [command] : undefined;
  const registry = new Registry(await loadBuiltins(alone));
  await registerPlugins(registry, requests);
  return registry;
}
