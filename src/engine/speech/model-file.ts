import { closeSync, openSync, statSync } from 'node:fs';
import { MediaflowError } from '../errors.js';
import { ModelProblem, walkModel, type ModelFacts } from './ggml-check.js';

/**
 * What mediaflow reads of a whisper.cpp model file (the legacy ggml format) before running it, at once, on each
 * request and for /health: whether it is one, whole up to its last byte (ggml-check.ts walks its header and every
 * tensor's), and whether it is multilingual. whisper.cpp itself loads a file cut short before its first tensor as an
 * "empty model for testing" that recognises nothing and exits 0, and fails on one cut inside its tensors only once the
 * input has been fetched and decoded: both are refused here instead, before anything is fetched.
 */

/**
 * A model file that cannot be used: a 500, since the server's setting is at fault, naming what to set (not the path:
 * a message never shows the server's disk layout).
 */
const unusable = (why: string) =>
  new MediaflowError(
    'MF_ERR_INTERNAL',
    `MEDIAFLOW_WHISPER_MODEL is not a usable whisper.cpp model: ${why}; set it to the path of a ggml model file ` +
      '(docs/transcription.md)',
  );

/** What a walk's problem says to the operator; any other error is thrown on. */
function problemOf(error: unknown): string {
  if (!(error instanceof ModelProblem)) throw error;
  return error.cut ? `the file is cut short: ${error.detail}` : `the file is not a ggml model: ${error.detail}`;
}

/**
 * The last file read, by path, size and time of change, and what was found (its facts or why it is unusable):
 * /health and every request ask, and the file rarely changes.
 */
let cached: { key: string; facts?: ModelFacts; problem?: string } | undefined;

/**
 * The facts of the model at `file`, read synchronously (its header and one small read per tensor, once per version of
 * the file: a request's checks run before anything is queued). Throws a 500 saying what is wrong with the file.
 */
export function modelFacts(file: string): ModelFacts {
  let stats;
  try {
    stats = statSync(file);
  } catch (error) {
    throw unusable(`the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown'})`);
  }
  if (!stats.isFile()) throw unusable('it names no file');
  const key = `${file}\0${stats.size}\0${stats.mtimeMs}`;
  // A new error each time: a thrown error is the request's own (its stack, what handlers add to it).
  if (cached?.key === key) {
    if (cached.problem) throw unusable(cached.problem);
    return cached.facts!;
  }
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw unusable(`the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown'})`);
  }
  try {
    const { vocabulary, multilingual } = walkModel(fd, stats.size);
    cached = { key, facts: { vocabulary, multilingual } };
    return cached.facts!;
  } catch (error) {
    cached = { key, problem: problemOf(error) };
    throw unusable(cached.problem!);
  } finally {
    closeSync(fd);
  }
}
