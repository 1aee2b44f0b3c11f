/**
 * A real full disk: `mediaflow serve` (built dist/) runs in a private mount namespace with its data
 * directory, or its job records alone, on a small tmpfs (test/helpers/on-tmpfs.sh). The test fills
 * that tmpfs with a filler file through /proc/<pid>/root (the child's view of the mounts) until
 * writes fail with ENOSPC, then frees it. Cases: the record write at submission, ffmpeg writing its
 * output, the record write at a job's end, and /health below MEDIAFLOW_MIN_FREE_DISK.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { eventually, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { getJob, submitJob, waitForJob } from './helpers/jobs.js';

const SCRIPT = path.join(import.meta.dirname, 'helpers/on-tmpfs.sh');
/** As root, a new mount namespace; otherwise inside a user namespace of our own. */
const UNSHARE = process.getuid?.() === 0 ? ['-m'] : ['-r', '-m'];
const FILLER = 'filler';
/** 22 MB of audio: two fit on a 64 MB disk above an 8 MiB minimum, three do not. */
const WAV = 'tone-125s-44k-stereo.wav';
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

const CRLF = Buffer.from('\r\n');

/** One upload to /files/ on a socket of its own, its body sent when told: the server's answer, and whether it came. */
interface Upload {
  /** Sends the body up to `bytes` of the file, or all of it. */
  send: (bytes?: number) => void;
  answered: () => boolean;
  answer: Promise<{ status: number; body: Record<string, unknown> }>;
}

/** A WAV file as a multipart upload, with its Content-Length, or chunked (no length known in advance). */
async function upload(base: string, data: Buffer, encoding: 'length' | 'chunked'): Promise<Upload> {
  const boundary = `reserve-${randomUUID()}`;
  const open = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="a"; filename="tone.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
  );
  const body = Buffer.concat([open, data, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const length = encoding === 'length' ? `Content-Length: ${body.length}` : 'Transfer-Encoding: chunked';
  const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(base).port) });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /files/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `${length}\r\nConnection: close\r\n\r\n`,
  );
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const answer = new Promise<{ status: number; body: Record<string, unknown> }>((resolve) =>
    socket.once('close', () =>
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4) || '{}') as Record<string, unknown>,
      }),
    ),
  );
  socket.on('error', () => {});
  let sent = 0;
  return {
    send: (bytes = data.length) => {
      const end = Math.min(body.length, bytes >= data.length ? body.length : open.length + bytes);
      const piece = body.subarray(sent, end);
      sent = end;
      if (encoding === 'length') socket.write(piece);
      else if (piece.length > 0)
        socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, CRLF]));
      if (encoding === 'chunked' && sent === body.length) socket.write('0\r\n\r\n');
    },
    answered: () => /^HTTP\/1\.1 \d{3}/.test(text),
    answer,
  };
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
    await fixtures('clip-3s-640x360-25fps.mp4', 'landscape-1920x1080.jpg', WAV);
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

  const reserving =
    'concurrent uploads reserve their space as they stream in: those that fit are stored, the others refused at once';
  it(reserving, { timeout: 180_000 } as never, async () => {
    const dir = await dataDir();
    const min = 8 * 1024 * 1024;
    const proc = await serve(dir, [['64m', dir]], { MEDIAFLOW_MIN_FREE_DISK: String(min), MEDIAFLOW_CACHE_BYTES: '0' });
    const work = path.join(dir, 'work');
    const wav = await readFile(await fixture(WAV));
    const freeBytes = async () => {
      const { bavail, bsize } = await statfs(inside(proc, dir));
      return bavail * bsize;
    };

    // Four uploads begin at once: each is refused, or has its first megabyte stored, before any sends the rest.
    const four = await Promise.all([1, 2, 3, 4].map(() => upload(proc.base, wav, 'length')));
    for (const each of four) each.send(1024 * 1024);
    const begun = await eventually(
      async () => (await entries(proc, work)).length + four.filter((each) => each.answered()).length === 4,
      20_000,
      20,
    );
    assert.ok(begun, 'all four under way');
    const refusedAtOnce = four.filter((each) => each.answered()).length;
    let lowest = await freeBytes();
    const watching = setInterval(() => void freeBytes().then((bytes) => (lowest = Math.min(lowest, bytes))), 10);
    for (const each of four) each.send();
    const answers = await Promise.all(four.map((each) => each.answer));
    clearInterval(watching);

    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [200, 200, 507, 507], JSON.stringify(answers.map((answer) => answer.body)));
    // The two that did not fit were refused before a byte of them was stored, not half way.
    assert.equal(refusedAtOnce, 2);
    for (const refused of answers.filter((answer) => answer.status === 507)) {
      assertInsufficientStorage(
        refused,
        /^The server is out of disk space \(an upload needs \d+ more bytes, \d+ are spare/,
      );
    }
    // Other clients were never starved: the disk stayed above the minimum throughout, and a job runs.
    assert.ok(lowest >= min, `the disk fell to ${lowest} bytes free`);
    assert.deepEqual(await entries(proc, work), [], 'no upload left in the work folder');
    assert.equal((await entries(proc, path.join(dir, 'uploads'))).length, 2);
    assert.equal((await fetch(`${proc.base}/health`)).status, 200);
    const job = await post(proc.base, '/convert-video/', {
      video_url: files.url('/f/clip-3s-640x360-25fps.mp4'),
      format: 'avi',
      quality: 'fast',
    });
    assert.equal(job.status, 200, JSON.stringify(job.body));

    // A body of unknown length reserves as it arrives: a small one fits in what is left; a large
    // one is refused once it outgrows the space, and nothing of it is kept.
    const clip = await readFile(await fixture('clip-3s-640x360-25fps.mp4'));
    const small = await upload(proc.base, clip, 'chunked');
    small.send();
    const stored = await small.answer;
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    const large = await upload(proc.base, wav, 'chunked');
    large.send();
    assertInsufficientStorage(await large.answer, /an upload needs \d+ more bytes/);
    assert.deepEqual(await entries(proc, work), []);
    assert.equal((await entries(proc, path.join(dir, 'uploads'))).length, 4, 'three uploads and the job output');
  });
});
