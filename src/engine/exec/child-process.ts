import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { busyError, MediaflowError } from '../errors.js';
import type { Spawned } from '../contract/plugin.js';

/**
 * How mediaflow runs every program (ffmpeg, ffprobe, whisper, a plugin's): an argument array, never
 * a shell; no stdin; its output read; its exit status judged by the caller rather than thrown; and
 * SIGKILL 2 s after the SIGTERM of a cancel or a time limit. Built on `child_process.spawn` with its
 * 'error' event always heard: out of file descriptors, Node gives back a child without pipes and
 * emits EMFILE on it a tick later, which execa (9.6) reads past and leaves unheard, ending the
 * process; here the one run fails (spawnError) and the server goes on.
 */

/** Time a program has to exit after SIGTERM before it gets SIGKILL. */
const KILL_AFTER_MS = 2000;
/** Output kept per stream; a program that prints more is stopped (ffprobe's JSON is far below). */
const MAX_OUTPUT_CHARS = 64 * 1024 * 1024;

export interface ProgramOptions {
  /** Where the program runs: the job's workspace. */
  cwd?: string;
  /** Variables added to this process's environment. */
  env?: Record<string, string>;
  /** Milliseconds before the program is stopped (`timedOut`); none when unset. */
  timeoutMs?: number;
  /** Stops the program (`isCanceled`). */
  signal?: AbortSignal;
  /** Hears each whole line of stdout as it comes. */
  onLine?: (line: string) => void;
}

/** How a program ended. `failed` is anything but exit code 0. */
export interface ProgramResult {
  exitCode?: number;
  signal?: NodeJS.Signals;
  stdout: string;
  stderr: string;
  failed: boolean;
  timedOut: boolean;
  isCanceled: boolean;
  /** Why it could not be started (EMFILE, ENOENT, ...): it never ran. */
  spawnError?: NodeJS.ErrnoException;
}

/** Programs running now: stopped when this process exits, so that none outlives it. */
const running = new Set<ChildProcess>();
let exitHookSet = false;
function track(child: ChildProcess): void {
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => running.forEach((each) => each.kill('SIGKILL')));
  }
  running.add(child);
}

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

/** Collects a stream's text up to MAX_OUTPUT_CHARS; `over` is called once past it. */
function collect(stream: Readable | null, over: () => void): () => string {
  let text = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    if (text.length + chunk.length <= MAX_OUTPUT_CHARS) text += chunk;
    else over();
  });
  return () => text;
}

/** Runs `command` and resolves with how it ended, whatever that was; it never rejects. */
export function runProgram(
  command: string,
  args: readonly string[],
  options: ProgramOptions = {},
): Promise<ProgramResult> {
  const ended = { timedOut: false, isCanceled: Boolean(options.signal?.aborted) };
  const notRun = { stdout: '', stderr: '', failed: true };
  const notStarted = (error: NodeJS.ErrnoException): ProgramResult => ({ ...notRun, ...ended, spawnError: error });
  if (ended.isCanceled) return Promise.resolve({ ...notRun, ...ended });
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    // Arguments Node refuses (a NUL byte) throw instead of emitting.
    return Promise.resolve(notStarted(error as NodeJS.ErrnoException));
  }
  return new Promise((resolve) => {
    let forceKill: NodeJS.Timeout | undefined;
    const stop = () => {
      child.kill('SIGTERM');
      forceKill ??= setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    };
    const timer = options.timeoutMs
      ? setTimeout(() => {
          ended.timedOut = true;
          stop();
        }, options.timeoutMs)
      : undefined;
    const onAbort = () => {
      ended.isCanceled = true;
      stop();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.onLine && child.stdout) readLines(child.stdout, options.onLine);
    const stdout = collect(child.stdout, stop);
    const stderr = collect(child.stderr, stop);
    const finish = (result: ProgramResult) => {
      clearTimeout(timer);
      clearTimeout(forceKill);
      options.signal?.removeEventListener('abort', onAbort);
      running.delete(child);
      resolve(result);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      // Once started, an error (a failed kill) changes nothing: 'close' still comes.
      if (child.pid === undefined) finish(notStarted(error));
    });
    child.once('close', (code, signal) => {
      if (child.pid === undefined) return;
      finish({
        ...(code === null ? {} : { exitCode: code }),
        ...(signal === null ? {} : { signal }),
        stdout: stdout(),
        stderr: stderr(),
        failed: code !== 0 || ended.timedOut || ended.isCanceled,
        ...ended,
      });
    });
    if (child.pid !== undefined) track(child);
  });
}

/**
 * The error of a program that could not be started, naming it without its path: out of descriptors
 * or processes, a 503 to retry; anything else (not installed), ours.
 */
export function spawnError(command: string, error: NodeJS.ErrnoException): MediaflowError {
  const name = path.basename(command);
  const code = error.code ?? 'unknown';
  if (code === 'EMFILE' || code === 'ENFILE' || code === 'EAGAIN')
    return busyError(`The server cannot start ${name} now (${code}: too many open files or processes); retry later`, 5);
  return new MediaflowError('MF_ERR_INTERNAL', `Could not start ${name} (${code})`, { cause: error });
}

/**
 * Runs a program for a plan's step (StepContext.spawn), in the job's workspace. When `signal` aborts
 * the promise rejects with its reason, once the program has exited: a cancelled or timed-out job is
 * never told it ended while its program still runs. Otherwise it resolves with the exit status,
 * whatever it is, for the step to judge; a program that could not start is an error (spawnError).
 */
export async function spawnChild(
  command: string,
  args: readonly string[],
  options: { cwd: string; signal: AbortSignal; onLine?: (line: string) => void },
): Promise<Spawned> {
  options.signal.throwIfAborted();
  const result = await runProgram(command, args, options);
  if (options.signal.aborted) throw options.signal.reason;
  if (result.spawnError) throw spawnError(command, result.spawnError);
  return {
    ...(result.exitCode === undefined ? {} : { exitCode: result.exitCode }),
    ...(result.signal ? { signal: result.signal } : {}),
    stdout: result.stdout,
    stderr: result.stderr,
  };
}
