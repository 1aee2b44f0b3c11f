import { isAbort, MediaflowError, problemText } from '../engine/errors.js';
import { hintFor } from './hints.js';

/** Prints an error the way every command does, and sets the exit code: 2 for bad input, 1 otherwise. */
export function fail(error: unknown): void {
  if (error instanceof MediaflowError) {
    process.stderr.write(`mediaflow: ${error.message}\n`);
    // Every problem of a document, each on its line with its path (the first is the message too).
    if (error.errors && error.errors.length > 1)
      for (const problem of error.errors) process.stderr.write(`mediaflow:   ${problemText(problem)}\n`);
    const hint = hintFor(error.message);
    if (hint) process.stderr.write(`mediaflow: ${hint}\n`);
    // An unexpected failure (a plugin's bug, say) keeps its details in the cause: shown when asked for.
    if (error.status >= 500 && error.cause !== undefined && process.env.MEDIAFLOW_LOG_LEVEL === 'debug') {
      const cause = error.cause as Error;
      const stack = String(cause?.stack ?? cause);
      const causedBy = cause?.cause instanceof Error ? `caused by ${String(cause.cause.stack)}\n` : '';
      process.stderr.write(`${stack}\n${causedBy}`);
    }
    process.exitCode = error.status === 400 || error.status === 404 ? 2 : 1;
  } else if (isAbort(error)) {
    process.stderr.write('mediaflow: cancelled\n');
    process.exitCode = 130;
  } else {
    process.stderr.write(`mediaflow: ${(error as Error)?.message ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
