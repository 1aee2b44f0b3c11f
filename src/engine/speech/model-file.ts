import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { MediaflowError } from '../errors.js';
import { GGML_MAGIC, MULTILINGUAL_VOCABULARY, type ModelFacts } from './ggml-check.js';

/**
 * What mediaflow reads of a whisper.cpp model file (the legacy ggml format) before running it, at once and from its
 * header alone (ggml-check.ts walks the whole layout, for downloads and `mediaflow models verify`): whether it is one,
 * whether it is whole enough to hold weights, and whether it is multilingual. whisper.cpp itself loads a file cut
 * short before its first tensor as an "empty model for testing" that recognises nothing and exits 0, so a truncated
 * download would give empty transcripts without a word of complaint: it is refused here instead.
 */

/** Bytes read to find the header's end: the mel filters (64 KB) and the vocabulary (about 500 KB) fit. */
const HEADER_BYTES = 4 * 1024 * 1024;

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

/** The header's facts of a model file's first bytes, or the reason it is no whole ggml model. */
function parse(head: Buffer, size: number): ModelFacts {
  if (head.length < 48 || head.readUInt32LE(0) !== GGML_MAGIC) throw unusable('the file is not a ggml model');
  const vocabulary = head.readInt32LE(4);
  let at = 48;
  const int = () => {
    if (at + 4 > head.length) throw unusable('the file ends inside its header (cut short?)');
    const value = head.readInt32LE(at);
    at += 4;
    return value;
  };
  // The mel filters (n_mel × n_fft floats), then the vocabulary (a count, then each token's length and bytes).
  const filters = int() * int();
  at += 4 * filters;
  const tokens = int();
  for (let i = 0; i < tokens; i++) {
    const length = int();
    at += length;
  }
  // The first tensor's header (dimensions, name length, type) must follow: a file cut before it has no weights.
  if (at + 12 > size || at + 12 > head.length) throw unusable('the file holds no weights (cut short?)');
  return { vocabulary, multilingual: vocabulary >= MULTILINGUAL_VOCABULARY };
}

/**
 * The last file read, by path, size and time of change, and what was found (its facts or why it is unusable):
 * /health and every request ask, and the file rarely changes.
 */
let cached: { key: string; facts?: ModelFacts; problem?: string } | undefined;

/**
 * The facts of the model at `file`, read synchronously (a few hundred kilobytes, once per version of the file: a
 * request's checks run before anything is queued). Throws a 500 saying what is wrong with the file.
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
  if (cached?.key === key) {
    // A new error each time: a thrown error is the request's own (its stack, what handlers add to it).
    if (cached.problem) throw new MediaflowError('MF_ERR_INTERNAL', cached.problem);
    return cached.facts!;
  }
  const head = Buffer.alloc(Math.min(HEADER_BYTES, stats.size));
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw unusable(`the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown'})`);
  }
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  try {
    const facts = parse(head, stats.size);
    cached = { key, facts };
    return facts;
  } catch (error) {
    cached = { key, problem: (error as MediaflowError).message };
    throw error;
  }
}
