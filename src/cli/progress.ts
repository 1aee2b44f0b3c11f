import type { JobProgress } from '../engine/run/job-run.js';
import type { BatchEvent } from '../pipelines/batch.js';
import type { StepEvent } from '../pipelines/runner.js';

/**
 * Progress on stderr, shared by one-off operations and `mediaflow run`: on a TTY one status line,
 * redrawn in place, with log lines printed above it; elsewhere no status line, and log lines plain
 * (for CI logs and files). stdout stays pure JSON either way.
 */
export class StatusLine {
  readonly tty: boolean;
  private shown = false;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(stream.isTTY);
  }

  /** Redraws the status line (a TTY only), cut to the terminal's width. */
  show(text: string): void {
    if (!this.tty) return;
    const width = this.stream.columns || 100;
    this.stream.write(`\r\x1b[2K${text.length > width - 1 ? `${text.slice(0, width - 2)}…` : text}`);
    this.shown = true;
  }

  /** Prints a line that stays: above the status line on a TTY, plain elsewhere. */
  log(text: string): void {
    this.clear();
    this.stream.write(`${text}\n`);
  }

  /** Removes the status line. */
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[2K');
    this.shown = false;
  }
}

/** A job's stage, with its percent done (from ffmpeg's `-progress`) when known: `process 42%`. */
export const describeProgress = (progress: JobProgress): string =>
  `${progress.stage}${progress.ratio !== undefined ? ` ${Math.round(progress.ratio * 100)}%` : ''}`;

/** `850ms`, `4.2s`, `3m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor(whole / 60) % 60).padStart(2, '0')}m`;
}

/** Shows a job's stage and percent on stderr: a redrawn line on a TTY, nothing otherwise (stdout stays pure JSON). */
export function createProgressReporter(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const line = new StatusLine(stream);
  return {
    update: (progress: JobProgress) => line.show(`${label}: ${describeProgress(progress)}`),
    done: () => line.clear(),
  };
}

/**
 * Progress of one pipeline run: on a TTY, every running step with its stage and percent on the
 * status line; elsewhere a log line as each step starts and ends.
 */
export function createStepsReporter(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const line = new StatusLine(stream);
  const running = new Map<string, { items?: number; progress: Map<number, JobProgress> }>();
  const redraw = () => {
    const parts = [...running.entries()].map(([step, state]) => {
      if (state.items !== undefined) {
        const finished = [...state.progress.values()].filter((p) => p.stage === 'publish').length;
        return `${step} ${finished}/${state.items}`;
      }
      const progress = state.progress.get(0);
      return progress ? `${step} ${describeProgress(progress)}` : step;
    });
    line.show(`${label}: ${parts.join(' | ')}`);
  };
  return {
    onEvent: (event: StepEvent) => {
      if (event.type === 'start') {
        running.set(event.step, { ...(event.items !== undefined ? { items: event.items } : {}), progress: new Map() });
        if (!line.tty)
          line.log(
            `${label}: step '${event.step}' (${event.op}) ` +
              `started${event.items !== undefined ? ` for ${event.items} items` : ''}`,
          );
      } else if (event.type === 'progress') {
        running.get(event.step)?.progress.set(event.item ?? 0, event.progress);
      } else {
        running.delete(event.step);
        if (!line.tty) line.log(`${label}: step '${event.step}' done in ${formatDuration(event.ms)}`);
      }
      redraw();
    },
    done: () => line.clear(),
  };
}

/**
 * Progress of a batch: rows done, failed and running, and an estimate of the time left (from the
 * rows this run has finished). On a TTY that is the status line, with a line per ended row above
 * it; elsewhere each ended row is a log line carrying the same counts.
 */
export function createBatchReporter(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const line = new StatusLine(stream);
  const started = Date.now();
  let total = 0;
  let toRun = 0;
  let done = 0;
  let failed = 0;
  let finishedHere = 0;
  const running = new Set<number>();
  const counts = () => {
    const left = toRun - finishedHere;
    const eta =
      finishedHere > 0 && left > 0
        ? `ETA ${formatDuration(((Date.now() - started) / finishedHere) * left)}`
        : left > 0
          ? 'ETA …'
          : 'finishing';
    return `${done}/${total} done, ${failed} failed, ${running.size} running, ${eta}`;
  };
  return {
    onEvent: (event: BatchEvent) => {
      if (event.type === 'begin') {
        total = event.total;
        toRun = event.toRun;
        done = event.skipped;
        line.log(`${label}: ${event.total} rows, ${event.skipped} already done, ${event.toRun} to run`);
      } else if (event.type === 'row-start') {
        running.add(event.row);
      } else {
        const { record } = event;
        running.delete(record.row);
        finishedHere++;
        if (record.status === 'done') done++;
        else failed++;
        const what =
          record.status === 'done' ? `done in ${formatDuration(record.timings.ms)}` : `failed: ${record.error}`;
        line.log(`${label}: row ${record.row} ${what} [${counts()}]`);
      }
      line.show(`${label}: ${counts()}`);
    },
    done: () => line.clear(),
  };
}
