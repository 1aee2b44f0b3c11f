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
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After "pid (name) ": state is field 3, so utime, stime, cutime, cstime (14-17) are at 11-14.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / TICKS!;
}
