/**
 * A real full disk: `mediaflow serve` (built dist/) runs in a private mount namespace with its data
 * directory, or its job records alone, on a small tmpfs (test/helpers/on-tmpfs.sh). The test fills
 * that tmpfs with a filler file through /proc/<pid>/root (the child's view of the mounts) until
 * writes fail with ENOSPC, then frees it. Cases: the record write at submission, ffmpeg writing its
 * output, the record write at a job's end, and /health below MEDIAFLOW_MIN_FREE_DISK.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { eventually, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { getJob, submitJob, waitForJob } from './helpers/jobs.js';

const SCRIPT = path.join(import.meta.dirname, 'helpers/on-tmpfs.sh');
/** As root, a new mount namespace; otherwise inside a user namespace of our own. */
const UNSHARE = process.getuid?.() === 0 ? ['-m'] : ['-r', '-m'];
const FILLER = 'filler';
/** No refusal ahead of the writes: these cases are about the writes themselves failing. */
const NO_GUARD = { MEDIAFLOW_MIN_FREE_DISK: '0', MEDIAFLOW_CACHE_BYTES: '0' };

/** Why a tmpfs in a private mount namespace cannot be had here, or undefined when it can. */
function whyNoTmpfs(): string | undefined {
  const probe = path.join(os.tmpdir(), `mediaflow-tmpfs-probe-${process.pid}`);
  try {
    execFileSync('unshare', [...UNSHARE, 'sh', SCRIPT, '64k', probe, '--', 'true'], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    const reason = String((error as { stderr?: Buffer }).stderr ?? error).trim();
    return (
      `\`unshare ${UNSHARE.join(' ')}\` with a tmpfs mount failed (${reason}): run as root or with user ` + `namespaces`
    );
  } finally {
    execFileSync('rm', ['-rf', probe]);
  }
}

const unavailable = whyNoTmpfs();
if (unavailable) console.warn(`skipping the full-disk cases: ${unavailable}`);

/** A serve process whose `mounts` (size, folder) are tmpfs in its own mount namespace. */
function serveOnTmpfs(dataDir: string, mounts: Array<[string, string]>, env: Record<string, string>) {
  return startServeProcess(dataDir, env, ['unshare', ...UNSHARE, 'sh', SCRIPT, ...mounts.flat(), '--']);
}

/** A folder as the serve process sees it (its tmpfs mounts included). */
const inside = (proc: ServeProcess, dir: string) => path.join(`/proc/${proc.child.pid}/root`, dir);

/** Fills the file system of `dir` (as the process sees it) until `leave` bytes are free; returns the filler. */
async function fill(proc: ServeProcess, dir: string, leave = 0): Promise<string> {
  const filler = path.join(inside(proc, dir), FILLER);
  const { bavail, bsize } = await statfs(inside(proc, dir));
  await writeFile(filler, Buffer.alloc(Math.max(0, bavail * bsize - leave)));
  const left = await statfs(inside(proc, dir));
  assert.ok(left.bavail * left.bsize <= leave, `filled to ${left.bavail * left.bsize} bytes free`);
  return filler;
}

/**
 * Keeps a full file system full: a write in flight when it filled up may still free a page (its
 * rename drops the record's old version), which the filler then takes. Returns the stop function.
 */
function keepFull(filler: string): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await appendFile(filler, Buffer.alloc(4096)).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** Names in a folder as the process sees it, the filler left out. */
const entries = async (proc: ServeProcess, dir: string) =>
  (await readdir(inside(proc, dir)).catch(() => [] as string[])).filter((name) => name !== FILLER);

/** The stored job records of a process (status by id), and whatever else is in the folder. */
async function stored(
  proc: ServeProcess,
  jobsDir: string,
): Promise<{ records: Map<string, string>; others: string[] }> {
  const records = new Map<string, string>();
  const others: string[] = [];
  for (const name of await entries(proc, jobsDir)) {
    if (!name.endsWith('.json') || name.startsWith('.')) {
      others.push(name);
      continue;
    }
    const text = await readFile(path.join(inside(proc, jobsDir), name), 'utf8');
    const record = JSON.parse(text) as { id: string; status: string };
    records.set(record.id, record.status);
  }
  return { records, others };
}

async function post(base: string, route: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    body: form,
    headers,
    signal: AbortSignal.timeout(120_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A 507 that says why and shows no server path. */
function assertInsufficientStorage(answer: { status: number; body: Record<string, unknown> }, reason: RegExp): void {
  assert.equal(answer.status, 507, JSON.stringify(answer.body));
  assert.equal(answer.body.code, 'MF_ERR_STORAGE');
  assert.match(String(answer.body.error), reason);
  assert.doesNotMatch(String(answer.body.error), /\/(tmp|proc|work|data)\b|\.json/);
}

describe('A full disk', { skip: unavailable !== undefined } as never, () => {
  let files: FileServer;
  const dirs: string[] = [];
  const procs: ServeProcess[] = [];
  const dataDir = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-disk-'));
    dirs.push(dir);
    return dir;
  };
  const serve = async (...args: Parameters<typeof serveOnTmpfs>) => {
    const proc = await serveOnTmpfs(...args);
    procs.push(proc);
    return proc;
  };

  before(async () => {
    await fixtures('clip-3s-640x360-25fps.mp4', 'landscape-1920x1080.jpg');
    files = await startFileServer();
  }, 60_000);

  after(async () => {
    for (const proc of procs) {
      proc.child.kill('SIGKILL');
      await proc.child.catch(() => undefined);
    }
    await files?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const atSubmission =
    'at submission: a 507, no record and no key kept; the same request and key later make a job that runs';
  it(atSubmission, { timeout: 120_000 } as never, async () => {
    const dir = await dataDir();
    const proc = await serve(dir, [['16m', dir]], NO_GUARD);
    const jobsDir = path.join(dir, 'jobs');
    const filler = await fill(proc, dir);
    const fields = { video_url: files.url('/f/clip-3s-640x360-25fps.mp4'), format: 'avi', quality: 'fast' };
    const headers = { prefer: 'respond-async', 'idempotency-key': 'disk-full-1' };

    const refused = await post(proc.base, '/convert-video/', fields, headers);
    assertInsufficientStorage(refused, /out of disk space \(no space left on device\)/);
    assert.deepEqual(await stored(proc, jobsDir), { records: new Map(), others: [] }, 'no record and no temp file');
    // The server itself is still up.
    assert.equal((await fetch(`${proc.base}/health`)).status, 200);

    await rm(filler);
    // Sent at once, the same request still makes one job.
    const ids = await Promise.all([1, 2, 3, 4].map(() => submitJob(proc.base, '/convert-video/', fields, headers)));
    const id = ids[0]!;
    assert.deepEqual(new Set(ids), new Set([id]));
    const job = await waitForJob(proc.base, id, undefined, { ms: 60_000 });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const output = await fetch(String((job.result as Record<string, unknown>).output_file));
    assert.equal(output.status, 200);
    assert.equal(
      Buffer.from(await output.arrayBuffer())
        .subarray(8, 12)
        .toString('latin1'),
      'AVI ',
    );
    // One record: the refused request left none to collide with.
    assert.deepEqual([...(await stored(proc, jobsDir)).records], [[id, 'succeeded']]);
  });

  const atOutput = 'at output: ffmpeg out of space is a 507, with no partial file in uploads/ or work/';
  it(atOutput, { timeout: 120_000 } as never, async () => {
    const dir = await dataDir();
    const proc = await serve(dir, [['16m', dir]], NO_GUARD);
    // Room for the 712 KB input and the job's record, not for the ~600 KB output besides.
    const filler = await fill(proc, dir, 712_323 + 160 * 1024);
    const fields = { video_url: files.url('/f/clip-3s-640x360-25fps.mp4'), format: 'avi', quality: 'fast' };

    const refused = await post(proc.base, '/convert-video/', fields);
    assertInsufficientStorage(refused, /out of disk space \(no space left on device\)/);
    assert.deepEqual(await entries(proc, path.join(dir, 'uploads')), [], 'nothing published');
    assert.deepEqual(await entries(proc, path.join(dir, 'work')), [], 'no workspace left');
    // The job's record says the same, and is on disk.
    const { records, others } = await stored(proc, path.join(dir, 'jobs'));
    assert.deepEqual([...records.values()], ['failed']);
    assert.deepEqual(others, []);
    const job = await getJob(proc.base, [...records.keys()][0]!);
    assert.equal(job.error?.status, 507);

    await rm(filler);
    assert.equal((await post(proc.base, '/convert-video/', fields)).status, 200);
  });

  const atEnd =
    "at a job's end: the job still ends (answered, told) and its record reaches the disk once there is space";
  it(atEnd, { timeout: 180_000 } as never, async () => {
    const dir = await dataDir();
    const jobsDir = path.join(dir, 'jobs');
    await mkdir(jobsDir);
    // The records alone on a tmpfs: ffmpeg and publishing still have room.
    const proc = await serve(dir, [['1m', jobsDir]], NO_GUARD);
    // A slideshow ffmpeg takes a few seconds over (1200 frames of 1920x1080).
    const fields = { image_urls: files.url('/f/landscape-1920x1080.jpg'), seconds_per_image: '24', fps: '50' };
    const answer = post(proc.base, '/images-to-video/', fields);

    // ffmpeg runs once the record says `process`; the disk fills before it ends.
    let id = '';
    const processing = await eventually(
      async () => {
        // Records only: a temp file being written (then renamed over its record) may still be empty.
        for (const name of (await entries(proc, jobsDir)).filter((entry) => entry.endsWith('.json'))) {
          const text = await readFile(path.join(inside(proc, jobsDir), name), 'utf8').catch(() => '{}');
          const record = JSON.parse(text) as { id?: string; stage?: string };
          if (record.stage === 'process') id = record.id!;
        }
        return id !== '';
      },
      60_000,
      20,
    );
    assert.ok(processing, 'the job reached ffmpeg');
    const filler = await fill(proc, jobsDir);
    const stopFilling = keepFull(filler);

    const done = await answer.finally(stopFilling);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.match(String(done.body.output_file), /\.mp4$/);
    assert.equal((await getJob(proc.base, id)).status, 'succeeded');
    // The disk still holds the version before the end: a restart now would run the job again, not lose it.
    assert.equal((await stored(proc, jobsDir)).records.get(id), 'running');

    await rm(filler);
    const written = await eventually(async () => (await stored(proc, jobsDir)).records.get(id) === 'succeeded', 15_000);
    assert.ok(written, 'the record was written once there was space');
    assert.deepEqual((await stored(proc, jobsDir)).others, [], 'no temp file');
  });

  it('/health reports low disk: 503 below MEDIAFLOW_MIN_FREE_DISK, and new jobs get a 507', async () => {
    const dir = await dataDir();
    const min = 4 * 1024 * 1024;
    const proc = await serve(dir, [['16m', dir]], { MEDIAFLOW_MIN_FREE_DISK: String(min) });
    type Health = { status: string; disk: { free_bytes: number; min_free_bytes: number; ok: boolean } };
    const healthy = (await (await fetch(`${proc.base}/health`)).json()) as Health;
    assert.equal(healthy.disk.ok, true);
    assert.equal(healthy.disk.min_free_bytes, min);
    const { free_bytes: free } = healthy.disk;
    assert.ok(free > min && free <= 16 * 1024 * 1024, String(free));

    const filler = await fill(proc, dir, 1024 * 1024);
    const low = await fetch(`${proc.base}/health`);
    assert.equal(low.status, 503);
    assert.equal(low.headers.get('retry-after'), '5');
    const body = (await low.json()) as Health;
    assert.equal(body.status, 'unavailable');
    assert.equal(body.disk.ok, false);
    assert.ok(body.disk.free_bytes <= 1024 * 1024);
    const fields = { video_url: files.url('/f/clip-3s-640x360-25fps.mp4') };
    const refused = await post(proc.base, '/convert-video/', fields, { prefer: 'respond-async' });
    assertInsufficientStorage(refused, /below MEDIAFLOW_MIN_FREE_DISK/);
    assert.deepEqual((await stored(proc, path.join(dir, 'jobs'))).records.size, 0);

    await rm(filler);
    assert.equal((await fetch(`${proc.base}/health`)).status, 200);
  });
});
