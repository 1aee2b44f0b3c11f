import { readFile } from 'node:fs/promises';

/**
 * The module specifiers a source file imports or re-exports from (`import type` too), and those it loads with
 * `import('...')` when it needs them: a module loaded later is still a module it depends on.
 */
export async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  const statics = [...text.matchAll(/^\s*(?:import|export)\b[^'";]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
  const dynamics = [...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
  return [...statics, ...dynamics];
}
