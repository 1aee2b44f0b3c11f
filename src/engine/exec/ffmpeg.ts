import { MediaflowError, storageError } from '../errors.js';
import { runProgram, spawnError } from './child-process.js';

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

/** Turns `-progress pipe:1` output into progress reports, one per block. */
function progressLines(options: RunOptions): ((line: string) => void) | undefined {
  const { onProgress, expectedSeconds } = options;
  if (!onProgress) return undefined;
  return (line) => {
    const match = /^out_time_(?:us|ms)=(\d+)/.exec(line);
    if (!match) return;
    const outTimeSeconds = Number(match[1]) / 1e6;
    const ratio = expectedSeconds ? Math.min(1, outTimeSeconds / expectedSeconds) : undefined;
    onProgress(ratio === undefined ? { outTimeSeconds } : { outTimeSeconds, ratio });
  };
}

/** Runs one binary with an argument array (never a shell), a hard time limit and cancellation. */
async function run(tool: string, binary: string, args: string[], options: RunOptions, withProgress: boolean) {
  const started = Date.now();
  const onLine = withProgress ? progressLines(options) : undefined;
  const result = await runProgram(binary, args, {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(onLine ? { onLine } : {}),
    env: { AV_LOG_FORCE_NOCOLOR: '1' },
  });
  if (!result.failed) return result;
  if (result.isCanceled && options.signal?.aborted)
    throw options.signal.reason ?? new DOMException('Aborted', 'AbortError');
  // Out of descriptors or processes: this run fails, not the media (and not the server).
  if (result.spawnError) throw spawnError(binary, result.spawnError);
  throw new FfmpegError({
    tool,
    command: [binary, ...args],
    ...(result.exitCode === undefined ? {} : { exitCode: result.exitCode }),
    ...(result.signal ? { signal: result.signal } : {}),
    timedOut: result.timedOut,
    isCanceled: result.isCanceled,
    durationMs: Date.now() - started,
    stderrTail: tidyStderr(result.stderr),
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
  return result.stderr;
}

/** Runs ffprobe and returns its stdout. */
export async function runFfprobe(binary: string, args: string[], options: RunOptions): Promise<string> {
  const result = await run('ffprobe', binary, ['-hide_banner', '-loglevel', 'error', ...args], options, false);
  return result.stdout;
}

/** The full argv of an ffmpeg run, as `--dry-run` and benchmarks show it. */
export const ffmpegCommandLine = (binary: string, args: string[]): string[] => [
  binary,
  ...COMMON_FFMPEG_FLAGS,
  ...args,
];

/** `ffmpeg -version`'s first line, for /health and `--version`. */
export async function binaryVersion(binary: string): Promise<string> {
  const result = await runProgram(binary, ['-version'], { timeoutMs: 10_000 });
  return result.stdout.split('\n')[0] || 'unknown';
}
