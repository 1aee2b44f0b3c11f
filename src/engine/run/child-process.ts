import type { Readable } from 'node:stream';
import type { Spawned } from '../plugins/plugin.js';

export interface SpawnOptions {
  /** The job's workspace: the program runs there. */
  cwd: string;
  /** The job's cancellation and time limit together (see runSteps). */
  signal: AbortSignal;
  /** Hears each line of the program's stdout as it comes. */
  onLine?: (line: string) => void;
}

/**
 * How mediaflow runs every program (ffmpeg, ffprobe, a plugin's): no stdin, its output read, its exit status judged
 * by the caller rather than thrown, and SIGKILL 2 s after the SIGTERM of a cancel or a time limit.
 */
export const KILLABLE_CHILD = {
  forceKillAfterDelay: 2000,
  stdin: 'ignore',
  stdout: 'pipe',
  stderr: 'pipe',
  reject: false,
  maxBuffer: 64 * 1024 * 1024,
} as const;

/** Calls `onLine` with each whole line a child writes to `stdout`, as it comes. */
export function readLines(stdout: Readable, onLine: (line: string) => void): void {
  let buffered = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
}

/**
 * Runs a program for a plan's step (StepContext.spawn): no shell, no stdin. When `signal` aborts it gets SIGTERM,
 * then SIGKILL 2 s later if it is still there (as ffmpeg does, see ffmpeg.ts), and the promise rejects with the
 * signal's reason once the program has exited: a cancelled or timed-out job is never told it ended while its
 * program still runs. Otherwise it resolves with the exit status, whatever it is, for the step to judge.
 */
export async function spawnChild(command: string, args: readonly string[], options: SpawnOptions): Promise<Spawned> {
  options.signal.throwIfAborted();
  // Loaded at the first run, not with the registry that names this module: `mediaflow --version` has no use for it.
  const { execa } = await import('execa');
  const child = execa(command, args, { ...KILLABLE_CHILD, cwd: options.cwd, cancelSignal: options.signal });
  if (options.onLine) readLines(child.stdout, options.onLine);
  const result = await child;
  if (options.signal.aborted) throw options.signal.reason;
  return {
    ...(typeof result.exitCode === 'number' ? { exitCode: result.exitCode } : {}),
    ...(result.signal ? { signal: result.signal } : {}),
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
  };
}
