import { CONTRACT_VERSION, inputSpecOf, type PluginDefinition } from './plugin.js';

/** Paths no plugin may take: the server's own routes. */
const RESERVED_PATHS = ['/uploads', '/health', '/metrics', '/pipelines', '/openapi.json', '/docs'];

/** A plugin that cannot be registered; the message names the plugin and what is wrong. */
export class PluginError extends Error {
  constructor(plugin: string, problem: string) {
    super(`Plugin '${plugin}' is invalid: ${problem}`);
    this.name = 'PluginError';
  }
}

/** The route of a path, without its trailing slash, for comparing. */
const routeKey = (path: string) => path.replace(/\/+$/, '').toLowerCase();

/** Reports the first problem with a plugin's shape, or undefined. */
function shapeProblem(plugin: PluginDefinition): string | undefined {
  if (typeof plugin !== 'object' || plugin === null) return 'it is not an object';
  if (typeof plugin.name !== 'string' || !/^[a-z][a-z0-9_-]*$/.test(plugin.name)) return 'name must be lower-case letters, digits, - or _';
  if (plugin.contract !== CONTRACT_VERSION) {
    return `it targets plugin contract ${String(plugin.contract)}, this mediaflow implements contract ${CONTRACT_VERSION}`;
  }
  if (typeof plugin.path !== 'string' || !/^\/[A-Za-z0-9_\-/]+$/.test(plugin.path)) return 'path must start with / and hold only letters, digits, -, _ and /';
  const key = routeKey(plugin.path);
  if (RESERVED_PATHS.some((reserved) => key === reserved || key.startsWith(`${reserved}/`))) return `path ${plugin.path} shadows a built-in route`;
  if (typeof plugin.summary !== 'string' || plugin.summary === '') return 'summary is missing';
  if (plugin.params?.type !== 'object' || typeof plugin.params.properties !== 'object') return 'params must be a TypeBox object schema';
  for (const [key, property] of Object.entries(plugin.params.properties)) {
    if (!/^[a-z][a-z0-9_]*$/.test(key)) return `parameter '${key}' must be snake_case`;
    const type = (property as { type?: string }).type;
    if (!['string', 'integer', 'number', 'boolean'].includes(String(type))) return `parameter '${key}' has unsupported type ${String(type)}`;
    if (inputSpecOf(property) && type !== 'string') return `input parameter '${key}' must be a string`;
  }
  for (const hook of ['output', 'build', 'message'] as const) {
    if (typeof plugin[hook] !== 'function') return `${hook}() is missing`;
  }
  if (plugin.check !== undefined && typeof plugin.check !== 'function') return 'check must be a function';
  return undefined;
}

/** The registered operations, found by name or by route. */
export class Registry {
  private readonly byName = new Map<string, PluginDefinition>();
  private readonly sources = new Map<string, string>();

  /** Checks and adds a plugin; throws a PluginError for a bad shape or a name or route taken. */
  register(plugin: PluginDefinition, source = 'built-in'): void {
    const label = typeof plugin?.name === 'string' ? plugin.name : String(source);
    const problem = shapeProblem(plugin);
    if (problem) throw new PluginError(label, problem);
    const existing = this.byName.get(plugin.name);
    if (existing) throw new PluginError(plugin.name, `the name is already taken by the plugin from ${this.sources.get(plugin.name)}`);
    const clash = this.list().find((other) => routeKey(other.path) === routeKey(plugin.path));
    if (clash) throw new PluginError(plugin.name, `path ${plugin.path} is already the route of '${clash.name}'`);
    this.byName.set(plugin.name, plugin);
    this.sources.set(plugin.name, source);
  }

  get(name: string): PluginDefinition | undefined {
    return this.byName.get(name);
  }

  /** Where a plugin came from (`built-in`, a package name or a path). */
  sourceOf(name: string): string | undefined {
    return this.sources.get(name);
  }

  list(): PluginDefinition[] {
    return [...this.byName.values()];
  }
}
