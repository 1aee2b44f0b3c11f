import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { eventually, ffmpegChildren, freePort, startServeProcess } from './helpers/serve-process.js';
import { createReadStream } from 'node:fs';

/** Gates that hold a fixture response until the test opens them. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const health = async (base: string) =>
  (await (await fetch(`${base}/health`)).json()) as { queue: { waiting: number; running: number } };

/** A slideshow that takes ffmpeg a long time: one picture shown for an hour at 60 fps. */
const longJob = (files: FileServer) => ({
  image_urls: files.url('/f/small-300x200.png'),
  seconds_per_image: '3600',
  fps: '60',
});

const form = (fields: Record<string, string>) => {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return body;
};

describe('queue, cancellation and time limits', () => {
  let files: FileServer;
  let server: TestServer;
  const gates = new Map<string, ReturnType<typeof gate>>();

  before(async () => {
    await fixtures('small-300x200.png', 'white-800x600.png');
    files = await startFileServer({
      // /held/<key>: the white PNG, sent once the test opens gate <key>.
      '/held/a': async (_req, res) => serveHeld('a', res),
      '/held/b': async (_req, res) => serveHeld('b', res),
      '/held/c': async (_req, res) => serveHeld('c', res),
    });
    async function serveHeld(key: string, res: import('node:http').ServerResponse) {
      await gates.get(key)!.opened;
      res.writeHead(200, { 'content-type': 'image/png' });
      createReadStream(await fixture('white-800x600.png')).pipe(res);
    }
    server = await startMediaflow({ MEDIAFLOW_CONCURRENCY: '1', MEDIAFLOW_MAX_QUEUE: '1' });
  });
  after(async () => {
    for (const g of gates.values()) g.open();
    await server?.close();
    await files?.close();
  });

  it('answers 503 with Retry-After at once when the queue is full, and runs the admitted jobs', async () => {
    for (const key of ['a', 'b']) gates.set(key, gate());
    const resize = (key: string) =>
      server.post('/resize_image/', { image_url: files.url(`/held/${key}`), width: '32', height: '32' });
    const first = resize('a');
    assert.ok(await eventually(async () => (await health(server.base)).queue.running === 1));
    const second = resize('b');
    assert.ok(await eventually(async () => (await health(server.base)).queue.waiting === 1));
    const third = await server.post('/resize_image/', {
      image_url: files.url('/f/small-300x200.png'),
      width: '32',
      height: '32',
    });
    assert.equal(third.status, 503);
    assert.equal(third.body.error, 'Too many jobs are waiting (1); retry later');
    assert.equal(third.headers.get('retry-after'), '5');
    gates.get('a')!.open();
    gates.get('b')!.open();
    assert.equal((await first).status, 200);
    assert.equal((await second).status, 200);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('takes a waiting job off the queue when its client disconnects; its inputs are never fetched', async () => {
    gates.set('c', gate());
    const holder = server.post('/resize_image/', { image_url: files.url('/held/c'), width: '32', height: '32' });
    assert.ok(await eventually(async () => (await health(server.base)).queue.running === 1));
    const controller = new AbortController();
    const waiting = fetch(`${server.base}/resize_image/`, {
      method: 'POST',
      body: form({ image_url: files.url('/f/white-800x600.png?never'), width: '8', height: '8' }),
      signal: controller.signal,
    }).catch((error: Error) => error);
    assert.ok(await eventually(async () => (await health(server.base)).queue.waiting === 1));
    const fetchedBefore = files.hits.get('/f/white-800x600.png') ?? 0;
    controller.abort();
    assert.ok((await waiting) instanceof Error);
    assert.ok(await eventually(async () => (await health(server.base)).queue.waiting === 0), 'the job left the queue');
    gates.get('c')!.open();
    assert.equal((await holder).status, 200);
    assert.equal(files.hits.get('/f/white-800x600.png') ?? 0, fetchedBefore, 'the cancelled job fetched nothing');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('kills ffmpeg when the client disconnects while it runs, leaving no process and no files', async () => {
    const controller = new AbortController();
    const request = fetch(`${server.base}/images-to-video/`, {
      method: 'POST',
      body: form(longJob(files)),
      signal: controller.signal,
    }).catch((e: Error) => e);
    assert.ok(await eventually(async () => (await ffmpegChildren(process.pid)).length === 1, 15_000), 'ffmpeg started');
    controller.abort();
    assert.ok((await request) instanceof Error);
    assert.ok(
      await eventually(async () => (await ffmpegChildren(process.pid)).length === 0, 10_000),
      'ffmpeg was killed',
    );
    assert.ok(await eventually(async () => (await server.workLeftovers()).length === 0), 'workspace removed');
    assert.equal((await fetch(`${server.base}/health`)).status, 200);
  });
});

describe('job time limit', () => {
  const op = useOperation({ fixtures: ['small-300x200.png'], env: { MEDIAFLOW_JOB_TIMEOUT: '1' } });

  it('stops ffmpeg past MEDIAFLOW_JOB_TIMEOUT with a 504 and cleans up', async () => {
    const res = await op.server.post('/images-to-video/', longJob(op.files));
    assert.equal(res.status, 504);
    assert.equal(res.body.error, 'ffmpeg ran past its time limit and was stopped');
    assert.deepEqual(await ffmpegChildren(process.pid), []);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });
});

describe('the serve process', () => {
  let files: FileServer;
  let dataDir: string;
  const held = gate();

  before(async () => {
    await fixtures('small-300x200.png', 'white-800x600.png');
    files = await startFileServer({
      '/held': async (_req, res) => {
        await held.opened;
        res.writeHead(200, { 'content-type': 'image/png' });
        createReadStream(await fixture('white-800x600.png')).pipe(res);
      },
    });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-serve-'));
  });
  after(async () => {
    held.open();
    await files?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('removes work and partial outputs left by a killed predecessor when it starts', async () => {
    const first = await startServeProcess(dataDir);
    const job = fetch(`${first.base}/images-to-video/`, { method: 'POST', body: form(longJob(files)) }).catch(
      (e: Error) => e,
    );
    assert.ok(
      await eventually(async () => (await readdir(path.join(dataDir, 'work')).catch(() => [])).length === 1, 15_000),
      'a job is at work',
    );
    first.child.kill('SIGKILL');
    await first.child;
    await job;
    // What a crash mid-publish could leave: a temp file beside the outputs.
    await mkdir(path.join(dataDir, 'uploads', 'some-id'), { recursive: true });
    await writeFile(path.join(dataDir, 'uploads', 'some-id', '.partial-123'), 'half a file');
    assert.equal((await readdir(path.join(dataDir, 'work'))).length, 1, 'the kill left a workspace');
    const second = await startServeProcess(dataDir);
    try {
      assert.deepEqual(await readdir(path.join(dataDir, 'work')), []);
      assert.deepEqual(
        await readdir(path.join(dataDir, 'uploads', 'some-id')).catch(() => []),
        [],
        'the partial file is gone',
      );
      const partial = await fetch(`${second.base}/uploads/some-id/.partial-123`);
      assert.equal(partial.status, 404);
    } finally {
      second.child.kill('SIGKILL');
      await second.child;
    }
  });

  it("refuses to start a second server on a data directory in use, leaving the first one's job running", async () => {
    const first = await startServeProcess(dataDir);
    try {
      const job = fetch(`${first.base}/images-to-video/`, { method: 'POST', body: form(longJob(files)) }).catch(
        (e: Error) => e,
      );
      assert.ok(
        await eventually(async () => (await ffmpegChildren(first.child.pid!)).length === 1, 15_000),
        'the first server runs ffmpeg',
      );
      const second = await runCli(['serve', '--port', String(await freePort()), '--data-dir', dataDir]);
      assert.equal(second.exitCode, 2);
      assert.match(
        second.stderr,
        new RegExp(`Another mediaflow process \\(pid ${first.child.pid}\\) uses the data directory`),
      );
      assert.equal((await ffmpegChildren(first.child.pid!)).length, 1, 'the running job was left alone');
      assert.equal((await readdir(path.join(dataDir, 'work'))).length, 1, 'its workspace too');
      assert.equal((await health(first.base)).queue.running, 1);
      void job;
    } finally {
      // ffmpeg outlives a server killed with -9 (the next start would kill it): stop it here.
      const orphans = await ffmpegChildren(first.child.pid!);
      first.child.kill('SIGKILL');
      await first.child;
      for (const pid of orphans) process.kill(pid, 'SIGKILL');
    }
  });

  it('finishes a running job on SIGTERM, then exits 0 and refuses new connections', async () => {
    const serve = await startServeProcess(dataDir);
    const job = fetch(`${serve.base}/resize_image/`, {
      method: 'POST',
      body: form({ image_url: files.url('/held'), width: '16', height: '16' }),
    });
    assert.ok(await eventually(async () => (await health(serve.base)).queue.running === 1));
    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    held.open();
    const res = await job;
    assert.equal(res.status, 200);
    const result = await serve.child;
    assert.equal(result.exitCode, 0, serve.output());
    await assert.rejects(fetch(`${serve.base}/health`));
  });

  it('deletes outputs older than MEDIAFLOW_RETENTION', async () => {
    const serve = await startServeProcess(dataDir, { MEDIAFLOW_RETENTION: '2s' });
    try {
      const res = await fetch(`${serve.base}/resize_image/`, {
        method: 'POST',
        body: form({ image_url: files.url('/f/small-300x200.png'), width: '16', height: '16' }),
      });
      assert.equal(res.status, 200);
      const url = ((await res.json()) as { output_file: string }).output_file;
      assert.equal((await fetch(url)).status, 200);
      assert.ok(await eventually(async () => (await fetch(url)).status === 404, 10_000), 'the output was swept');
      // A fresh output survives the same sweep.
      const file = path.join(dataDir, 'uploads', 'fresh.txt');
      await writeFile(file, 'new');
      const now = new Date();
      await utimes(file, now, now);
      await new Promise((r) => setTimeout(r, 700));
      assert.equal((await fetch(`${serve.base}/uploads/fresh.txt`)).status, 200);
    } finally {
      serve.child.kill('SIGKILL');
      await serve.child;
    }
  });
});
