import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import chardet from 'chardet';
import iconv from 'iconv-lite';
import { stripEmbeddedFiles } from './ass-embedded.js';
import { mediaError, type MediaflowError } from '../errors.js';
import { subtitleFacts } from '../probe/subtitle-format.js';
import type { TextWorkers } from './text-workers.js';

/**
 * Subtitle files come in whatever encoding their author's editor saved: UTF-16 from Windows tools,
 * Windows-1252, Shift_JIS, GB18030... ffmpeg's subtitle decoders and libass read UTF-8 only, so
 * every subtitle input is turned into UTF-8 (without a byte-order mark) before it is probed.
 */

/** Byte-order marks, longest first (a UTF-32LE mark begins like a UTF-16LE one). */
const BOMS: ReadonlyArray<{ bytes: readonly number[]; encoding: string }> = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { bytes: [0xff, 0xfe, 0x00, 0x00], encoding: 'utf-32le' },
  { bytes: [0x00, 0x00, 0xfe, 0xff], encoding: 'utf-32be' },
  { bytes: [0xff, 0xfe], encoding: 'utf-16le' },
  { bytes: [0xfe, 0xff], encoding: 'utf-16be' },
];

/** The byte-order mark a file starts with, if any. */
const bomOf = (bytes: Uint8Array) => BOMS.find(({ bytes: mark }) => mark.every((byte, i) => bytes[i] === byte));

/**
 * Labels read as their superset, as browsers do (WHATWG Encoding): bytes 0x80-0x9F are C1 controls
 * in ISO-8859-1/-9, which no subtitle holds, and the curly quotes and dashes of Windows-1252/-1254.
 */
const SUPERSETS: Record<string, string> = { 'iso-8859-1': 'windows-1252', 'iso-8859-9': 'windows-1254' };

/** Below this confidence (chardet's 0-100 scale) chardet is guessing: random bytes score about 5. */
const MIN_CONFIDENCE = 10;

/** Control characters no subtitle text holds (tab, line feed, form feed and carriage return are text). */
// eslint-disable-next-line no-control-regex -- matching control characters is what this expression is for.
const BINARY = /[\u0000-\u0008\u000B\u000E-\u001F\u007F]/u;

/** Bytes chardet looks at, and the start checked for binary data before a whole file is read: 1 MiB. */
const SAMPLE_BYTES = 1 << 20;

/**
 * The encoding of a subtitle file's bytes, with how many bytes of byte-order mark to skip;
 * undefined when it cannot be told.
 */
export function detectEncoding(bytes: Uint8Array): { encoding: string; skip: number } | undefined {
  const bom = bomOf(bytes);
  if (bom) return { encoding: bom.encoding, skip: bom.bytes.length };
  if (isUtf8(bytes)) return { encoding: 'utf-8', skip: 0 };
  const [best] = chardet.analyse(bytes.subarray(0, SAMPLE_BYTES));
  if (!best || best.confidence < MIN_CONFIDENCE || !iconv.encodingExists(best.name)) return undefined;
  const name = best.name.toLowerCase();
  return { encoding: SUPERSETS[name] ?? name, skip: 0 };
}

/**
 * A subtitle file's text, whatever its encoding, and whether its bytes already were plain UTF-8
 * (no byte-order mark); undefined when they are not text in an encoding that can be told.
 */
export function decodeSubtitle(bytes: Uint8Array): { text: string; wasUtf8: boolean } | undefined {
  const detected = detectEncoding(bytes);
  if (!detected) return undefined;
  const text = iconv.decode(Buffer.from(bytes.subarray(detected.skip)), detected.encoding);
  if (BINARY.test(text)) return undefined;
  return { text, wasUtf8: detected.encoding === 'utf-8' && detected.skip === 0 };
}

/**
 * Whether a file's start is binary data in any reading: it holds a NUL byte and no UTF-16 or UTF-32 byte-order mark.
 */
async function startsBinary(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SAMPLE_BYTES), 0, SAMPLE_BYTES, 0);
    const head = buffer.subarray(0, bytesRead);
    const bom = bomOf(head);
    // UTF-16 and UTF-32 text holds NUL bytes; text in any other encoding does not.
    return (bom === undefined || bom.encoding === 'utf-8') && head.includes(0);
  } finally {
    await handle.close();
  }
}

/**
 * Rewrites a subtitle input in UTF-8 when it is in another encoding or starts with a byte-order
 * mark, and an ASS or SSA script without its embedded files (ass-embedded.ts). The new file
 * replaces the old name (write, then rename) rather than being written through it: a workspace
 * input may be a hard link to the input cache or to a user's own file.
 * Runs in a text worker thread (see `subtitleToUtf8`). False when the file is not text in an
 * encoding that can be told.
 */
export async function cleanSubtitleFile(file: string): Promise<boolean> {
  // A video given as subtitles (up to MEDIAFLOW_MAX_INPUT_BYTES) is told by its start, not read whole.
  const decoded = (await startsBinary(file)) ? undefined : decodeSubtitle(await readFile(file));
  if (!decoded) return false;
  const isAss = subtitleFacts(Buffer.from(decoded.text.slice(0, 4096)))?.formatName === 'ass';
  const text = isAss ? stripEmbeddedFiles(decoded.text) : decoded.text;
  if (decoded.wasUtf8 && text.length === decoded.text.length) return true;
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, text, 'utf8');
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
  return true;
}

/**
 * `cleanSubtitleFile` in a thread of `workers`: detecting and converting megabytes of text takes
 * the CPU for a while, which must not stall other requests. A file that is not text in an
 * encoding that can be told is left as it is, and the 422 it deserves is returned for the caller
 * to throw once the probe has had its say: a binary file may be other media (an MP3 given as
 * subtitles), which the probe names better.
 */
export async function subtitleToUtf8(
  workers: TextWorkers,
  file: string,
  source: string,
  signal?: AbortSignal,
): Promise<MediaflowError | undefined> {
  if (await workers.run<boolean>(new URL(import.meta.url), 'cleanSubtitleFile', [file], signal)) return undefined;
  return mediaError(
    `Input ${source} is not a subtitle file: its character encoding could not be detected (binary data, or ` +
      `text in an unknown encoding)`,
  );
}
