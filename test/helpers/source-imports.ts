import { readFile } from 'node:fs/promises';

/** The module specifiers a source file imports or re-exports from (`import type` too). */
export async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^'";]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
}
