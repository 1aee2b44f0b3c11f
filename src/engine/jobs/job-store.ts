import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TEMP_PREFIX } from '../storage.js';
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
}

const owesDelivery = (record: JobRecord) => record.webhook !== null && record.webhook.next_attempt_at !== null;

/** The idempotency index entry of a record, if it has a key. */
export const indexOf = (record: JobRecord): string | undefined =>
  record.idempotency ? idempotencyIndex(record.idempotency.key, record.owner) : undefined;

/**
 * Records as one JSON file each under a folder, written to a temp name and renamed, so a kill -9
 * at any moment leaves each file whole (the old or the new version). All records are also held in
 * memory: reads never touch the disk, and the idempotency index is rebuilt at open.
 */
export class FileJobStore implements JobStore {
  private readonly records = new Map<string, JobRecord>();
  private readonly keys = new Map<string, string>();
  /** Writes of one record, in order: a later version never lands under an earlier one. */
  private readonly writes = new Map<string, Promise<void>>();

  private constructor(readonly dir: string) {}

  /** Opens (creating) the folder and loads every record in it; temp files of a killed writer are removed. */
  static async open(dir: string): Promise<FileJobStore> {
    const store = new FileJobStore(dir);
    await mkdir(dir, { recursive: true });
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        await rm(file, { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      try {
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
    const holder = key === undefined ? undefined : this.keys.get(key);
    if (holder !== undefined) return structuredClone(this.records.get(holder)!);
    this.records.set(record.id, structuredClone(record));
    if (key !== undefined) this.keys.set(key, record.id);
    await this.write(record.id);
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
    await this.write(id);
  }

  async update(id: string, change: (record: JobRecord) => void): Promise<JobRecord | undefined> {
    const current = this.records.get(id);
    if (!current) return undefined;
    const next = structuredClone(current);
    change(next);
    this.records.set(id, next);
    await this.write(id);
    return structuredClone(next);
  }

  async unfinished(): Promise<JobRecord[]> {
    return [...this.records.values()].filter((r) => !isTerminal(r.status) || owesDelivery(r)).map((r) => structuredClone(r));
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

  /** Writes the record's current version (or deletes its file when it is gone), after any earlier write of it. */
  private write(id: string): Promise<void> {
    const file = path.join(this.dir, `${id}.json`);
    const previous = this.writes.get(id) ?? Promise.resolve();
    const next = previous.then(async () => {
      const record = this.records.get(id);
      if (!record) return rm(file, { force: true });
      const temp = path.join(this.dir, `${TEMP_PREFIX}${randomUUID()}`);
      await writeFile(temp, JSON.stringify(record));
      await rename(temp, file);
    });
    // The chain continues past a failed write; the failure itself reaches this write's caller.
    const settled = next.catch(() => undefined);
    this.writes.set(id, settled);
    void settled.then(() => {
      if (this.writes.get(id) === settled) this.writes.delete(id);
    });
    return next;
  }
}
