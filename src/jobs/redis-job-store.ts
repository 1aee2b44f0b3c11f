import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { isTerminal, JOB_STATUSES, type JobRecord, type JobStatus } from './job.js';
import { indexOf, recordJson, type JobStore } from './job-store.js';
import { redisCall, REDIS_PREFIX } from './redis.js';

/**
 * Writes a record only if it is still the version that was read (compare and set), keeps the
 * set of open records, and gives finished ones their time to live. One script, so two processes
 * updating the same job never lose each other's change.
 */
const UPDATE = `
local current = redis.call('GET', KEYS[1])
if current ~= ARGV[1] then return 0 end
if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if ARGV[4] == '1' then redis.call('SADD', KEYS[2], ARGV[5]) else redis.call('SREM', KEYS[2], ARGV[5]) end
if KEYS[3] ~= '' then
  if ARGV[3] == '0' then redis.call('PERSIST', KEYS[3]) else redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
end
return 1`;

const owesDelivery = (record: JobRecord) => record.webhook !== null && record.webhook.next_attempt_at !== null;

/**
 * Job records in Redis, shared by every API and worker process: one JSON string per job, an
 * index from idempotency key to job, and the set of records not yet finished. Finished records
 * expire by themselves after MEDIAFLOW_RETENTION (their outputs are swept by age), so the store
 * needs no sweeper.
 */
export class RedisJobStore implements JobStore {
  constructor(
    private readonly redis: Redis,
    private readonly retentionMs: number,
    /** Largest record, bytes of JSON (MEDIAFLOW_MAX_RECORD_BYTES): a larger one is refused, never written. */
    private readonly maxRecordBytes = Infinity,
  ) {}

  private key = (id: string) => `${REDIS_PREFIX}:job:${id}`;
  private keyOf = (idempotencyKey: string) =>
    `${REDIS_PREFIX}:idempotency:${createHash('sha256').update(idempotencyKey).digest('hex')}`;
  private readonly open = `${REDIS_PREFIX}:jobs:open`;

  async create(record: JobRecord): Promise<JobRecord> {
    const json = recordJson(record, this.maxRecordBytes);
    return redisCall(async () => {
      const entry = indexOf(record);
      if (entry !== undefined) {
        const index = this.keyOf(entry);
        if ((await this.redis.set(index, record.id, 'NX')) !== 'OK') {
          const holder = await this.byKey(entry);
          if (holder) return holder;
          // The index outlived its record: it is this request's now.
          await this.redis.set(index, record.id);
        }
      }
      await this.redis.multi().set(this.key(record.id), json).sadd(this.open, record.id).exec();
      return record;
    });
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const text = await redisCall(() => this.redis.get(this.key(id)));
    return text === null ? undefined : (JSON.parse(text) as JobRecord);
  }

  async byKey(index: string): Promise<JobRecord | undefined> {
    const id = await redisCall(() => this.redis.get(this.keyOf(index)));
    return id === null ? undefined : this.get(id);
  }

  async update(id: string, change: (record: JobRecord) => void): Promise<JobRecord | undefined> {
    return redisCall(async () => {
      for (;;) {
        const text = await this.redis.get(this.key(id));
        if (text === null) return undefined;
        const record = JSON.parse(text) as JobRecord;
        change(record);
        const json = recordJson(record, this.maxRecordBytes);
        const done = isTerminal(record.status) && !owesDelivery(record);
        const ttl = done && this.retentionMs > 0 ? String(this.retentionMs) : '0';
        const entry = indexOf(record);
        const index = entry === undefined ? '' : this.keyOf(entry);
        const written = await this.redis.eval(
          UPDATE,
          3,
          this.key(id),
          this.open,
          index,
          text,
          json,
          ttl,
          done ? '0' : '1',
          id,
        );
        if (written === 1) return record;
        // Another process changed the record meanwhile: apply the change to its version.
      }
    });
  }

  async remove(id: string): Promise<void> {
    const record = await this.get(id);
    await redisCall(async () => {
      const multi = this.redis.multi().del(this.key(id)).srem(this.open, id);
      const entry = record && indexOf(record);
      if (entry) multi.del(this.keyOf(entry));
      await multi.exec();
    });
  }

  async unfinished(): Promise<JobRecord[]> {
    const ids = await redisCall(() => this.redis.smembers(this.open));
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((record): record is JobRecord => record !== undefined);
  }

  /** Finished records expire by their time to live; nothing is left for a sweep. */
  async expire(): Promise<JobRecord[]> {
    return [];
  }

  async counts(): Promise<Record<JobStatus, number>> {
    const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
    for (const record of await this.list()) counts[record.status]++;
    return counts;
  }

  /** Every record: a scan of the job keys (finished ones expire by themselves, so they stay a day's worth). */
  async list(): Promise<JobRecord[]> {
    const records: JobRecord[] = [];
    await redisCall(async () => {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}:job:*`, 'COUNT', 500);
        cursor = next;
        if (keys.length === 0) continue;
        for (const text of await this.redis.mget(...keys)) if (text) records.push(JSON.parse(text) as JobRecord);
      } while (cursor !== '0');
    });
    return records;
  }
}
