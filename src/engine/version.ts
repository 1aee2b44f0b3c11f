import { readFileSync } from 'node:fs';

/**
 * mediaflow's version, read once from its package.json (two levels up from src/engine and from
 * dist/engine alike), for `mediaflow --version`, the built-in plugins' version and the API document.
 */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
