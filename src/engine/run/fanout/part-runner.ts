import { runFfmpeg } from '../ffmpeg.js';
import type { Slots } from '../slots.js';

/**
 * One command of a split encode: a part's video or the whole audio. Plain data, so that a task can travel to
 * another worker (Redis mode) and run in a workspace of its own there.
 */
export interface PartTask {
  /** The task's name within its job, and its file's stem: `part-000`, `audio`. */
  name: string;
  /** ffmpeg's arguments, file names relative to the workspace. */
  args: string[];
  /** The workspace files the command reads: inputs and generated files. */
  reads: string[];
  /** The file it writes. */
  output: string;
  /** Seconds of output it writes, which its progress is a ratio of. */
  seconds: number;
}

/** A split encode's job, as its tasks' runner sees it. */
export interface PartJob {
  /**
   * The engine run's id (its output id): unique to the run, and the same on every run of a job's operation, so a
   * run again (its worker died) may find parts already made.
   */
  id: string;
  /** The job record the run belongs to, when it runs as a job: in Redis mode, the parent of the parts' jobs. */
  owner?: string;
  /** The job's workspace: every task's `reads` are there, and its `output` must be there once `run` resolves. */
  dir: string;
  signal?: AbortSignal;
  /** How far one task is, 0 to 1; a task run again (its worker died) starts again from 0. */
  onProgress?: (task: string, ratio: number) => void;
}

/**
 * Runs a split encode's tasks at once, wherever it can: this process's ffmpeg slots (embedded), or child jobs any
 * worker takes (Redis mode). `run` settles only once no task runs any more: on the first failure, or a cancel, the
 * others are stopped, and it rejects with that failure.
 */
export interface PartRunner {
  run(job: PartJob, tasks: readonly PartTask[]): Promise<void>;
}

/** Runs every task in this process, each in an ffmpeg slot, in the job's own workspace. */
export class LocalPartRunner implements PartRunner {
  constructor(
    private readonly ffmpeg: string,
    private readonly slots: Slots,
    /** MEDIAFLOW_JOB_TIMEOUT: one task is one ffmpeg run. */
    private readonly timeoutMs: number,
  ) {}

  async run(job: PartJob, tasks: readonly PartTask[]): Promise<void> {
    await allOrFirstFailure(job.signal, tasks, (task, signal) =>
      this.slots.run(
        () =>
          runFfmpeg(this.ffmpeg, task.args, {
            cwd: job.dir,
            timeoutMs: this.timeoutMs,
            signal,
            expectedSeconds: task.seconds,
            ...(job.onProgress
              ? { onProgress: (p) => p.ratio !== undefined && job.onProgress!(task.name, p.ratio) }
              : {}),
          }),
        signal,
      ),
    );
  }
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
