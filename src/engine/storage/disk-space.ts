import { statfs } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { storageError } from '../errors.js';

/** The free space of the data directory's file system against MEDIAFLOW_MIN_FREE_DISK, as /health shows it. */
export interface DiskSpace {
  /** Bytes an unprivileged process may still write (statfs `bavail`, not `bfree`: root's reserve is not ours). */
  free_bytes: number;
  /** MEDIAFLOW_MIN_FREE_DISK; 0 when the check is off. */
  min_free_bytes: number;
  ok: boolean;
}

/** Measures the free space of the file system that holds `dir`. */
export async function diskSpace(dir: string, minFreeBytes: number): Promise<DiskSpace> {
  const info = await statfs(dir);
  const free = info.bavail * info.bsize;
  return { free_bytes: free, min_free_bytes: minFreeBytes, ok: free >= minFreeBytes };
}

/**
 * Bytes promised to uploads still arriving and not yet written, per data directory: free space
 * they will take, which a measure of the disk does not show yet.
 */
const promised = new Map<string, number>();
/** The last reservation being decided, per data directory. */
const deciding = new Map<string, Promise<void>>();

function promise(dir: string, bytes: number): void {
  const total = (promised.get(dir) ?? 0) + bytes;
  if (total > 0) promised.set(dir, total);
  else promised.delete(dir);
}

/**
 * Refuses new work with a 507 while the data directory has less than `minFreeBytes` free, the
 * bytes promised to uploads still arriving counted as taken: a job taken now would fail part way
 * (its download, its output or its record), after using a core and the bandwidth. 0 turns the
 * check off.
 */
export async function requireDiskSpace(dir: string, minFreeBytes: number): Promise<void> {
  if (minFreeBytes <= 0) return;
  const space = await diskSpace(dir, minFreeBytes);
  const taken = promised.get(dir) ?? 0;
  if (space.free_bytes - taken < minFreeBytes)
    throw storageError(
      `${space.free_bytes} bytes free${taken > 0 ? `, ${taken} of them promised to uploads arriving` : ''}, ` +
        `below MEDIAFLOW_MIN_FREE_DISK of ${minFreeBytes}`,
    );
}

/**
 * The disk space of one request's uploads, reserved as they stream in, so that uploads arriving at
 * once cannot each pass one check of free space and then fill the disk together: each byte is
 * written only once the disk holds it above MEDIAFLOW_MIN_FREE_DISK besides everything promised to
 * the others (a 507 otherwise, which fails this upload alone). The first reservation is what the
 * request says it will send (its Content-Length), so an upload that cannot fit is refused before a
 * byte of it is stored, and those that fit are not refused half way; a body of unknown length
 * reserves `step` bytes at a time (less when less is spare: it is refused only when a chunk does
 * not fit). Reservations are decided one at a time, so two never count the same free bytes. Off
 * (every byte allowed) when MEDIAFLOW_MIN_FREE_DISK is 0.
 */
export class SpaceReservation {
  private reserved = 0;
  private written = 0;

  constructor(
    private readonly dir: string,
    private readonly minFreeBytes: number,
    private readonly step: number,
  ) {}

  /**
   * Reserves up to `wanted` bytes more, at least `needed` of them (all by default), or refuses with
   * a 507 when the disk has not got `needed` to spare.
   */
  reserve(wanted: number, needed = wanted): Promise<void> {
    if (this.minFreeBytes <= 0) return Promise.resolve();
    const decided = (deciding.get(this.dir) ?? Promise.resolve()).then(async () => {
      const { free_bytes: free } = await diskSpace(this.dir, this.minFreeBytes);
      const spare = free - this.minFreeBytes - (promised.get(this.dir) ?? 0);
      if (spare < needed)
        throw storageError(
          `an upload needs ${needed} more bytes, ${Math.max(0, spare)} are spare above MEDIAFLOW_MIN_FREE_DISK ` +
            `and the uploads arriving`,
        );
      const granted = Math.min(wanted, Math.max(spare, needed));
      this.reserved += granted;
      promise(this.dir, granted);
    });
    const settled = decided.catch(() => undefined);
    deciding.set(this.dir, settled);
    void settled.then(() => deciding.get(this.dir) === settled && deciding.delete(this.dir));
    return decided;
  }

  /** Counts `bytes` as written, reserving more first when they go past the reservation. */
  async take(bytes: number): Promise<void> {
    if (this.minFreeBytes <= 0) return;
    const beyond = this.written + bytes - this.reserved;
    if (beyond > 0) await this.reserve(Math.max(beyond, this.step), beyond);
    this.written += bytes;
    // Written bytes show in the disk's free space: they are no longer a promise.
    promise(this.dir, -bytes);
  }

  /** A stream stage that takes each chunk's space before passing it on (to the file being written). */
  stage(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.take(chunk.length).then(() => done(null, chunk), done);
      },
    });
  }

  /** Gives back what was reserved and not written (the request is over; its files are kept or removed). */
  release(): void {
    promise(this.dir, -(this.reserved - this.written));
    this.reserved = this.written;
  }
}
