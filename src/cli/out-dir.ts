import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { paramError } from '../engine/errors.js';

/** Why a folder cannot be made or written, in words rather than an errno. */
function reason(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'EEXIST':
      return 'it is a file, not a folder';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    default:
      return error.code ?? error.message;
  }
}

/**
 * Makes `dir` (with its parents) and checks it can be written, before anything runs: a bad
 * `--out-dir` is a usage error (exit 2) named as such, not a raw EEXIST after the work is done.
 */
export async function ensureWritableDir(dir: string, flag: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (error) {
    throw paramError(`Cannot write to ${flag} ${dir}: ${reason(error as NodeJS.ErrnoException)}`);
  }
}
