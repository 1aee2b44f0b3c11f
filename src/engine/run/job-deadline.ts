import { timeoutError } from '../errors.js';

/** The longest delay a Node timer keeps; a longer limit is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The whole-job time limit of one job (MEDIAFLOW_JOB_TOTAL_TIMEOUT), running from when the job took its slot. */
export interface JobDeadline {
  /**
   * Aborted when the job is cancelled (the signal it was given) or when its time is up: its reason is then a 504
   * naming the setting, which every run, step and part hands on as its own error.
   */
  signal: AbortSignal | undefined;
  /** When the time is up, on `performance.now()`'s clock (Infinity without a limit). */
  at: number;
  /** Stops the timer once the job has ended. */
  clear: () => void;
}

/**
 * The time limit of a job as a signal beside its cancellation: one ffmpeg run is bounded by MEDIAFLOW_JOB_TIMEOUT,
 * and this bounds the sum of all of them, the in-process steps and the parts of a split encode, so that a job of many
 * runs cannot hold its slot for their number times the per-run limit. `limitMs` 0: no limit.
 */
export function jobDeadline(limitMs: number, cancel: AbortSignal | undefined): JobDeadline {
  if (limitMs <= 0) return { signal: cancel, at: Infinity, clear: () => {} };
  const expired = new AbortController();
  const seconds = Math.round(limitMs / 100) / 10;
  const timer = setTimeout(
    () =>
      expired.abort(
        timeoutError(`The job ran past its time limit of ${seconds} s (MEDIAFLOW_JOB_TOTAL_TIMEOUT) and was stopped`),
      ),
    Math.min(limitMs, MAX_TIMER_MS),
  );
  return {
    signal: cancel ? AbortSignal.any([cancel, expired.signal]) : expired.signal,
    at: performance.now() + limitMs,
    clear: () => clearTimeout(timer),
  };
}
