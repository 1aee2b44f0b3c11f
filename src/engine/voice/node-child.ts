import { fileURLToPath } from 'node:url';
import { spawnChild } from '../exec/child-process.js';
import type { Spawned } from '../contract/plugin.js';
import type { SynthesisRun } from './voice-types.js';

/**
 * The voice engines' own Node processes (espeak-child.ts, sherpa-child.ts): a native library (espeak-ng's through
 * koffi, sherpa-onnx's) runs in a process of its own, which a cancel or the time limit can kill, and whose crash
 * (sherpa-onnx exits the process on a model it cannot read) ends only it.
 */

/** The exit status of a child whose optional package (koffi, sherpa-onnx-node) or library is missing. */
export const PACKAGE_MISSING = 3;

/**
 * Runs `module` (a sibling's URL, `./x-child.js`) in a Node process in the run's directory with `args`: killed on the
 * run's signal (SIGTERM, then SIGKILL), each line of its stdout heard as it comes.
 */
export function runNodeChild(
  module: string,
  args: readonly string[],
  run: SynthesisRun,
  onLine: (line: string) => void,
): Promise<Spawned> {
  // From dist the child is plain JS; from src (tsx, vitest) it is TypeScript, run through tsx's loader, named by
  // its own path, since the child runs in the workspace, where `tsx` does not resolve.
  const fromSource = import.meta.url.endsWith('.ts');
  const file = fileURLToPath(new URL(fromSource ? module.replace(/\.js$/, '.ts') : module, import.meta.url));
  const loader = fromSource ? ['--import', import.meta.resolve('tsx')] : [];
  return spawnChild(process.execPath, [...loader, file, ...args], {
    cwd: run.dir,
    signal: run.signal,
    onLine,
  });
}
