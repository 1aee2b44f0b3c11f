/**
 * The names mediaflow takes for itself, in one place: a plugin's name becomes a CLI subcommand and its
 * path a server route, so a plugin named like a command or placed under a route of mediaflow's own would
 * register and then break the CLI ("cannot add command") or the server (a duplicated route). Plugin
 * checks refuse these; test/plugin-loading.test.ts checks that the CLI's commands and the server's fixed
 * routes are exactly these, so a new command or route cannot be forgotten here.
 */

/**
 * `audio_urls` → `audio-urls`: a plugin's name as its CLI subcommand (and a parameter's as its flag). Names are
 * compared in this form, so `merge_audios` and `merge-audios` are one command, and one pipeline `op`.
 */
export const dashed = (name: string): string => name.replace(/_/g, '-');

/** The CLI's own subcommands (`help` is commander's). */
export const RESERVED_COMMANDS: readonly string[] = [
  'serve', 'worker', 'run', 'plugins', 'fonts', 'quickstart', 'help',
];

/** The first segments of the server's own routes; a plugin's path may be neither one nor under one. */
export const RESERVED_PATHS: readonly string[] = [
  '/uploads', '/health', '/fonts', '/metrics', '/pipelines', '/jobs', '/admin', '/openapi.json', '/docs',
];
