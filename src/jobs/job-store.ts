import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { MediaflowError } from '../engine/errors.js';
import { isAbandonedTemp, TEMP_PREFIX } from '../engine/storage/storage.js';
import { writeWhole } from '../engine/storage/whole-file.js';
import { idempotencyIndex, isTerminal, JOB_STATUSES, type JobRecord, type JobStatus } from './job.js';

/** Where job records live. The embedded store keeps files under the data directory; Redis would be another. */
export interface JobStore {
  /**
   * Stores a new record. When its idempotency key is already held by another record, stores
   * nothing and returns that record instead (check and insert are one step).
   */
  create(record: JobRecord): Promise<JobRecord>;
  get(id: string): Promise<JobRecord | undefined>;
  /** The record that holds an idempotency key, by its index (`idempotencyIndex`: the key within its owner's). */
  byKey(index: string): Promise<JobRecord | undefined>;
  /** Applies `change` to the stored record and stores it; undefined when there is no such record. */
  update(id: string, change: (record: JobRecord) => void): Promise<JobRecord | undefined>;
  /** Deletes a record (one the queue refused). */
  remove(id: string): Promise<void>;
  /** Records a restart must pick up: not finished, or finished with a webhook still to deliver. */
  unfinished(): Promise<JobRecord[]>;
  /** Deletes the records that finished before `cutoffMs` and owe no delivery, and returns them. */
  expire(cutoffMs: number): Promise<JobRecord[]>;
  /** How many records there are in each status. */
  counts(): Promise<Record<JobStatus, number>>;
  /** Every record, in no order (`GET /jobs/` sorts and pages them). */
  list(): Promise<JobRecord[]>;
}

const owesDelivery = (record: JobRecord) => record.webhook !== null && record.webhook.next_attempt_at !== null;

/**
 * A record larger than MEDIAFLOW_MAX_RECORD_BYTES: no store keeps it (docs/jobs.md). Every record is
 * held in memory by the embedded store and read whole at each look in Redis; a 60 MB answer kept as
 * it was made every read of it cost 60 MB more, for as long as the record was kept.
 */
export class RecordTooLargeError extends MediaflowError {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(
      'MF_ERR_TOO_LARGE',
      `The job's record would be ${bytes} bytes, more than the limit of ${maxBytes} bytes (MEDIAFLOW_MAX_RECORD_BYTES)`,
    );
  }
}

/** A record as a store keeps it, its JSON; a RecordTooLargeError past `maxBytes`. */
export function recordJson(record: JobRecord, maxBytes: number): string {
  const json = JSON.stringify(record);
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) throw new RecordTooLargeError(bytes, maxBytes);
  return json;
}

/** The idempotency index entry of a record, if it has a key. */
export const indexOf = (record: JobRecord): string | undefined =>
  record.idempotency ? idempotencyIndex(record.idempotency.key, record.owner) : undefined;

/** How long after a failed write (a full disk) the records it left unsaved are written again. */
const RETRY_WRITE_MS = 2000;

/** Tasks that run one after another for each key; a failed task does not stop the next. */
class Serial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    // The failure itself reaches this task's caller; the next task only waits for it to end.
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => this.tails.get(key) === tail && this.tails.delete(key));
    return result;
  }
}

export interface FileJobStoreOptions {
  /** Told of a record's write that failed (it is tried again, quietly): the store has no logger of its own. */
  onWriteError?: (error: unknown, id: string) => void;
  /** Largest record, bytes of JSON (MEDIAFLOW_MAX_RECORD_BYTES); none: no limit. */
  maxRecordBytes?: number;
  /** Told of a record file larger than `maxRecordBytes` found at open, which is left as it is and not loaded. */
  onOversize?: (file: string, bytes: number) => void;
}

/**
 * Records as one JSON file each under a folder, each written whole or not at all (writeWhole). All
 * records are also held in memory: reads never touch the disk, and the idempotency index is rebuilt
 * at open. A new record is in memory only once it is on disk; a change to one is in memory at once,
 * and on disk as soon as the disk takes it (see `save`).
 */
export class FileJobStore implements JobStore {
  private readonly records = new Map<string, JobRecord>();
  private readonly keys = new Map<string, string>();
  /** Writes of one record, in order: a later version never lands under an earlier one. */
  private readonly writes = new Serial();
  /** Creates with one idempotency key, one at a time: a second finds the first's record, or none if it failed. */
  private readonly creates = new Serial();
  /** Records whose last write failed, to be written again. */
  private readonly unsaved = new Set<string>();
  private retry: NodeJS.Timeout | undefined;

  private constructor(
    readonly dir: string,
    private readonly options: FileJobStoreOptions,
  ) {}

  private get maxBytes(): number {
    return this.options.maxRecordBytes ?? Infinity;
  }

