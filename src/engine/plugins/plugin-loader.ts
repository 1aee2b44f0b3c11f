import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseSetting, SETTINGS } from '../config.js';
import { DEFINED_IN, type PluginDefinition } from '../contract/plugin.js';
import { importProblem } from './plugin-import.js';
import { PluginError, type Registry } from './registry.js';

/**
 * Loads third-party operation plugins, after the built-ins, from three places in this order:
 * a `mediaflow.config.{js,mjs,json}` file in the working directory, `MEDIAFLOW_PLUGINS` (a comma
 * list), and the CLI's repeatable `--plugin`. Each entry is a package name (resolved from the
 * working directory, then from where mediaflow is installed) or a path (relative to the working
 * directory, or to the config file). A module's default export is one plugin or a list of them.
 * The same file listed twice loads once. Any problem throws a PluginError naming the plugin and
 * what is wrong: a front end refuses to start rather than run half-configured.
 */

/** Config file names, in the order they are looked for; at most one may exist. */
export const CONFIG_FILES = ['mediaflow.config.js', 'mediaflow.config.mjs', 'mediaflow.config.json'] as const;

/** What `mediaflow.config.*` may hold. */
export interface MediaflowConfigFile {
  /** Package names, paths, or (in a .js/.mjs file) plugin objects. */
  plugins?: Array<string | PluginDefinition>;
}

/** Declares a config file's content; only adds types, like Vite's `defineConfig`. */
export function defineConfig(config: MediaflowConfigFile): MediaflowConfigFile {
  return config;
}

export interface PluginLoadOptions {
  /** Where package names and relative paths resolve from, and where the config file is looked for. */
  cwd?: string;
  /** Reads MEDIAFLOW_PLUGINS from here. */
  env?: NodeJS.ProcessEnv;
  /** Entries from `--plugin` flags. */
  plugins?: readonly string[];
  /** Whether to read `mediaflow.config.*` (default true). */
  configFile?: boolean;
}

/** One entry to load: what was written, where it was written (for messages), and what it resolves from. */
export interface PluginRequest {
  entry: string | PluginDefinition;
  origin: string;
  base: string;
  /** A plugin object's package version, found when the config file is read. */
  version?: string;
}

/** mediaflow's own package folder (dist/engine or src/engine is two levels down). */
const OWN_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The `--plugin` values of an argv, as `--plugin x` or `--plugin=x`, before any `--`. */
export function pluginFlags(argv: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '--plugin' && argv[i + 1] !== undefined) values.push(argv[++i]!);
    else if (arg.startsWith('--plugin=')) values.push(arg.slice('--plugin='.length));
  }
  return values
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}

/** Whether an entry names a file or folder rather than a package. */
const isPathEntry = (entry: string) => entry.startsWith('.') || entry.startsWith('file:') || path.isAbsolute(entry);

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** Picks a target from a package.json `exports` value for `import` (conditions import, node, default). */
function exportTarget(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = exportTarget(item);
      if (target) return target;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const condition of ['import', 'node', 'default']) {
      if (condition in value) {
        const target = exportTarget((value as Record<string, unknown>)[condition]);
        if (target) return target;
      }
    }
  }
  return undefined;
}

