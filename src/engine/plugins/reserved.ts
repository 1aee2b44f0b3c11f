/**
 * The names mediaflow takes for itself, in one place: a plugin's name becomes a CLI subcommand and its
 * path a server route, so a plugin named like a command or placed under a route of mediaflow's own would
 * register and then break the CLI ("cannot add command") or the server (a duplicated route). These lists
 * are the source: the CLI names its own commands from CLI_COMMANDS (src/cli/main.ts), the server registers
 * its own routes under SERVER_PATHS, and plugin checks refuse both. test/plugin-loading.test.ts checks that
 * the server has no fixed route outside SERVER_PATHS, so a route written by hand cannot be forgotten here.
 */

/**
 * `audio_urls` → `audio-urls`: a plugin's name as its CLI subcommand (and a parameter's as its flag). Names are
 * compared in this form, so `merge_audios` and `merge-audios` are one command, and one pipeline `op`.
 */
export const dashed = (name: string): string => name.replace(/_/g, '-');

/** The CLI's own subcommands, in the order `--help` lists them. */
export const CLI_COMMANDS = [
  'serve',
  'worker',
  'mcp',
  'run',
  'plugins',
  'fonts',
  'models',
  'voices',
  'templates',
  'quickstart',
] as const;
export type CliCommand = (typeof CLI_COMMANDS)[number];

/** The names no plugin may take: the CLI's own commands and commander's `help`. */
export const RESERVED_COMMANDS: readonly string[] = [...CLI_COMMANDS, 'help'];

/** The first segments of the server's own routes, by what they serve. */
export const SERVER_PATHS = {
  uploads: '/uploads',
  files: '/files',
  health: '/health',
  fonts: '/fonts',
  voices: '/voices',
  metrics: '/metrics',
  pipelines: '/pipelines',
  templates: '/templates',
  jobs: '/jobs',
  admin: '/admin',
  openapi: '/openapi.json',
  docs: '/docs',
  mcp: '/mcp',
  studio: '/studio',
} as const;

/** A plugin's path may be neither one of these nor under one. */
export const RESERVED_PATHS: readonly string[] = Object.values(SERVER_PATHS);
