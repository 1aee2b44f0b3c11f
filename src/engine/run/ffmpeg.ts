import { execFile } from 'node:child_process';
import type { ResultPromise } from 'execa';
import { MediaflowError, storageError } from '../errors.js';
import { KILLABLE_CHILD, readLines } from './child-process.js';

/** How ffmpeg reports a full disk or quota (strerror of ENOSPC and EDQUOT). */
const DISK_FULL = /No space left on device|Disk quota exceeded/i;

/** One failed ffmpeg or ffprobe run, with flat fields for logs and a short, path-free message for users. */
export class FfmpegError extends MediaflowError {
  readonly command: string[];
  readonly exitCode?: number;
  readonly signal?: string;
  readonly timedOut: boolean;
  readonly isCanceled: boolean;
  readonly durationMs: number;
  readonly stderrTail: string;

  constructor(fields: {
    tool: string;
    command: string[];
    exitCode?: number;
    signal?: string;
    timedOut: boolean;
    isCanceled: boolean;
    durationMs: number;
    stderrTail: string;
  }) {
    const reason = fields.timedOut
      ? `${fields.tool} ran past its time limit and was stopped`
      : fields.isCanceled
        ? `${fields.tool} was cancelled`
        : `${fields.tool} failed: ${fields.stderrTail || `exit code ${fields.exitCode ?? fields.signal}`}`;
    // ffmpeg that could not write its output for want of space failed on the server's disk, not on the media.
    const full = !fields.timedOut && !fields.isCanceled && DISK_FULL.exec(fields.stderrTail);
    super(
      fields.timedOut ? 'MF_ERR_TIMEOUT' : full ? 'MF_ERR_STORAGE' : 'MF_ERR_MEDIA',
      full ? storageError(full[0].toLowerCase()).message : reason,
    );
    this.name = 'FfmpegError';
    this.command = fields.command;
    if (fields.exitCode !== undefined) this.exitCode = fields.exitCode;
    if (fields.signal !== undefined) this.signal = fields.signal;
    this.timedOut = fields.timedOut;
    this.isCanceled = fields.isCanceled;
    this.durationMs = fields.durationMs;
    this.stderrTail = fields.stderrTail;
  }
}

const ABSOLUTE_PATH = /(?:\/[\w.@+-]+){2,}\/?/g;

/**
 * ffmpeg's lines that only report the consequence of an error logged before them ("Error
 * reinitializing filters!" after "Invalid UTF-8 in decoded subtitles text"): they tell a user
 * nothing, and one of them repeats the filter's arguments.
 */
const CONSEQUENCE = [
  /^Error reinitializing filters!?$/,
  /^Error initializing filter '[^']*' with args/,
  /^Failed to inject frame into filter network/,
  /^Error while processing the decoded data for stream/,
  /^Error while (?:decoding|filtering)\b/,
  /^Error sending frames to consumers/,
  /^Task finished with error code/,
  /^Terminating thread with return code/,
  /^Error opening output files?\b/,
  /^Error initializing output stream/,
];

/**
 * The telling lines of stderr: the last `maxLines` that are not mere consequences of an earlier
 * error (all lines' last ones when none is), with every absolute path cut to its last part, so a
 * message never shows the server's disk layout. Jobs run in their workspace with relative names,
 * so most messages carry no paths to begin with.
 */
export function tidyStderr(stderr: string, maxLines = 3): string {
  const lines = stderr
    .split('\n')
    // `[mov,mp4,m4a @ 0x55d0c...] ` names a component and a heap address: neither helps a user.
    .map((line) => line.replace(/\[[^\]\n]* @ 0x[0-9a-f]+\]\s*/g, ''))
    .map((line) => line.replace(ABSOLUTE_PATH, (p) => p.replace(/\/$/, '').split('/').pop() ?? ''))
    // Advice on ffmpeg's own command line ("maybe missing -sub_charenc option") is not the user's to follow.
    .map((line) => line.replace(/;?\s*maybe missing -[\w:]+ option\.?$/, ''))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^Conversion failed!?$/.test(line));
  const telling = lines.filter((line) => !CONSEQUENCE.some((pattern) => pattern.test(line)));
  return (telling.length > 0 ? telling : lines).slice(-maxLines).join('; ').slice(0, 500);
}

