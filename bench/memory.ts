import { readdir, readFile } from 'node:fs/promises';

/** Peak resident memory (VmHWM, MiB) of processes, sampled from /proc while work runs. */
export class PeakMemory {
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Samples every 20 ms the processes `select` picks (by pid, parent pid and command name). */
  start(select: (pid: number, ppid: number, comm: string) => boolean): void {
    this.peak = 0;
    this.timer = setInterval(() => void this.sample(select), 20);
  }

  async stop(): Promise<number> {
    clearInterval(this.timer);
    return Math.round(this.peak);
  }

  private async sample(select: (pid: number, ppid: number, comm: string) => boolean): Promise<void> {
    for (const entry of await readdir('/proc').catch(() => [])) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      const match = /^\d+ \((.*)\) \S+ (\d+)/s.exec(stat);
      if (!match || !select(Number(entry), Number(match[2]), match[1]!)) continue;
      const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      this.peak = Math.max(this.peak, kb / 1024);
    }
  }
}

/** Resident memory of one process now, MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
