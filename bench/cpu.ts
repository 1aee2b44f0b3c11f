import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { execa } from 'execa';

/** Clock ticks per second of the CPU times in /proc (Linux); `undefined` elsewhere, where none are read. */
export const TICKS = existsSync('/proc/stat')
  ? Number((await execa('getconf', ['CLK_TCK'], { reject: false })).stdout) || 100
  : undefined;

/**
 * A process's own CPU time, in seconds, and that of its children it waited for (ffmpeg, ffprobe):
 * `self` for this one.
 */
export async function processSeconds(pid: number | 'self' | undefined): Promise<number> {
  return ticksOf(pid, [11, 12, 13, 14]);
}

/** The CPU time, in seconds, of the children this process has waited for, and of theirs that they waited for. */
export async function childrenSeconds(): Promise<number> {
  return ticksOf('self', [13, 14]);
}

/** The sum of some CPU-time fields of /proc/<pid>/stat, in seconds. */
async function ticksOf(pid: number | 'self' | undefined, fields: number[]): Promise<number> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After "pid (name) ": state is field 3, so utime, stime, cutime, cstime (14-17) are at 11-14.
  const values = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return fields.reduce((sum, i) => sum + Number(values[i]), 0) / TICKS!;
}