  /**
   * Opens (creating) the folder and loads every record in it; temp files of a killed writer are removed.
   * A file larger than the record limit (written before there was one) is not read: holding such records
   * kept a server from starting.
   */
  static async open(dir: string, options: FileJobStoreOptions = {}): Promise<FileJobStore> {
    const store = new FileJobStore(dir, options);
    await mkdir(dir, { recursive: true });
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        if (isAbandonedTemp(name)) await rm(file, { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      try {
        const { size } = await stat(file);
        if (size > store.maxBytes) {
          options.onOversize?.(file, size);
          continue;
        }
        const record = JSON.parse(await readFile(file, 'utf8')) as JobRecord;
        store.records.set(record.id, record);
        const index = indexOf(record);
        if (index !== undefined) store.keys.set(index, record.id);
      } catch {
        // A file that is not a record (edited by hand, say) is left alone rather than stop the server.
      }
    }
    return store;
  }

  async create(record: JobRecord): Promise<JobRecord> {
    const key = indexOf(record);
    if (key === undefined) return this.insert(record);
    return this.creates.run(key, async () => {
      const holder = this.keys.get(key);
      return holder === undefined ? this.insert(record) : structuredClone(this.records.get(holder)!);
    });
  }

  /**
   * Stores a new record on disk, then in memory: a write that fails (a full disk) throws and leaves
   * neither the record nor its idempotency key, so the same request sent again makes a new job.
   */
  private async insert(record: JobRecord): Promise<JobRecord> {
    await this.write(record.id, record);
    this.records.set(record.id, structuredClone(record));
    const index = indexOf(record);
    if (index !== undefined) this.keys.set(index, record.id);
    return structuredClone(record);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const record = this.records.get(id);
    return record && structuredClone(record);
  }

  async byKey(index: string): Promise<JobRecord | undefined> {
    const id = this.keys.get(index);
    return id === undefined ? undefined : this.get(id);
  }

  async remove(id: string): Promise<void> {
    const record = this.records.get(id);
    if (!record) return;
    this.records.delete(id);
    const index = indexOf(record);
    if (index !== undefined) this.keys.delete(index);
    await this.save(id);
  }

  async update(id: string, change: (record: JobRecord) => void): Promise<JobRecord | undefined> {
    const current = this.records.get(id);
    if (!current) return undefined;
    const next = structuredClone(current);
    change(next);
    // Refused before it replaces the record in memory: the change fails, the record stays as it was.
    recordJson(next, this.maxBytes);
    this.records.set(id, next);
    await this.save(id);
    return structuredClone(next);
  }

  async unfinished(): Promise<JobRecord[]> {
    return [...this.records.values()]
      .filter((r) => !isTerminal(r.status) || owesDelivery(r))
      .map((r) => structuredClone(r));
  }

  async expire(cutoffMs: number): Promise<JobRecord[]> {
    const expired = [...this.records.values()].filter(
      (r) => isTerminal(r.status) && !owesDelivery(r) && r.finished_at !== null && Date.parse(r.finished_at) < cutoffMs,
    );
    for (const record of expired) await this.remove(record.id);
    return expired;
  }

  async counts(): Promise<Record<JobStatus, number>> {
    const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
    for (const record of this.records.values()) counts[record.status]++;
    return counts;
  }

  async list(): Promise<JobRecord[]> {
    return [...this.records.values()].map((record) => structuredClone(record));
  }

  /**
   * Writes a changed (or removed) record's current version. A write that fails (a full disk) does
   * not fail the change: failing it would leave a job that ended neither told (waiters, SSE,
   * webhook) nor recorded. This process carries on from memory and writes the record again every
   * few seconds until the disk takes it. Until then the disk holds the previous version, which is
   * what a restart would find: a job still `running` there runs again, so none is lost.
   */
  private async save(id: string): Promise<void> {
    try {
      await this.write(id);
      this.unsaved.delete(id);
    } catch (error) {
      // Once per record until it lands: a disk full for an hour is not a log line every 2 s.
      if (!this.unsaved.has(id)) this.options.onWriteError?.(error, id);
      this.unsaved.add(id);
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        for (const unsaved of this.unsaved) void this.save(unsaved);
      }, RETRY_WRITE_MS).unref();
    }
  }

  /**
   * Writes `record`, or else the record's version in memory when the write's turn comes (deleting
   * its file when it is gone), after any earlier write of it.
   */
  private write(id: string, record?: JobRecord): Promise<void> {
    const file = path.join(this.dir, `${id}.json`);
    return this.writes.run(id, async () => {
      const current = record ?? this.records.get(id);
      if (!current) return rm(file, { force: true });
      await writeWhole(file, recordJson(current, this.maxBytes));
    });
  }
}
