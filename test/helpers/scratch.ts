import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before } from './lifecycle.js';

/** A temporary folder of a test file's or describe's own. */
export interface Scratch {
  /** The folder; set before the first test. */
  readonly dir: string;
  /** A path in the folder. */
  path: (...parts: string[]) => string;
}

/**
 * Makes a temporary folder before the enclosing describe's tests (or the file's, at its top level) and removes it,
 * with all in it, after them. `prefix` names it in the system's temporary folder.
 */
export function useScratch(prefix = 'mediaflow-test-'): Scratch {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    path: (...parts) => path.join(dir, ...parts),
  };
}
