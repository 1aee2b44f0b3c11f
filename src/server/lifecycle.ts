import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MediaflowError } from '../engine/errors.js';
import type { Config } from '../engine/config.js';
import type { JobService } from '../jobs/service.js';
import type { Logger } from '../engine/logger.js';
import { clearDeadProcessFolders, LocalOutputStore, Workspaces, type OutputStore } from '../engine/storage/storage.js';

/** How long running jobs may finish after SIGTERM/SIGINT before the process ends. */
export const SHUTDOWN_GRACE_MS = 30_000;
/**
 * Running jobs get this much of it: stopping one takes up to 2 s more (ffmpeg gets SIGTERM, then
 * SIGKILL 2 s later, and a slideshow ignores SIGTERM while it repeats a still image), and its hand-back
 * to the queue must be stored before the deadline ends the process.
 */
export const JOB_GRACE_MS = SHUTDOWN_GRACE_MS - 5_000;

/**
 * Removes what a killed predecessor left: work folders and half-published outputs. A process
 * that shares the data directory (Redis mode) removes only the folders of processes that are gone.
 * Alone (embedded mode) the process first claims the data directory, so a second server started
 * on it by mistake stops here instead of removing the running one's work.
 */
export async function clearLeftovers(config: Config): Promise<number> {
  if (!config.redisUrl) await claimDataDir(config.dataDir);
  const uploads = new LocalOutputStore(path.join(config.dataDir, 'uploads'));
  const work = config.redisUrl
    ? await clearDeadProcessFolders(config.dataDir)
    : await new Workspaces(path.join(config.dataDir, 'work')).clearLeftovers();
  return work + (await uploads.clearLeftovers());
}

/** `<dataDir>/mediaflow.pid`: the one process that owns an embedded data directory. */
async function claimDataDir(dataDir: string): Promise<void> {
  const file = path.join(dataDir, 'mediaflow.pid');
  const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid) {
    // A pid is only an owner while it is still a node process (pids are reused after a reboot).
    const command = await readFile(`/proc/${owner}/cmdline`, 'utf8').catch(() => '');
    if (/node|mediaflow/.test(command)) {
      throw new MediaflowError(
        'MF_ERR_PARAM',
        `Another mediaflow process (pid ${owner}) uses the data directory ${dataDir}: stop it, give this one ` +
          `its own --data-dir, or share one queue with MEDIAFLOW_REDIS_URL`,
      );
    }
  }
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${process.pid}\n`);
}

/** Deletes expired outputs and job records every so often; returns the timer (or none when outputs are kept). */
export function startSweeper(
  config: Config,
  store: OutputStore,
  jobs: JobService,
  logger: Logger,
): NodeJS.Timeout | undefined {
  if (config.retentionMs <= 0) return undefined;
  const sweep = () =>
    Promise.all([store.sweep(config.retentionMs), jobs.sweep()]).then(
      ([removed, records]) =>
        (removed > 0 || records > 0) && logger.info({ removed, records }, 'deleted expired outputs and job records'),
      (error: unknown) => logger.error({ err: error }, 'sweeping outputs failed'),
    );
  void sweep();
  return setInterval(sweep, Math.min(config.retentionMs, 3_600_000) / 4).unref();
}

/**
 * Calls `stop` once on SIGTERM or SIGINT. `on`, not `once`: a repeated signal (a second Ctrl-C, a
 * supervisor's retry) would otherwise kill the process at once while an ffmpeg runs; repeats are
 * ignored here.
 */
export function onStopSignal(stop: (signal: string) => void): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal);
  };
  process.on('SIGTERM', () => handle('SIGTERM'));
  process.on('SIGINT', () => handle('SIGINT'));
}
