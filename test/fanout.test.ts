import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  assertSeamless,
  BROKEN_PART,
  BROKEN_PART_ERROR,
  CLIP,
  CLIP_JOINS,
  CLIP_SETTINGS,
  clockClip,
  ffmpegsIn,
  partOf,
  partStarts,
  videoPackets,
  type RunningFfmpeg,
} from './helpers/fanout-clip.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, isFinal, submitJob, type JobView } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { eventually, ffmpegChildren, startServeProcess, type ServeProcess } from './helpers/serve-process.js';

const ASYNC = { Prefer: 'respond-async' };
const slow = { timeout: 240_000 } as never;

/** What a job showed while it ran, and the parts' ffmpeg processes seen in its workspace. */
interface Watched {
  job: JobView;
  views: Array<{ stage: string; progress: number }>;
  ffmpegs: Map<number, RunningFfmpeg>;
}

/**
 * Issue 24's fan-out in one process (docs/fanout.md): the real server (`mediaflow serve`, two ffmpeg slots) splits
 * the fan-out clip's conversion to H.264 at the input's keyframes into four parts (of 20 s, under CLIP_SETTINGS),
 * encodes them at once and joins them by stream copy. The join must be the single pass's frames, each once and in
 * step with the sound; progress must never go down; a cancel, or a part that fails, must leave no ffmpeg, no file
 * and no output.
 */
describe('fan-out, embedded: a long convert-video in parts', () => {
  let tmp: string;
  let clip: string;
  let files: FileServer;
  let dataDir: string;
  let server: ServeProcess;
  const work = () => path.join(dataDir, 'work');
  const uploads = () => readdir(path.join(dataDir, 'uploads'), { recursive: true }).catch(() => [] as string[]);

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-fanout-'));
    clip = path.join(tmp, 'clock.mp4');
    await clockClip(clip);
    files = await startFileServer({ '/clock.mp4': serveFile(clip, 'video/mp4') });
    dataDir = path.join(tmp, 'data');
    server = await startServeProcess(dataDir, {
      ...CLIP_SETTINGS,
      MEDIAFLOW_CONCURRENCY: '2',
      MEDIAFLOW_PLUGINS: BROKEN_PART,
    });
  }, 120_000);
  after(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await server?.child;
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Polls a job until it ends, keeping each view of it and every ffmpeg seen in the work folder meanwhile. */
  async function watch(id: string, ms = 200_000): Promise<Watched> {
    const views: Watched['views'] = [];
    const ffmpegs = new Map<number, RunningFfmpeg>();
    const deadline = Date.now() + ms;
    for (;;) {
      // Among the server's children, which are quick to read where a scan of every process can miss a short part.
      for (const ffmpeg of await ffmpegsIn(work(), await ffmpegChildren(server.child.pid!)))
        if (!ffmpegs.has(ffmpeg.pid)) ffmpegs.set(ffmpeg.pid, ffmpeg);
      const job = await getJob(server.base, id);
      views.push({ stage: job.stage, progress: job.progress });
      if (isFinal(job)) return { job, views, ffmpegs };
      assert.ok(Date.now() < deadline, `job ${id} still ${job.status} after ${ms} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function download(url: string, name: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `GET ${url}`);
    const file = path.join(tmp, name);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  it('joins the parts into the single pass’s frames, each once, in step with the sound', slow, async () => {
    // The clip's keyframes every 2 s make parts of exactly CLIP.partSeconds: joins at 20, 40 and 60 s.
    const keyframes = (await videoPackets(clip)).filter((p) => p.key).map((p) => p.pts);
    const joins = partStarts(keyframes, CLIP.seconds - 1 / CLIP.fps, CLIP.partSeconds);
    assert.deepEqual(joins, CLIP_JOINS);

    const id = await submitJob(server.base, '/convert-video/', { video_url: files.url('/clock.mp4') }, ASYNC);
    const { job, views, ffmpegs } = await watch(id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.equal(job.progress, 100);
    // It said it split, and each part was an ffmpeg of its own in the job's workspace.
    assert.ok(
      views.some((view) => view.stage === 'process (in 4 parts)'),
      `stages: ${[...new Set(views.map((v) => v.stage))].join(', ')}`,
    );
    assert.deepEqual(
      [...new Set([...ffmpegs.values()].map(partOf).filter((part) => part !== undefined))].sort(),
      [0, 1, 2, 3],
    );
    // Progress never went down, and moved while the parts ran.
    views.forEach((view, i) =>
      assert.ok(
        i === 0 || view.progress >= views[i - 1]!.progress,
        `progress went down: ${JSON.stringify(views.slice(Math.max(0, i - 3), i + 1))}`,
      ),
    );
    const during = new Set(views.filter((v) => v.stage.startsWith('process (in')).map((v) => v.progress));
    assert.ok(during.size >= 3, `progress while the parts ran: ${[...during].join(', ')}`);

    const single = await fetch(`${server.base}/convert-video/`, {
      method: 'POST',
      body: form({ video_url: files.url('/clock.mp4'), fanout: 'false' }),
    });
    const singleBody = (await single.json()) as Record<string, string>;
    assert.equal(single.status, 200, JSON.stringify(singleBody));
    const split = await download(String(job.result!.output_file), 'split.mp4');
    const onePass = await download(singleBody.output_file!, 'single.mp4');
    await assertSeamless(split, onePass, joins);
    assert.deepEqual(await readdir(work()), [], 'nothing left in the work folder');
  });

  it('kills every part’s ffmpeg on a cancel mid-job, and leaves no file and no output', slow, async () => {
    const published = await uploads();
    const id = await submitJob(server.base, '/convert-video/', { video_url: files.url('/clock.mp4') }, ASYNC);
    assert.ok(
      await eventually(
        async () => (await ffmpegsIn(work())).filter((f) => partOf(f) !== undefined).length >= 2,
        120_000,
      ),
      'two parts run at once',
    );
    const res = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as JobView).status, 'cancelled');
    // The answer comes once the job's ffmpeg is killed and its files removed.
    assert.deepEqual(await ffmpegsIn(work()), [], 'no ffmpeg runs in the work folder');
    assert.deepEqual(await readdir(work()), [], 'nothing left in the work folder');
    assert.deepEqual(await uploads(), published, 'no output');
    const job = await getJob(server.base, id);
    assert.equal(job.status, 'cancelled');
    assert.equal(job.result, null);
  });

  it('fails the job with the failing part’s error, stops the others, and leaves nothing behind', slow, async () => {
    const published = await uploads();
    const id = await submitJob(server.base, '/broken-part/', { video_url: files.url('/clock.mp4') }, ASYNC);
    const { job, ffmpegs } = await watch(id);
    assert.equal(job.status, 'failed');
    assert.deepEqual(job.error, BROKEN_PART_ERROR);
    // Part 1 (20 s to 40 s) failed, with part 0 beside it in the other slot: nothing of either runs on.
    const parts = new Set([...ffmpegs.values()].map(partOf));
    assert.ok(parts.has(0) && parts.has(1), `parts seen running: ${[...parts].join(', ')}`);
    assert.deepEqual(await ffmpegsIn(work()), [], 'no ffmpeg runs in the work folder');
    assert.deepEqual(await readdir(work()), [], 'nothing left in the work folder');
    const left = await uploads();
    assert.deepEqual(left, published, 'no output');
    assert.ok(!left.some((name) => name.startsWith('.fanout')), 'no part file in uploads');
  });
});

const form = (fields: Record<string, string>) => {
  const body = new FormData();
  for (const [key, value] of Object.entries(fields)) body.append(key, value);
  return body;
};
