import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempName } from './storage.js';

/**
 * Writes `data` to `file` whole or not at all: to a temp name beside it, then renamed over it, so a
 * kill -9 at any moment leaves the old or the new version. A write that fails (a full disk) removes
 * its temp file, so nothing half-written stays behind and the space it took is given back.
 */
export async function writeWhole(file: string, data: string): Promise<void> {
  const temp = path.join(path.dirname(file), tempName());
  try {
    await writeFile(temp, data);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
