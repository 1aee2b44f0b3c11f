import { readFile } from 'node:fs/promises';
import { ffmpegChildren } from './serve-process.js';

/** What the ffmpeg children of a process did while they were watched. */
export interface FfmpegWatch {
  /** The command line of each ffmpeg seen, binary first. */
  commands: string[][];
  /** The largest peak resident memory (VmHWM) of any one of them, in MiB. */
  peakMiB: number;
  /** The largest resident memory of all of them at once, with `parent`'s own, in MiB (polled). */
  treePeakMiB: number;
}

const statusKiB = (status: string, field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);

/**
 * Watches the ffmpeg children of `parent` (by default this process, which runs an in-process server) every 5 ms
 * until `stop`: their command lines and their memory, each one's own peak (VmHWM, kept by the kernel, so a peak
 * between two polls is not missed while the process lives) and the tree's (polled). Linux only.
 */
export function watchFfmpeg(parent = process.pid): { stop: () => Promise<FfmpegWatch> } {
  const commands = new Map<number, string[]>();
  const peaks = new Map<number, number>();
  let treePeakKiB = 0;
  let running = true;
  const poll = async () => {
    const pids = await ffmpegChildren(parent);
    let treeKiB = statusKiB(await readFile(`/proc/${parent}/status`, 'utf8').catch(() => ''), 'VmRSS');
    for (const pid of pids) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      peaks.set(pid, Math.max(peaks.get(pid) ?? 0, statusKiB(status, 'VmHWM')));
      treeKiB += statusKiB(status, 'VmRSS');
      if (!commands.has(pid)) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (cmdline) commands.set(pid, cmdline.split('\0').slice(0, -1));
      }
    }
    treePeakKiB = Math.max(treePeakKiB, treeKiB);
  };
  const loop = (async () => {
    while (running) {
      await poll();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return {
        commands: [...commands.values()],
        peakMiB: Math.max(0, ...peaks.values()) / 1024,
        treePeakMiB: treePeakKiB / 1024,
      };
    },
  };
}
