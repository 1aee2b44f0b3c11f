import { readdir, readFile } from 'node:fs/promises';

/**
 * Peak resident memory (VmHWM, MiB) of this process's ffmpeg children, sampled while work runs.
 * Children are read from /proc/<pid>/task/<tid>/children, a handful of small reads per sample, so
 * the sampling itself takes next to no time from the work it measures.
 */
export class PeakMemory {
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;

  start(): void {
    this.peak = 0;
    this.timer = setInterval(() => void this.sample(), 25);
  }

  async stop(): Promise<number> {
    clearInterval(this.timer);
    await this.sample();
    return Math.round(this.peak);
  }

  private async sample(): Promise<void> {
    const tasks = await readdir(`/proc/${process.pid}/task`).catch(() => [] as string[]);
    for (const task of tasks) {
      const children = await readFile(`/proc/${process.pid}/task/${task}/children`, 'utf8').catch(() => '');
      for (const child of children.split(' ').filter(Boolean)) {
        const status = await readFile(`/proc/${child}/status`, 'utf8').catch(() => '');
        if (!/^Name:\s+ffmpeg$/m.test(status)) continue;
        const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
        this.peak = Math.max(this.peak, kb / 1024);
      }
    }
  }
}

/** Resident memory of one process now, MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
