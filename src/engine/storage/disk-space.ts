import { statfs } from 'node:fs/promises';
import { storageError } from '../errors.js';

/** The free space of the data directory's file system against MEDIAFLOW_MIN_FREE_DISK, as /health shows it. */
export interface DiskSpace {
  /** Bytes an unprivileged process may still write (statfs `bavail`, not `bfree`: root's reserve is not ours). */
  free_bytes: number;
  /** MEDIAFLOW_MIN_FREE_DISK; 0 when the check is off. */
  min_free_bytes: number;
  ok: boolean;
}

/** Measures the free space of the file system that holds `dir`. */
export async function diskSpace(dir: string, minFreeBytes: number): Promise<DiskSpace> {
  const info = await statfs(dir);
  const free = info.bavail * info.bsize;
  return { free_bytes: free, min_free_bytes: minFreeBytes, ok: free >= minFreeBytes };
}

/**
 * Refuses new work with a 507 while the data directory has less than `minFreeBytes` free: a job
 * taken now would fail part way (its download, its output or its record), after using a core and
 * the bandwidth. 0 turns the check off.
 */
export async function requireDiskSpace(dir: string, minFreeBytes: number): Promise<void> {
  if (minFreeBytes <= 0) return;
  const space = await diskSpace(dir, minFreeBytes);
  if (!space.ok) throw storageError(`${space.free_bytes} bytes free, below MEDIAFLOW_MIN_FREE_DISK of ${minFreeBytes}`);
}
