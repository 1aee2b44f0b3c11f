import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.js';
import { probeFile } from '../probe/probe.js';
import { extensionOfType, knownExtension } from '../storage/media-types.js';
import { byteMeter, type ByteBudget } from './fetcher.js';
import { checkAnyKind } from './input-kind.js';

/**
 * Files a client sends in the request instead of URLs (`POST /files/`, or a file part in an input
 * field): received as downloads are (streamed to disk within the same limits), checked as downloads
 * are (probed; not media is a 422), then kept in the output store, where any job reads them as own
 * outputs. Nothing the client names reaches a path: the store path is a fresh UUID v4 and an
 * extension of the media-type table.
 */

/** The store path of an uploaded file: `<uuid>_upload.<ext>`, the extension from its name, else its type. */
export function uploadPath(filename: string, contentType: string | undefined): string {
  const extension = knownExtension(filename) || extensionOfType(contentType ?? '');
  return `${randomUUID()}_upload${extension}`;
}

/**
 * Streams one uploaded file to `target`, never holding it whole: a 413 at the first byte past
 * MEDIAFLOW_MAX_INPUT_BYTES or past the request's budget (MEDIAFLOW_MAX_REQUEST_BYTES), and each
 * chunk through `space` (the disk space reserved for it: a 507) before it is written. Returns its
 * size and SHA-256 (what an idempotent replay is compared by: the same file uploaded again). `signal`
 * stops it (the client went away: the parser does not always end a part it was cut in).
 */
export async function receiveFile(
  file: Readable,
  target: string,
  source: string,
  limits: { maxBytes: number; budget: ByteBudget; space: Transform },
  signal: AbortSignal,
): Promise<{ bytes: number; sha256: string }> {
  const meter = byteMeter(source, { maxBytes: limits.maxBytes }, limits.budget);
  const hash = createHash('sha256');
  meter.on('data', (chunk: Buffer) => hash.update(chunk));
  await pipeline(file, meter, limits.space, createWriteStream(target), { signal });
  return { bytes: meter.bytes, sha256: hash.digest('hex') };
}

/**
 * Probes an uploaded file as a downloaded input is probed, and refuses (422) what no operation
 * could read: not media, an empty file, a playlist, a picture over MEDIAFLOW_MAX_PIXELS, media
 * over MEDIAFLOW_MAX_DURATION. Its kind (video, audio, ...) is checked by the job that uses it.
 */
export async function checkUploadedFile(
  ffprobe: string,
  file: string,
  source: string,
  config: Pick<Config, 'maxPixels' | 'maxDurationMs'>,
): Promise<void> {
  const facts = await probeFile(ffprobe, path.basename(file), {
    cwd: path.dirname(file),
    timeoutMs: 60_000,
    maxPixels: config.maxPixels,
    source,
  });
  checkAnyKind(source, facts, config);
}
