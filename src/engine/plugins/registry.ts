import { answersProblem, contractProblem, sampleOutputProblem, schemaProblem } from './plugin-check.js';
import type { PluginDefinition } from '../contract/plugin.js';
import { dashed, RESERVED_COMMANDS, RESERVED_PATHS } from './reserved.js';

/** Where a plugin came from, in its errors: not said of a built-in, nor of a source that is its own name. */
const origin = (plugin: string, source?: string) =>
  source && source !== 'built-in' && source !== plugin ? ` from ${source}` : '';

/**
 * A plugin that cannot be loaded or registered; the message names the plugin (and where it came
 * from) and what is wrong.
 */
export class PluginError extends Error {
  constructor(
    readonly plugin: string,
    readonly problem: string,
    readonly source?: string,
    verb = 'is invalid',
  ) {
    super(`Plugin '${plugin}'${origin(plugin, source)} ${verb}: ${problem}`);
    this.name = 'PluginError';
  }
}

/** What `mediaflow plugins` and the API docs say about a registered plugin. */
export interface PluginInfo {
  /** `built-in`, a package name or a path. */
  source: string;
  /** The plugin's `version`, else its package's. */
  version?: string;
}

/** The route of a path, without its trailing slash, for comparing. */
const routeKey = (path: string) => path.replace(/\/+$/, '').toLowerCase();

/** Reports the first problem with a plugin's shape, or undefined. */
function shapeProblem(plugin: PluginDefinition): string | undefined {
  if (typeof plugin !== 'object' || plugin === null) return 'it is not an object';
  // First: a plugin made for another contract may be shaped differently, and this is what to tell its user.
  const contract = contractProblem(plugin.contract);
  if (contract) return contract;
  if (typeof plugin.name !== 'string' || !/^[a-z][a-z0-9_-]*$/.test(plugin.name))
    return 'name must be lower-case letters, digits, - or _';
  if (RESERVED_COMMANDS.includes(dashed(plugin.name))) {
    return `name '${plugin.name}' is a command of mediaflow itself`;
  }
  if (typeof plugin.path !== 'string' || !/^(\/[A-Za-z0-9_-]+)+\/?$/.test(plugin.path)) {
    return (
      `path ${typeof plugin.path === 'string' ? `'${plugin.path}' ` : ''}must start with / and hold only ` +
      `letters, digits, -, _ and single /`
    );
  }
  const key = routeKey(plugin.path);
  const shadowed = RESERVED_PATHS.find((reserved) => key === reserved || key.startsWith(`${reserved}/`));
  if (shadowed) return `path ${plugin.path} shadows mediaflow's own route ${shadowed}`;
  if (typeof plugin.summary !== 'string' || plugin.summary === '') return 'summary is missing';
  if (plugin.description !== undefined && typeof plugin.description !== 'string') return 'description must be a string';
  if (plugin.version !== undefined && typeof plugin.version !== 'string') return 'version must be a string';
  const schema = schemaProblem(plugin.params) ?? answersProblem(plugin.answers);
  if (schema) return schema;
  for (const hook of ['output', 'build', 'message'] as const) {
    if (typeof plugin[hook] !== 'function') return `${hook}() is missing (it must be a function)`;
  }
  for (const hook of ['checkParams', 'inputs', 'outputSeconds', 'outputSize', 'check'] as const) {
    if (plugin[hook] !== undefined && typeof plugin[hook] !== 'function') return `${hook} must be a function`;
  }
  return sampleOutputProblem(plugin);
}

/** The registered operations, found by name or by route. */
export class Registry {
  private readonly byName = new Map<string, PluginDefinition>();
  private readonly infos = new Map<string, PluginInfo>();

  /** A registry holding `builtins`, registered as built-in; third-party plugins are registered after them. */
  constructor(builtins: readonly PluginDefinition[] = []) {
    for (const plugin of builtins) this.register(plugin);
  }

  /**
   * Checks and adds a plugin; throws a PluginError for a bad shape or schema, a contract it does
   * not share, or a name or route taken.
   */
  register(plugin: PluginDefinition, source = 'built-in', info: { version?: string } = {}): void {
    const label = typeof plugin?.name === 'string' && plugin.name !== '' ? plugin.name : String(source);
    const problem = shapeProblem(plugin);
    if (problem) throw new PluginError(label, problem, source);
    const taken = this.list().find((other) => dashed(other.name) === dashed(plugin.name));
    if (taken)
      throw new PluginError(
        plugin.name,
        `the name is already taken by '${taken.name}' (${this.sourceOf(taken.name)})`,
        source,
      );
    const clash = this.list().find((other) => routeKey(other.path) === routeKey(plugin.path));
    if (clash)
      throw new PluginError(
        plugin.name,
        `path ${plugin.path} is already the route of '${clash.name}' (${this.sourceOf(clash.name)})`,
        source,
      );
    this.byName.set(plugin.name, plugin);
    const version = plugin.version ?? info.version;
    this.infos.set(plugin.name, { source, ...(version !== undefined ? { version } : {}) });
  }

  get(name: string): PluginDefinition | undefined {
    return this.byName.get(name);
  }

  /** Where a plugin came from (`built-in`, a package name or a path). */
  sourceOf(name: string): string | undefined {
    return this.infos.get(name)?.source;
  }

  /** Where a plugin came from and its version. */
  infoOf(name: string): PluginInfo | undefined {
    return this.infos.get(name);
  }

  list(): PluginDefinition[] {
    return [...this.byName.values()];
  }
}
