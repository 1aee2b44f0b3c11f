import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { id3Tag } from '../helpers/id3.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { submitJob, waitForJob } from '../helpers/jobs.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import type { JobRecord } from '../../src/jobs/job.js';
import { FileJobStore, RecordTooLargeError, type JobStore } from '../../src/jobs/job-store.js';
import { RedisJobStore } from '../../src/jobs/redis-job-store.js';

/** A queued operation's record whose `fields` hold `padding` characters. */
const recordOf = (padding = 0): JobRecord => ({
  id: randomUUID(),
  output_id: randomUUID(),
  kind: 'operation',
  name: 'media-metadata',
  fields: { media_url: 'https://example.com/a.mp3', note: 'x'.repeat(padding) },
  base_url: 'http://127.0.0.1',
  own_bases: [],
  mode: 'async',
  metadata: null,
  idempotency: null,
  status: 'queued',
  stage: 'queued',
  progress: 0,
  attempts: 0,
  created_at: new Date().toISOString(),
  started_at: null,
  finished_at: null,
  result: null,
  error: null,
  webhook: null,
});

const LIMIT = 64 * 1024;

/** What every store must do at the limit: refuse a record past it, whole, and keep the one it had. */
async function refusesPastTheLimit(store: JobStore): Promise<void> {
  const big = recordOf(LIMIT);
  await assert.rejects(store.create(big), (error: unknown) => {
    assert.ok(error instanceof RecordTooLargeError);
    assert.equal(error.status, 413);
    assert.match(error.message, /more than the limit of 65536 bytes \(MEDIAFLOW_MAX_RECORD_BYTES\)$/);
    return true;
  });
  assert.equal(await store.get(big.id), undefined, 'nothing kept of a record refused at creation');
  const small = await store.create(recordOf(100));
  await assert.rejects(
    store.update(small.id, (r) => void (r.result = { message: 'done', files: [], answers: { x: 'y'.repeat(LIMIT) } })),
    RecordTooLargeError,
  );
  assert.deepEqual(await store.get(small.id), small, 'the record as it was');
  // Within the limit, a change is kept.
  assert.equal((await store.update(small.id, (r) => void (r.stage = 'running')))?.stage, 'running');
}

describe('the size limit of job records (issue 33)', () => {
  let dir: string;
  let redis: TestRedis;
  let files: FileServer;
  let server: TestServer;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-records-'));
    redis = await startRedis();
    // An MP3 whose tags fill their 64 KiB: with its fields, its record passes a 64 KiB limit.
    const bare = path.join(dir, 'bare.mp3');
    await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', '-write_id3v2', '0', bare]);
    const notes = Array.from({ length: 5 }, (_, i): [string, string] => [`TXXX:notes_${i}`, 'n'.repeat(15_000)]);
    await writeFile(path.join(dir, 'tagged.mp3'), Buffer.concat([id3Tag(notes), await readFile(bare)]));
    files = await startFileServer({ '/tagged.mp3': serveFile(path.join(dir, 'tagged.mp3'), 'audio/mpeg') });
    server = await startMediaflow({ MEDIAFLOW_MAX_RECORD_BYTES: String(LIMIT) });
  });
  after(async () => {
    await server?.close();
    await files?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the embedded store refuses a record past the limit, in memory and on disk', async () => {
    const folder = path.join(dir, 'jobs');
    const store = await FileJobStore.open(folder, { maxRecordBytes: LIMIT });
    await refusesPastTheLimit(store);
    // One record on disk, the small one, as it was last changed.
    const [name, ...rest] = await readdir(folder);
    assert.deepEqual(rest, []);
    assert.equal((JSON.parse(await readFile(path.join(folder, name!), 'utf8')) as JobRecord).stage, 'running');
  });

  it('the Redis store refuses a record past the limit, writing nothing', async () => {
    const client = new Redis(redis.url);
    try {
      await refusesPastTheLimit(new RedisJobStore(client, 60_000, LIMIT));
    } finally {
      client.disconnect();
    }
  });

  it('the embedded store leaves a record file past the limit unread at start, and says so', async () => {
    const folder = path.join(dir, 'reopened');
    const kept = await (await FileJobStore.open(folder)).create(recordOf(100));
    const huge = recordOf(LIMIT);
    await writeFile(path.join(folder, `${huge.id}.json`), JSON.stringify(huge));
    const told: Array<[string, number]> = [];
    const store = await FileJobStore.open(folder, {
      maxRecordBytes: LIMIT,
      onOversize: (file, bytes) => told.push([path.basename(file), bytes]),
    });
    assert.deepEqual(await store.get(kept.id), kept);
    assert.equal(await store.get(huge.id), undefined);
    assert.deepEqual(told, [[`${huge.id}.json`, Buffer.byteLength(JSON.stringify(huge))]]);
    // Left where it was, for its owner to delete or to load with a higher limit.
    assert.ok((await readdir(folder)).includes(`${huge.id}.json`));
  });

  it('a job whose result would pass the limit fails with a 413 that names it, synchronous or not', async () => {
    const res = await server.post('/media-metadata/', { media_url: files.url('/tagged.mp3') });
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.equal(res.body.code, 'MF_ERR_TOO_LARGE');
    assert.match(res.body.error!, /^The job's record would be \d+ bytes, more than the limit of 65536 bytes/);
    const id = await submitJob(
      server.base,
      '/media-metadata/',
      { media_url: files.url('/tagged.mp3') },
      {
        Prefer: 'respond-async',
      },
    );
    const job = await waitForJob(server.base, id);
    assert.equal(job.status, 'failed');
    assert.equal(job.result, null);
    assert.equal(job.error?.status, 413);
    assert.match(job.error?.error ?? '', /MEDIAFLOW_MAX_RECORD_BYTES/);
    assert.deepEqual(await server.workLeftovers(), []);
    // The records kept are all within it.
    for (const name of await readdir(path.join(server.dataDir, 'jobs')))
      assert.ok((await readFile(path.join(server.dataDir, 'jobs', name))).length <= LIMIT, name);
  });
});
