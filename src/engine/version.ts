import { readFileSync } from 'node:fs';

/**
 * mediaflow's version, read once from its package.json (two levels up from src/engine and from
 * dist/engine alike), for `mediaflow --version`, the built-in plugins' version and the API document.
 */
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
export const VERSION: string = manifest.version;
