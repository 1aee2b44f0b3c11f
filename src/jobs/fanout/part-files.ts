import { copyFile, link, rm } from 'node:fs/promises';
import path from 'node:path';
import type { OutputStore } from '../../engine/storage/storage.js';
import { tempName } from '../../engine/storage/storage.js';

/**
 * Where a split encode's files travel between workers in Redis mode: the output store (the bucket, or the shared
 * local folder) under `.fanout/<engine run id>/<run>/`. A dot folder: never served under /uploads/, never read back
 * as an own output; the retention sweeper removes what a killed run left there.
 */
export const partPath = (id: string, run: string, file: string): string => `.fanout/${id}/${run}/${file}`;

/**
 * Puts a workspace file in the store without taking it from the workspace: the store publishes by moving (a local
 * folder) or uploading (a bucket), so it publishes a hard link (a copy across file systems) of the file.
 */
export async function putCopy(store: OutputStore, file: string, relativePath: string): Promise<void> {
  const temp = path.join(path.dirname(file), tempName());
  await link(file, temp).catch(() => copyFile(file, temp));
  try {
    await store.publish(temp, relativePath);
  } finally {
    await rm(temp, { force: true });
  }
}
