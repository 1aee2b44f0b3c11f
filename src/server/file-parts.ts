import path from 'node:path';
import type { MultipartFile } from '@fastify/multipart';
import type { FilePartHandler } from './body.js';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import {
  busyError,
  descriptorsError,
  diskFullError,
  isAbort,
  MediaflowError,
  paramError,
  shortened,
} from '../engine/errors.js';
import { ByteBudget } from '../engine/inputs/fetcher.js';
import { checkUploadedFile, receiveFile, uploadPath } from '../engine/inputs/uploaded-file.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { SpaceReservation } from '../engine/storage/disk-space.js';
import { clientGone } from './disconnect.js';
import { publishAll, type OutputStore, type Workspaces } from '../engine/storage/storage.js';

/** What receiving uploaded files needs: the limits, where they wait, where they go, and the probe. */
export interface UploadContext {
  config: Config;
  store: OutputStore;
  workspaces: Workspaces;
  ffprobe: string;
  gate: UploadGate;
}

/**
 * Counts the requests whose files are being received, each holding a file open, and refuses more
 * than `limit` at once with a 503 (src/server/connections.ts: uploadsAtOnce).
 */
export class UploadGate {
  private open = 0;

  constructor(readonly limit: number) {}

  /** Takes a place, or refuses; returns the function that gives it back (once, however often called). */
  enter(): () => void {
    if (this.open >= this.limit)
      throw busyError(`${this.limit} uploads are arriving at once, the most this server takes; retry later`);
    this.open++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.open--;
    };
  }
}

/** One file received, as `POST /files/` describes it. */
interface Received {
  field: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  /** How messages name it: its file name and part. */
  source: string;
  /** Where it waits in the work folder until it is published. */
  file: string;
  /** Its path in the output store. */
  path: string;
}

/** The 400 of a body that ended before its closing boundary, inside or just after the file part `source`. */
const cutShort = (source: string) =>
  new MediaflowError(
    'MF_ERR_BAD_REQUEST',
    `Malformed request body: it ends without its closing boundary (cut at ${source})`,
  );

/** Disk space an upload of unknown length reserves at a time (a chunked body, or one longer than it said). */
const RESERVE_STEP = 16 * 1024 * 1024;

/** A client's file name as a message may quote it: no control characters, at most 60 characters. */
const printable = (name: string) => shortened(name.replace(/[\p{Cc}\p{Cf}]/gu, ''));

/**
 * The file parts of one request: each streamed into a work folder of the request's own as it
 * arrives, then, once the whole body is in, probed and published to the output store together
 * (all or none). A request that fails at any point, the client cut off included, leaves nothing:
 * the work folder is removed by `close`, and what was published by `discard`.
 */
export class FileParts {
  private readonly received: Received[] = [];
  private readonly budget: ByteBudget;
  private readonly space: SpaceReservation;
  private dir: string | undefined;
  private published = false;
  /** Gives back the request's place among the uploads arriving (UploadGate). */
  private leave = () => {};
  /** Fires when the client goes away before its body has all arrived. */
  private readonly gone = new AbortController();
  private readonly onClose = () => {
    if (!this.request.raw.complete) this.gone.abort(clientGone());
  };

  constructor(
    private readonly context: UploadContext,
    private readonly request: FastifyRequest,
    private readonly base: string,
  ) {
    const { config } = context;
    this.budget = new ByteBudget(config.maxRequestBytes, config.maxRequestBytes);
    this.space = new SpaceReservation(config.dataDir, config.minFreeDiskBytes, RESERVE_STEP);
  }

  /**
   * Reserves the disk space of the files before the first is stored: all the body says it holds
   * (its Content-Length, within the request limit), or, for a body of unknown length, a first step
   * of it (none needed yet: its chunks are reserved as they come).
   */
  private reserveSpace(): Promise<void> {
    const declared = Number(this.request.headers['content-length']);
    if (!Number.isSafeInteger(declared) || declared <= 0) return this.space.reserve(RESERVE_STEP, 0);
    return this.space.reserve(Math.min(declared, this.context.config.maxRequestBytes));
  }

  get count(): number {
    return this.received.length;
  }

  /**
   * Receives one file part; returns the URL it will have once published (the field's value).
   * `stalled` aborts when the body stops arriving (MEDIAFLOW_BODY_IDLE_TIMEOUT).
   */
  async receive(part: MultipartFile, stalled: AbortSignal): Promise<string> {
    const { config, workspaces } = this.context;
    const name = part.filename ?? '';
    const source = `'${printable(name || part.fieldname)}' (file part \`${printable(part.fieldname)}\`)`;
    // What the parser reports on the part: the body cut inside it (busboy's "terminated early").
    let cut: Error | undefined;
    part.file.on('error', (error: Error) => (cut ??= error));
    try {
      if (this.dir === undefined) {
        this.request.raw.once('close', this.onClose);
        this.leave = this.context.gate.enter();
        await this.reserveSpace();
        this.dir = await workspaces.create(`upload-${this.request.id}`);
      }
      // Gone before this part: its 'close' may have passed before the listener was there.
      if (this.request.raw.destroyed) this.onClose();
      this.gone.signal.throwIfAborted();
      stalled.throwIfAborted();
      // The body ended while the part waited (no closing boundary): the parser has dropped the
      // part, and a stream ended that way would never finish the copy below.
      if (part.file.destroyed && !part.file.readableEnded) throw cutShort(source);
      const storePath = uploadPath(name, part.mimetype);
      const file = path.join(this.dir, `${this.received.length}${path.extname(storePath)}`);
      const { bytes, sha256 } = await receiveFile(
        part.file,
        file,
        source,
        {
          maxBytes: config.maxInputBytes,
          budget: this.budget,
          space: this.space.stage(),
        },
        AbortSignal.any([this.gone.signal, stalled]),
      );
      this.received.push({
        field: part.fieldname,
        name,
        contentType: part.mimetype,
        size: bytes,
        sha256,
        source,
        file,
        path: storePath,
      });
      return `${this.base}${SERVER_PATHS.uploads}/${storePath}`;
    } catch (error) {
      // What is left of the part is read and dropped, so the answer is not held up by an unread body.
      part.file.resume();
      throw this.explained(error, source, stalled, cut);
    }
  }

