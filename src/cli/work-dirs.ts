import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearDeadProcessFolders, workRootOf } from '../engine/storage/storage.js';

/** Where a CLI run keeps its work files and cached downloads. */
export interface CliDirs {
  /**
   * `<base>/work/pid-<pid>`: this process's own, so runs and a server sharing `<base>` never clear each other's work.
   */
  workRoot: string;
  /** `<base>/cache`: downloads kept for later runs, shared by every run. */
  cacheDir: string;
}

/**
 * The CLI's folders: under `MEDIAFLOW_DATA_DIR` when it is set (a server's data directory may be
 * shared), else under `<system temp>/mediaflow`. Work folders that killed runs left behind (and
 * the ffmpeg they left running) are removed first; this run's own is removed when it exits.
 */
export async function cliDirs(env: NodeJS.ProcessEnv): Promise<CliDirs> {
  const base = env.MEDIAFLOW_DATA_DIR ? path.resolve(env.MEDIAFLOW_DATA_DIR) : path.join(os.tmpdir(), 'mediaflow');
  await clearDeadProcessFolders(base);
  const workRoot = workRootOf(base, true);
  removeOnExit(workRoot);
  return { workRoot, cacheDir: path.join(base, 'cache') };
}

/** Removes a folder as the process exits, however it exits short of being killed. */
function removeOnExit(dir: string): void {
  // 'exit' handlers must be synchronous; the folder holds at most what a job had not cleaned up.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}