/** The file a package folder's entry point (`.`, or a subpath such as `./extra`) is, as `import` would find it. */
function packageEntry(dir: string, subpath: string): string | undefined {
  const manifest = existsSync(path.join(dir, 'package.json')) ? readJson(path.join(dir, 'package.json')) : {};
  const exports = manifest.exports;
  if (exports !== undefined && exports !== null) {
    const map =
      typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((key) => key.startsWith('.'))
        ? (exports as Record<string, unknown>)
        : { '.': exports };
    let target = exportTarget(map[subpath]);
    if (target === undefined) {
      for (const [key, value] of Object.entries(map)) {
        const star = key.indexOf('*');
        if (star < 0 || !subpath.startsWith(key.slice(0, star)) || !subpath.endsWith(key.slice(star + 1))) continue;
        const match = subpath.slice(star, subpath.length - (key.length - star - 1));
        target = exportTarget(value)?.replaceAll('*', match);
        if (target) break;
      }
    }
    return target === undefined ? undefined : path.join(dir, target);
  }
  if (subpath !== '.') return path.join(dir, subpath);
  const main = typeof manifest.main === 'string' ? manifest.main : 'index.js';
  for (const candidate of [main, `${main}.js`, path.join(main, 'index.js')]) {
    const file = path.join(dir, candidate);
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}

/** The folder of an installed package, looked for in `node_modules` from `base` upwards. */
function findPackage(name: string, base: string): string | undefined {
  for (let dir = path.resolve(base); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The file behind an entry, with the package folder it belongs to (for its version), or a reason it cannot be found.
 */
function resolveEntry(entry: string, base: string): { file: string; packageDir?: string } | { missing: string } {
  if (isPathEntry(entry)) {
    const target = entry.startsWith('file:') ? fileURLToPath(entry) : path.resolve(base, entry);
    if (!existsSync(target)) return { missing: `${target} does not exist` };
    if (statSync(target).isDirectory()) {
      const file = packageEntry(target, '.');
      if (!file || !existsSync(file))
        return { missing: `the folder ${target} has no entry point (package.json "exports" or "main", or index.js)` };
      return { file, packageDir: target };
    }
    return { file: target };
  }
  const parts = entry.split('/');
  const scoped = entry.startsWith('@');
  const name = parts.slice(0, scoped ? 2 : 1).join('/');
  const subpath = ['.', ...parts.slice(scoped ? 2 : 1)].join('/');
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name))
    return { missing: `'${entry}' is neither a package name nor a path (paths start with ./, ../ or /)` };
  const dir = findPackage(name, base) ?? findPackage(name, OWN_ROOT);
  if (!dir)
    return {
      missing:
        `no package '${name}' is installed where ${base} or mediaflow can see it (npm install ${name}, or give ` +
        `a path starting with ./)`,
    };
  const file = packageEntry(dir, subpath);
  if (!file || !existsSync(file))
    return { missing: `the package '${name}' has no entry point for '${subpath}' that import can use` };
  return { file, packageDir: dir };
}

/** The version of the package a plugin file belongs to, unless that package is mediaflow itself. */
function packageVersion(file: string, packageDir?: string): string | undefined {
  for (let dir = packageDir ?? path.dirname(file); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      if (path.resolve(dir) === OWN_ROOT) return undefined;
      const { version } = readJson(manifest);
      return typeof version === 'string' ? version : undefined;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The version of a plugin object's package: the one holding the module that called
 * `definePlugin` for it (a package's plugin imported into the config file), else the config
 * file's own (a plugin written inline).
 */
function objectVersion(plugin: object, configFile: string): string | undefined {
  const definedIn = (plugin as { [DEFINED_IN]?: unknown })[DEFINED_IN];
  const file =
    typeof definedIn === 'string' ? (definedIn.startsWith('file:') ? fileURLToPath(definedIn) : definedIn) : configFile;
  return packageVersion(file);
}

/** The first line of a thrown value's message. */
const firstLine = (error: unknown) => String((error as Error)?.message ?? error).split('\n')[0]!;

/** A module's plugins: its default export, one plugin or a list. */
function pluginsOf(module: Record<string, unknown>, label: string, origin: string): unknown[] {
  const exported = 'default' in module ? module.default : undefined;
  if (exported === undefined || exported === null) {
    throw new PluginError(
      label,
      'the module has no default export: write `export default definePlugin({ ... })`',
      origin,
      'could not be loaded',
    );
  }
  return Array.isArray(exported) ? exported : [exported];
}

/** A config file that cannot be used; the message names the file and what is wrong. */
export class PluginConfigError extends Error {
  constructor(file: string, problem: string) {
    super(`${file} is not a usable mediaflow config file: ${problem}`);
    this.name = 'PluginConfigError';
  }
}

/** Reads `mediaflow.config.*` in `cwd`, if there is one: its entries, relative to its folder. */
async function configRequests(cwd: string): Promise<PluginRequest[]> {
  const found = CONFIG_FILES.filter((name) => existsSync(path.join(cwd, name)));
  if (found.length === 0) return [];
  const [name] = found;
  const fail = (problem: string): never => {
    throw new PluginConfigError(name!, problem);
  };
  if (found.length > 1) fail(`there are ${found.join(' and ')} in ${cwd}: keep one`);
  const file = path.join(cwd, name!);
  let content: unknown;
  try {
    if (name!.endsWith('.json')) content = readJson(file);
    else {
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      content = module.default ?? module;
    }
  } catch (error) {
    fail(firstLine(error));
  }
  if (typeof content !== 'object' || content === null || Array.isArray(content))
    fail('it must hold an object such as { "plugins": ["mediaflow-plugin-x", "./plugins/mine.js"] }');
  const unknown = Object.keys(content as object).filter((key) => key !== 'plugins');
  if (unknown.length > 0) fail(`unknown key ${unknown.map((key) => `'${key}'`).join(', ')} (it may hold: plugins)`);
  const plugins = (content as MediaflowConfigFile).plugins ?? [];
  if (!Array.isArray(plugins)) fail('plugins must be a list of package names, paths or plugin objects');
  return plugins.map((entry) => {
    if (typeof entry === 'string' && entry.trim() !== '') return { entry: entry.trim(), origin: name!, base: cwd };
    if (typeof entry === 'object' && entry !== null && !name!.endsWith('.json')) {
      const version = objectVersion(entry, file);
      return { entry, origin: name!, base: cwd, ...(version !== undefined ? { version } : {}) };
    }
    return fail(`plugins holds ${JSON.stringify(entry)}, which is neither a package name, a path nor a plugin object`);
  });
}

/** Everything to load, in order: the config file, MEDIAFLOW_PLUGINS, then --plugin flags. */
export async function pluginRequests(options: PluginLoadOptions = {}): Promise<PluginRequest[]> {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const setting = SETTINGS.find((s) => s.key === 'plugins')!;
  const fromEnv = options.env?.[setting.env];
  const envEntries = fromEnv ? (parseSetting(setting, fromEnv) as string[]) : [];
  return [
    ...(options.configFile === false ? [] : await configRequests(cwd)),
    ...envEntries.map((entry) => ({ entry, origin: setting.env, base: cwd })),
    ...(options.plugins ?? []).map((entry) => ({ entry, origin: '--plugin', base: cwd })),
  ];
}

/** Loads the third-party plugins `options` name into `registry` (which holds the built-ins already). */
export async function loadPlugins(registry: Registry, options: PluginLoadOptions = {}): Promise<void> {
  await registerPlugins(registry, await pluginRequests(options));
}

/** Loads the third-party plugins of `requests` (pluginRequests) into `registry`, which holds the built-ins already. */
export async function registerPlugins(registry: Registry, requests: readonly PluginRequest[]): Promise<void> {
  const loaded = new Set<string>();
  for (const request of requests) {
    if (typeof request.entry !== 'string') {
      // A plugin object written in (or imported into) a .js config file.
      registry.register(
        request.entry,
        request.origin,
        request.version !== undefined ? { version: request.version } : {},
      );
      continue;
    }
    const entry = request.entry;
    const source = `${entry} (${request.origin})`;
    const resolved = resolveEntry(entry, request.base);
    if ('missing' in resolved)
      throw new PluginError(entry, `cannot be found: ${resolved.missing}`, request.origin, 'could not be loaded');
    const file = realpathSync(resolved.file);
    if (loaded.has(file)) continue;
    loaded.add(file);
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (error) {
      throw new PluginError(entry, await importProblem(error, file), request.origin, 'could not be loaded');
    }
    const version = packageVersion(file, resolved.packageDir);
    for (const plugin of pluginsOf(module, entry, request.origin)) {
      registry.register(plugin as PluginDefinition, source, version !== undefined ? { version } : {});
    }
  }
}