  /**
   * An error as the client is told it: its own limits and checks, a full disk, a body that stopped
   * arriving (408), its going away, a body cut inside a part (`cut`: busboy's "terminated early",
   * whether or not the rest of the request arrived); anything else is ours, told without its
   * details (a system error names paths of the server).
   */
  private explained(error: unknown, source: string, stalled: AbortSignal, cut: Error | undefined): Error {
    if (error instanceof MediaflowError) return error;
    const full = diskFullError(error) ?? descriptorsError(error);
    if (full) return full;
    if (stalled.aborted) return stalled.reason as Error;
    const { complete, destroyed } = this.request.raw;
    // A request is destroyed once read, too: only one that did not arrive whole is a client gone.
    if (isAbort(error) || (destroyed && !complete)) return clientGone();
    if (cut) return cutShort(source);
    if (!complete && (error as NodeJS.ErrnoException).syscall === undefined)
      return paramError(`Malformed request body: ${(error as Error).message}`);
    return new MediaflowError('MF_ERR_INTERNAL', 'Storing an uploaded file failed', { cause: error });
  }

  /**
   * Probes every file as a downloaded input is probed (not media: 422), then publishes them all
   * to the output store, or none. Called once the whole body has arrived.
   */
  async publish(): Promise<void> {
    if (this.received.length === 0) return;
    for (const file of this.received) {
      await checkUploadedFile(this.context.ffprobe, file.file, file.source, {
        maxPixels: this.context.config.maxPixels,
        maxDurationMs: this.context.config.maxDurationMs,
      });
    }
    await publishAll(
      this.context.store,
      this.received.map((file) => [file.file, file.path] as const),
    );
    this.published = true;
  }

  /** The files as `POST /files/` answers them. */
  described(): Array<{ field: string; name: string; size: number; content_type: string; url: string }> {
    return this.received.map((file) => ({
      field: file.field,
      name: file.name,
      size: file.size,
      content_type: file.contentType,
      url: `${this.base}${SERVER_PATHS.uploads}/${file.path}`,
    }));
  }

  /**
   * The fields as an idempotent replay is compared: each uploaded file's URL (new at every upload)
   * replaced by its content's hash, so the same request with the same files is the same request.
   */
  fingerprintFields(fields: Record<string, unknown>): Record<string, unknown> {
    const hashes = new Map(this.described().map((file, index) => [file.url, `sha256:${this.received[index]!.sha256}`]));
    const replaced = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(replaced) : typeof value === 'string' ? (hashes.get(value) ?? value) : value;
    return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, replaced(value)]));
  }

  /** Removes what was published: no job will use it (the request was refused, or replayed an earlier job). */
  async discard(): Promise<void> {
    if (!this.published) return;
    this.published = false;
    await this.context.store.remove(this.received.map((file) => file.path));
  }

  /** Called once the body has all been read: the disk space reserved for it and not written is given back. */
  bodyRead(): void {
    this.leave();
    this.space.release();
  }

  /** Removes the request's work folder, with whatever was received and not published. */
  async close(): Promise<void> {
    this.request.raw.off('close', this.onClose);
    this.leave();
    this.space.release();
    if (this.dir !== undefined) await this.context.workspaces.remove(this.dir);
  }
}

/**
 * The file part handler of an operation or pipeline route: a part named after one of its input
 * fields is that input; with `anyBut` (an operation of named values, Param.values), so is a part of
 * any name but those, whose URL becomes the value of that name; any other is refused (400) before a
 * byte of it is stored.
 */
export const inputFileParts =
  (parts: FileParts, inputFields: readonly string[], anyBut?: readonly string[]): FilePartHandler =>
  async (part, stalled) => {
    if (inputFields.includes(part.fieldname) || (anyBut && part.fieldname && !anyBut.includes(part.fieldname)))
      return parts.receive(part, stalled);
    part.file.resume();
    const named = inputFields.map((name) => `\`${name}\``).join(', ');
    throw paramError(
      anyBut
        ? `File part \`${printable(part.fieldname)}\` is not an input: that field of this route takes no file`
        : inputFields.length === 0
          ? `File part \`${printable(part.fieldname)}\` is not an input: this route takes no files`
          : `File part \`${printable(part.fieldname)}\` is not an input: send files in ${named}`,
    );
  };
