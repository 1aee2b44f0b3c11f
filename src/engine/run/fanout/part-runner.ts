import os from 'node:os';
import { isAbort, MediaflowError } from '../../errors.js';
import { runFfmpeg } from '../../exec/ffmpeg.js';
import type { Slots } from '../../exec/slots.js';

/**
 * One command of a split encode: a part's video or the whole audio. Plain data, so that a task can travel to
 * another worker (Redis mode) and run in a workspace of its own there.
 */
export interface PartTask {
  /** The task's name within its job, and its file's stem: `fanout-part-000`, `fanout-audio`. */
  name: string;
  /** What it is, as its failure names it: `Part 2 of 4 (60 to 120 s of the input)`, `The sound`. */
  label: string;
  /** ffmpeg's arguments, file names relative to the workspace. */
  args: string[];
  /** The workspace files the command reads: inputs and generated files. */
  reads: string[];
  /** The file it writes. */
  output: string;
  /** Seconds of output it writes, which its progress is a ratio of. */
  seconds: number;
  /**
   * Runs on the job's own worker, in its workspace, never on another (Redis mode): the sound, whose whole input is
   * there, where another worker would first fetch that input from the store for a small output.
   */
  onJobWorker?: boolean;
}

/** A split encode's job, as its tasks' runner sees it. */
export interface PartJob {
  /** The engine run's id (its output id). */
  id: string;
  /** The job record the run belongs to, when it runs as a job: in Redis mode, the parent of the parts' jobs. */
  owner?: string;
  /** The job's workspace: every task's `reads` are there, and its `output` must be there once `run` resolves. */
  dir: string;
  signal?: AbortSignal;
  /** How far one task is, 0 to 1; a task run again (its worker died) starts again from 0. */
  onProgress?: (task: string, ratio: number) => void;
  /** What a task's ffmpeg logged, once it has succeeded (libass's warnings of glyphs no font has: the answer's). */
  onLog?: (task: string, log: string) => void;
}

/**
 * Runs a split encode's tasks at once, wherever it can: this process's ffmpeg slots (embedded), or child jobs any
 * worker takes (Redis mode). `run` settles only once no task runs any more: on the first failure, or a cancel, the
 * others are stopped, and it rejects with that failure.
 */
export interface PartRunner {
  run(job: PartJob, tasks: readonly PartTask[]): Promise<void>;
  /** How many parts of the job `owner` can run at once now (the parts are planned in a multiple of it). */
  capacity(owner?: string): Promise<number>;
}

/** Runs one task's ffmpeg in a workspace, in an ffmpeg slot of this process: the one way a part is encoded. */
export class PartEncoder {
  /**
   * The encoder threads of one part: this machine's cores shared among its slots. Parts run side by side, each
   * encoding a picture; x264's own choice is made for one encode alone on the machine (one and a half threads a
   * core), so two parts at once would run three times the threads of two cores.
   */
  private readonly threads: string;

  constructor(
    private readonly ffmpeg: string,
    readonly slots: Slots,
    /** MEDIAFLOW_JOB_TIMEOUT: one task is one ffmpeg run. */
    private readonly timeoutMs: number,
  ) {
    this.threads = String(Math.max(1, Math.floor(os.availableParallelism() / slots.size)));
  }

  /**
   * Runs `task` with `dir` as its workspace (its reads there, its output written there); `onRatio` hears 0 to 1.
   * Resolves with what its ffmpeg logged (see runFfmpeg).
   */
  async encode(task: PartTask, dir: string, signal: AbortSignal, onRatio?: (ratio: number) => void): Promise<string> {
    return this.slots.run(
      () =>
        runFfmpeg(this.ffmpeg, withThreads(task.args, this.threads), {
          cwd: dir,
          timeoutMs: this.timeoutMs,
          signal,
          expectedSeconds: task.seconds,
          ...(onRatio ? { onProgress: (p) => p.ratio !== undefined && onRatio(p.ratio) } : {}),
        }),
      signal,
    );
  }
}

/** A task's ffmpeg arguments with the encoders' threads set, before the output file (the last argument). */
const withThreads = (args: readonly string[], threads: string): string[] => [
  ...args.slice(0, -1),
  '-threads',
  threads,
  ...args.slice(-1),
];

/** Runs every task in this process, in the job's own workspace. */
export class LocalPartRunner implements PartRunner {
  constructor(private readonly encoder: PartEncoder) {}

  async capacity(): Promise<number> {
    return this.encoder.slots.size;
  }

  async run(job: PartJob, tasks: readonly PartTask[]): Promise<void> {
    await allOrFirstFailure(job.signal, tasks, async (task, signal) => {
      const onRatio = job.onProgress && ((ratio: number) => job.onProgress!(task.name, ratio));
      const log = await this.encoder.encode(task, job.dir, signal, onRatio).catch((error: unknown) => {
        throw partFailure(task, error);
      });
      job.onLog?.(task.name, log);
    });
  }
}

/** A part's failure as its job's: the error's code and status kept, its text saying which part it was. */
export function partFailure(task: PartTask, error: unknown): unknown {
  if (!(error instanceof MediaflowError) || isAbort(error)) return error;
  return new MediaflowError(error.code, `${task.label}: ${error.message}`, { cause: error });
}

/**
 * Runs `work` for every item at once; the first failure (or `signal`) aborts the others, and the promise settles
 * once all have ended, rejecting with that first failure: nothing runs on after it.
 */
export async function allOrFirstFailure<T>(
  signal: AbortSignal | undefined,
  items: readonly T[],
  work: (item: T, signal: AbortSignal) => Promise<unknown>,
): Promise<void> {
  const stop = new AbortController();
  const combined = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  let failure: { error: unknown } | undefined;
  await Promise.all(
    items.map((item) =>
      work(item, combined).catch((error: unknown) => {
        failure ??= { error: signal?.aborted ? (signal.reason ?? error) : error };
        stop.abort(error);
      }),
    ),
  );
  if (failure) throw failure.error;
}
