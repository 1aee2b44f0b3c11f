import { readdir, readFile } from 'node:fs/promises';
import { ffmpegsIn } from './fanout-clip.js';

/**
 * What a process has used so far, read from /proc (Linux): its reads of files and sockets, its CPU
 * time, and the memory of it and its children. Measured on a real server process (startServeProcess),
 * these say what a request cost it without timing anything.
 */

/** Read calls (`read`, `pread`, ...) the process has made, from /proc/<pid>/io's `syscr`. */
export async function readCalls(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, 'utf8');
  return Number(/^syscr:\s+(\d+)/m.exec(io)![1]);
}

/** Clock ticks a second, as /proc counts CPU time (USER_HZ: 100 on every Linux that matters). */
const TICKS = 100;

/** Seconds of CPU the process itself has used, user and system, its children not counted. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // pid (comm) state ppid ...: comm may hold spaces, so the fields are counted after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** The pids of a process's children, grandchildren and so on (from each task's `children`). */
async function descendants(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const children: number[] = [];
  for (const task of tasks) {
    const listed = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    children.push(...listed.split(' ').filter(Boolean).map(Number));
  }
  return [...children, ...(await Promise.all(children.map(descendants))).flat()];
}

/** Resident memory, MiB, of a process and every process under it (an ffmpeg or ffprobe it runs). */
export async function treeRssMiB(pid: number): Promise<number> {
  let kib = 0;
  for (const each of [pid, ...(await descendants(pid))]) {
    const status = await readFile(`/proc/${each}/status`, 'utf8').catch(() => '');
    kib += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return kib / 1024;
}

/** An ffmpeg process seen at work: the file it writes (its last argument) and its peak resident memory, MiB. */
export interface FfmpegPeak {
  output: string;
  mib: number;
}

/**
 * Watches the ffmpeg processes this process runs (an in-process server's) working in `dir` (ffmpegsIn) until `done`
 * settles, reading each one's peak resident memory (VmHWM) every 20 ms while it lives: its last reading is its peak
 * but for the last moments of its life. Only this process's children are looked at, so that a busy machine's other
 * processes do not slow the readings down: one that lives a fraction of a second may still go unseen.
 */
export async function ffmpegPeaks<T>(dir: string, done: Promise<T>): Promise<{ result: T; peaks: FfmpegPeak[] }> {
  const peaks = new Map<number, FfmpegPeak>();
  let over = false;
  const settled = done.finally(() => (over = true));
  settled.catch(() => undefined);
  while (!over) {
    for (const ffmpeg of await ffmpegsIn(dir, await descendants(process.pid))) {
      const status = await readFile(`/proc/${ffmpeg.pid}/status`, 'utf8').catch(() => '');
      const kib = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const seen = peaks.get(ffmpeg.pid);
      const output = seen?.output ?? ffmpeg.args.at(-1) ?? '';
      peaks.set(ffmpeg.pid, { output, mib: Math.max(seen?.mib ?? 0, kib / 1024) });
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { result: await settled, peaks: [...peaks.values()] };
}
