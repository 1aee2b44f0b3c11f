import type { JobProgress } from '../engine/engine.js';

/** Shows a job's stage and percent on stderr: a redrawn line on a TTY, nothing otherwise (stdout stays pure JSON). */
export function createProgressReporter(label: string, stream: NodeJS.WriteStream = process.stderr) {
  let shown = false;
  return {
    update: (progress: JobProgress) => {
      if (!stream.isTTY) return;
      const percent = progress.ratio !== undefined ? ` ${Math.round(progress.ratio * 100)}%` : '';
      stream.write(`\r\x1b[2K${label}: ${progress.stage}${percent}`);
      shown = true;
    },
    done: () => {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
}
