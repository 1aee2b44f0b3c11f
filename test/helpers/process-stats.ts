import { readdir, readFile } from 'node:fs/promises';

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