/** Progress of a run, from ffmpeg's `-progress` key=value blocks. */
export interface Progress {
  /** Seconds of output written so far. */
  outTimeSeconds: number;
  /** 0..1 when the expected duration is known. */
  ratio?: number;
}

export interface RunOptions {
  /** The job's workspace; inputs and outputs are named relative to it. */
  cwd: string;
  /** Milliseconds before the process is killed. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Seconds of output expected, to turn progress into a ratio. */
  expectedSeconds?: number;
  onProgress?: (progress: Progress) => void;
}

/**
 * Flags every ffmpeg run gets: never read stdin, overwrite within the workspace, errors only (a
 * later `-loglevel` in a command's own arguments wins).
 */
const COMMON_FFMPEG_FLAGS = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-nostats'];

/** Parses `-progress pipe:1` output and reports each block's position. */
function followProgress(child: ResultPromise, options: RunOptions): void {
  const { onProgress, expectedSeconds } = options;
  if (!onProgress || !child.stdout) return;
  readLines(child.stdout, (line) => {
    const match = /^out_time_(?:us|ms)=(\d+)/.exec(line);
    if (!match) return;
    const outTimeSeconds = Number(match[1]) / 1e6;
    const ratio = expectedSeconds ? Math.min(1, outTimeSeconds / expectedSeconds) : undefined;
    onProgress(ratio === undefined ? { outTimeSeconds } : { outTimeSeconds, ratio });
  });
}

/** Runs one binary with an argument array (never a shell), a hard time limit and cancellation. */
async function run(tool: string, binary: string, args: string[], options: RunOptions, withProgress: boolean) {
  // Loaded at the first run (child-process.ts says why).
  const { execa } = await import('execa');
  const started = Date.now();
  const child = execa(binary, args, {
    cwd: options.cwd,
    timeout: options.timeoutMs,
    ...(options.signal ? { cancelSignal: options.signal } : {}),
    ...KILLABLE_CHILD,
    env: { AV_LOG_FORCE_NOCOLOR: '1' },
  });
  if (withProgress) followProgress(child, options);
  const result = await child;
  if (!result.failed) return result;
  if (result.isCanceled && options.signal?.aborted)
    throw options.signal.reason ?? new DOMException('Aborted', 'AbortError');
  throw new FfmpegError({
    tool,
    command: [binary, ...args],
    ...(typeof result.exitCode === 'number' ? { exitCode: result.exitCode } : {}),
    ...(result.signal ? { signal: result.signal } : {}),
    timedOut: Boolean(result.timedOut),
    isCanceled: Boolean(result.isCanceled),
    durationMs: Date.now() - started,
    stderrTail: tidyStderr(String(result.stderr ?? '')),
  });
}

/**
 * Runs ffmpeg with `args` (everything after the binary's own common flags) and returns what it
 * logged: nothing at the default level (errors only), warnings too for a command that asks for
 * them with its own `-loglevel warning`.
 */
export async function runFfmpeg(binary: string, args: string[], options: RunOptions): Promise<string> {
  const progress = options.onProgress ? ['-progress', 'pipe:1'] : [];
  const result = await run(
    'ffmpeg',
    binary,
    [...COMMON_FFMPEG_FLAGS, ...progress, ...args],
    options,
    Boolean(options.onProgress),
  );
  return String(result.stderr ?? '');
}

/** Runs ffprobe and returns its stdout. */
export async function runFfprobe(binary: string, args: string[], options: RunOptions): Promise<string> {
  const result = await run('ffprobe', binary, ['-hide_banner', '-loglevel', 'error', ...args], options, false);
  return String(result.stdout);
}

/** The full argv of an ffmpeg run, as `--dry-run` and benchmarks show it. */
export const ffmpegCommandLine = (binary: string, args: string[]): string[] => [
  binary,
  ...COMMON_FFMPEG_FLAGS,
  ...args,
];

/** `ffmpeg -version`'s first line, for /health and `--version`. */
export async function binaryVersion(binary: string): Promise<string> {
  // node's own child_process, not execa: `mediaflow --version` runs nothing else, and execa's hundred modules would
  // cost it more CPU than the two probes. A failed run still answers what it printed.
  const stdout = await new Promise<string>((resolve) => {
    execFile(binary, ['-version'], { timeout: 10_000, maxBuffer: 1024 * 1024 }, (_error, out) => resolve(String(out)));
  });
  return stdout.split('\n')[0] ?? 'unknown';
}
