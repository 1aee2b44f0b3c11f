import { randomUUID } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readlink, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { paramError } from '../errors.js';

/** Prefix of files and folders that are not finished; never served, removed at start. */
export const TEMP_PREFIX = '.partial-';

/**
 * A fresh temp name: the prefix, this process's pid, a UUID. Several processes may share a folder (the
 * download cache, local outputs in Redis mode); the pid lets each start-up clean-up tell a temp file
 * that a killed process left from one that a running process is still writing.
 */
export const tempName = (): string => `${TEMP_PREFIX}${process.pid}-${randomUUID()}`;

/** Whether a folder entry is a temp file or folder no running process will finish (see tempName). */
export function isAbandonedTemp(name: string): boolean {
  if (!name.startsWith(TEMP_PREFIX)) return false;
  const pid = /^(\d+)-/.exec(name.slice(TEMP_PREFIX.length))?.[1];
  // A name without a pid was written before names carried one: nothing is still writing it.
  return pid === undefined || (Number(pid) !== process.pid && !isRunning(Number(pid)));
}

/**
 * A job's private folder: inputs, generated lists and the output being written.
 * It is removed when the job ends, whether it succeeded or not.
 */
export class Workspaces {
  constructor(readonly root: string) {}

  async create(id: string): Promise<string> {
    const dir = path.join(this.root, id);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /**
   * The folder of one pipeline run, where each step's output waits for the steps that use it.
   * Absolute, because those steps name the files in it as their inputs.
   */
  pipelineDir(id: string = randomUUID()): string {
    return path.resolve(this.root, `pipeline-${id}`);
  }

  /** A new folder for the CLI's `--output`: the result is published there, then moved to the file named. */
  outputStagingDir(): string {
    return path.join(this.root, `output-${randomUUID()}`);
  }

  async remove(dir: string): Promise<void> {
    await rm(dir, { recursive: true, force: true });
  }

  /**
   * Removes whatever a killed process left behind; run at start, before jobs are taken. The
   * `pid-<pid>` folders of processes still running (a CLI run sharing the data directory) are theirs.
   */
  async clearLeftovers(): Promise<number> {
    const entries = (await readdir(this.root).catch(() => [] as string[])).filter(
      (entry) => !isLiveProcessFolder(entry),
    );
    for (const entry of entries) await killProcessesIn(path.join(this.root, entry));
    await Promise.all(entries.map((entry) => rm(path.join(this.root, entry), { recursive: true, force: true })));
    return entries.length;
  }
}

/** Folders of processes that share a data directory (Redis mode) carry their pid. */
const PROCESS_FOLDER = /^pid-(\d+)$/;

/** Whether a work folder entry is the `pid-<pid>` folder of this or another running process. */
function isLiveProcessFolder(entry: string): boolean {
  const pid = PROCESS_FOLDER.exec(entry)?.[1];
  return pid !== undefined && (Number(pid) === process.pid || isRunning(Number(pid)));
}

/**
 * The work folder of this process. Alone it owns `<dataDir>/work`; when several processes share
 * the data directory (API and workers on one machine, Redis mode) each gets `work/pid-<pid>`, so
 * one process's start-up clean-up never removes another's running jobs.
 */
export const workRootOf = (dataDir: string, shared: boolean): string =>
  shared ? path.join(dataDir, 'work', `pid-${process.pid}`) : path.join(dataDir, 'work');

/** Removes the work folders of processes that no longer run (killed with -9, say); returns how many. */
export async function clearDeadProcessFolders(dataDir: string): Promise<number> {
  const root = path.join(dataDir, 'work');
  let removed = 0;
  for (const entry of await readdir(root).catch(() => [] as string[])) {
    if (!PROCESS_FOLDER.test(entry) || isLiveProcessFolder(entry)) continue;
    await killProcessesIn(path.join(root, entry));
    await rm(path.join(root, entry), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * Kills the processes working in a folder: the ffmpeg runs of a server killed with -9 carry on as
 * orphans (they ignore the broken pipe) and would compete with the jobs' re-runs. Every job's
 * ffmpeg runs with its workspace as working directory, which /proc shows (Linux; elsewhere a no-op).
 */
async function killProcessesIn(dir: string): Promise<void> {
  const folder = path.resolve(dir);
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    // ffmpeg's working directory is the workspace itself (no separator after it), or a folder inside.
    if (cwd === folder || cwd.startsWith(folder + path.sep)) {
      try {
        process.kill(Number(entry), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Where finished outputs go. The default keeps them in a local folder; an S3-compatible bucket is the other. */
export interface OutputStore {
  /** Moves a finished file to `relativePath`, so that it appears whole or not at all. */
  publish(file: string, relativePath: string): Promise<void>;
  /** Whether a published output exists at `relativePath` (a whole file, not one being written). */
  exists(relativePath: string): Promise<boolean>;
  /** Deletes what was published under these paths (a job's outputs, when its record expires). */
  remove(relativePaths: readonly string[]): Promise<void>;
  /**
   * Puts a published output at `target` (in a job's workspace): an own output used as an input.
   * Throws a 400 when there is none.
   */
  copyTo(relativePath: string, target: string): Promise<void>;
  /** The URL a client downloads an output from; `base` is the request's `{base_url}`. */
  urlFor(relativePath: string, base: string): Promise<string>;
  /** Deletes outputs older than `maxAgeMs`; returns how many. */
  sweep(maxAgeMs: number, now?: number): Promise<number>;
  /** Throws when the store cannot be reached (for /health). */
  check(): Promise<void>;
  /** True when this server serves the outputs itself under /uploads/ (a local folder). */
  readonly servedHere: boolean;
  /** The store path behind a URL the store handed out itself (a bucket's), if it is one. */
  pathOfUrl?(source: string): string | undefined;
}

/**
 * Publishes files (each `[workspace file, store path]`) in order; when one fails, those already
 * published are removed, so a job leaves all of its outputs or none (an operation's several files,
 * a pipeline's results).
 */
export async function publishAll(
  store: OutputStore,
  files: ReadonlyArray<readonly [file: string, relativePath: string]>,
): Promise<void> {
  for (const [index, [file, relativePath]] of files.entries()) {
    try {
      await store.publish(file, relativePath);
    } catch (error) {
      await store.remove(files.slice(0, index).map(([, published]) => published)).catch(() => {});
      throw error;
    }
  }
}

/** Outputs in a local folder, published with a rename so no reader ever sees half a file. */
export class LocalOutputStore implements OutputStore {
  readonly servedHere = true;

  constructor(readonly root: string) {}

  /** The file behind a store path. */
  locate(relativePath: string): string {
    return path.join(this.root, relativePath);
  }

  async urlFor(relativePath: string, base: string): Promise<string> {
    return `${base}/uploads/${relativePath}`;
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  async copyTo(relativePath: string, target: string): Promise<void> {
    if (!(await this.exists(relativePath)))
      throw paramError(`Input ${relativePath} is not a published output of this server (it may have expired)`);
    // A hard link: the job keeps its input even if the sweeper deletes the output meanwhile.
    await link(this.locate(relativePath), target).catch(() => copyFile(this.locate(relativePath), target));
  }

  async exists(relativePath: string): Promise<boolean> {
    const info = await stat(this.locate(relativePath)).catch(() => undefined);
    return info?.isFile() ?? false;
  }

  async remove(relativePaths: readonly string[]): Promise<void> {
    for (const relative of relativePaths) {
      const target = this.locate(relative);
      await rm(target, { force: true });
      // A folder of its own (`<id>/output.mp4`) goes with its last file; the store's root stays.
      const dir = path.dirname(target);
      if (dir !== this.root) await rmdir(dir).catch(() => undefined);
    }
  }

  async publish(file: string, relativePath: string): Promise<void> {
    const target = this.locate(relativePath);
    const dir = path.dirname(target);
    await mkdir(dir, { recursive: true });
    try {
      await rename(file, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // Another file system: copy beside the target under a temp name, then rename there.
      const temp = path.join(dir, tempName());
      try {
        await copyFile(file, temp);
        await rename(temp, target);
      } finally {
        await rm(temp, { force: true });
      }
    }
  }

  /** Removes temp files a killed process left behind (not those of a running process sharing the folder). */
  async clearLeftovers(): Promise<number> {
    let removed = 0;
    const walk = async (dir: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (isAbandonedTemp(entry.name)) {
          await rm(full, { recursive: true, force: true });
          removed++;
        } else if (entry.isDirectory() && !entry.name.startsWith(TEMP_PREFIX)) await walk(full);
      }
    };
    await walk(this.root);
    return removed;
  }

  /** Deletes outputs (files, and folders emptied by that) older than `maxAgeMs`. */
  async sweep(maxAgeMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    const walk = async (dir: string): Promise<boolean> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      let empty = true;
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (await walk(full)) await rm(full, { recursive: true, force: true });
          else empty = false;
          continue;
        }
        const info = await stat(full).catch(() => undefined);
        if (info && now - info.mtimeMs > maxAgeMs) {
          await rm(full, { force: true });
          removed++;
        } else empty = false;
      }
      return empty;
    };
    await walk(this.root);
    return removed;
  }
}
