import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import {
  assertSeamless,
  CLIP,
  CLIP_JOINS,
  CLIP_SETTINGS,
  clipEdit,
  clockClip,
  ffmpegsIn,
  partOf,
  type RunningFfmpeg,
} from './helpers/fanout-clip.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, isFinal, submitJob, type JobView } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { ffmpegPeaks, type FfmpegPeak } from './helpers/process-stats.js';
import { eventually, ffmpegChildren } from './helpers/serve-process.js';

const ASYNC = { Prefer: 'respond-async' };
const slow = { timeout: 300_000 } as never;

/**
 * Issue 35's scenes (docs/render.md): the fan-out clip's timeline (80 s, in four scenes of MEDIAFLOW_PART_SECONDS under
 * CLIP_SETTINGS) rendered in scenes, one after another (fanout=false) and at once on the server's two slots (past
 * MEDIAFLOW_FANOUT_MIN), joined by stream copy. Either way the output must be
 * the one pass's frames, each once, with a clean decode, SSIM of at least 0.98 at the joins and each flash within a
 * frame of its beep; a cancel must leave no ffmpeg, no file and no output.
 */
describe('a long render in scenes', () => {
  let tmp: string;
  let clip: string;
  let files: FileServer;
  let server: TestServer;
  let single: Promise<string> | undefined;
  const work = () => path.join(server.dataDir, 'work');
  const uploads = () => readdir(path.join(server.dataDir, 'uploads'), { recursive: true }).catch(() => [] as string[]);
  const edit = () => JSON.stringify(clipEdit(files.url('/clock.mp4')));

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-scenes-'));
    clip = path.join(tmp, 'clock.mp4');
    await clockClip(clip);
    files = await startFileServer({ '/clock.mp4': serveFile(clip, 'video/mp4') });
    server = await startMediaflow({ ...CLIP_SETTINGS, MEDIAFLOW_CONCURRENCY: '2' });
  }, 120_000);
  after(async () => {
    await server?.close();
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function download(url: string, name: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `GET ${url}`);
    const file = path.join(tmp, name);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  /** The clip converted to H.264 in one pass: the frames a render of the edit must hold. */
  const onePass = () =>
    (single ??= (async () => {
      const res = await server.post('/convert-video/', { video_url: files.url('/clock.mp4'), fanout: 'false' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return download(res.body.output_file!, 'single.mp4');
    })());

  /** Samples the ffmpeg processes of the work folder until `done` settles: each seen, and the most at once. */
  async function sampled<T>(done: Promise<T>) {
    const seen = new Map<number, RunningFfmpeg>();
    let most = 0;
    let over = false;
    void done.finally(() => (over = true)).catch(() => undefined);
    while (!over) {
      // The server runs in this process: its ffmpeg are this process's children, quicker to read than every process.
      const now = (await ffmpegsIn(work(), await ffmpegChildren(process.pid))).filter((f) => partOf(f) !== undefined);
      for (const ffmpeg of now) if (!seen.has(ffmpeg.pid)) seen.set(ffmpeg.pid, ffmpeg);
      most = Math.max(most, now.length);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { result: await done, scenes: [...new Set([...seen.values()].map(partOf))].sort(), most };
  }

  it('renders the scenes one after another into the one pass’s frames, in step with the sound', slow, async () => {
    const request = fetch(`${server.base}/render/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ edit: JSON.parse(edit()), fanout: false }),
    });
    const { result: res, scenes, most } = await sampled(request);
    const body = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.duration, CLIP.seconds);
    assert.deepEqual(scenes, [0, 1, 2, 3], 'a command for each scene');
    assert.equal(most, 1, 'one scene at a time');
    const rendered = await download(body.output_file!, 'scenes.mp4');
    const seams = await assertSeamless(rendered, await onePass(), CLIP_JOINS);
    console.log('scenes one after another:', JSON.stringify(seams));
    assert.deepEqual(await readdir(work()), [], 'nothing left in the work folder');
  });

  it('renders them at once on the slots past MEDIAFLOW_FANOUT_MIN, joined the same', slow, async () => {
    const id = await submitJob(server.base, '/render/', { edit: edit() }, ASYNC);
    const views: Array<{ stage: string; progress: number }> = [];
    const watched = sampled(
      (async () => {
        for (;;) {
          const job = await getJob(server.base, id);
          views.push({ stage: job.stage, progress: job.progress });
          if (isFinal(job)) return job;
          await new Promise((r) => setTimeout(r, 100));
        }
      })(),
    );
    const { result: job, scenes, most } = await watched;
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.ok(
      views.some((view) => view.stage === 'process (in 4 parts)'),
      `stages: ${[...new Set(views.map((v) => v.stage))].join(', ')}`,
    );
    views.forEach((view, i) => assert.ok(i === 0 || view.progress >= views[i - 1]!.progress, 'progress went down'));
    assert.deepEqual(scenes, [0, 1, 2, 3]);
    assert.equal(most, 2, 'two scenes at once, one in each slot');
    const rendered = await download(String(job.result!.output_file), 'parts.mp4');
    const seams = await assertSeamless(rendered, await onePass(), CLIP_JOINS);
    console.log('scenes at once:', JSON.stringify(seams));
    assert.deepEqual(await readdir(work()), [], 'nothing left in the work folder');
  });

  it('kills every scene’s ffmpeg on a cancel mid-render, and leaves no file and no output', slow, async () => {
    const published = await uploads();
    const id = await submitJob(server.base, '/render/', { edit: edit() }, ASYNC);
    assert.ok(
      await eventually(
        async () => (await ffmpegsIn(work())).filter((f) => partOf(f) !== undefined).length >= 2,
        120_000,
      ),
      'two scenes are made at once',
    );
    const res = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as JobView).status, 'cancelled');
    assert.deepEqual(await ffmpegsIn(work()), [], 'no ffmpeg runs in the work folder');
    assert.deepEqual(await readdir(work()), [], 'nothing left in the work folder');
    assert.deepEqual(await uploads(), published, 'no output');
    assert.equal((await getJob(server.base, id)).status, 'cancelled');
  });
});

/**
 * Issue 35: peak memory does not grow with the number of pictures. The same 30 s rendered from 6 pictures and from 60
 * (1600x1200 each, with a zoom): in one command ffmpeg would hold every picture decoded, and a zoom's tables, at
 * once (about 120 MiB against 590 MiB here); in scenes of at most 8 media files it holds one scene's.
 */
describe('peak memory of a render', () => {
  let tmp: string;
  let files: FileServer;
  let server: TestServer;
  const PICTURES = 60;

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-render-memory-'));
    // One picture of its own colour a frame: p00.png to p59.png.
    await execa(
      'ffmpeg',
      [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        `color=c=red:s=1600x1200:r=1:d=${PICTURES},hue=h=6*n`,
        '-start_number',
        '0',
        'p%02d.png',
      ],
      { cwd: tmp },
    );
    const routes = Object.fromEntries(
      Array.from({ length: PICTURES }, (_, i) => {
        const name = `p${String(i).padStart(2, '0')}.png`;
        return [`/${name}`, serveFile(path.join(tmp, name), 'image/png')];
      }),
    );
    files = await startFileServer(routes);
    server = await startMediaflow({ MEDIAFLOW_CONCURRENCY: '1', MEDIAFLOW_MAX_INPUTS: '100' });
  }, 60_000);
  after(async () => {
    await server?.close();
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Renders `count` pictures over 30 s; answers the ffmpeg processes' peaks. */
  async function render(count: number) {
    const clips = Array.from({ length: count }, (_, i) => ({
      type: 'image',
      src: files.url(`/p${String(i).padStart(2, '0')}.png`),
      duration: 30 / count,
      motion: 'zoom-in',
    }));
    const request = server.post('/render/', {
      edit: JSON.stringify({ output: { width: 320, height: 180, fps: 25 }, tracks: [{ clips }] }),
    });
    const { result: res, peaks } = await ffmpegPeaks(path.join(server.dataDir, 'work'), request);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return peaks;
  }

  it('stays that of one scene, however many pictures', slow, async () => {
    const six = await render(6);
    const sixty = await render(PICTURES);
    const most = (peaks: FfmpegPeak[]) => Math.max(...peaks.map((peak) => peak.mib));
    console.log('peak MiB, 6 pictures:', JSON.stringify(six), '60 pictures:', JSON.stringify(sixty));
    const scenes = (peaks: FfmpegPeak[]) => peaks.filter((peak) => /^scene-\d+\.mp4$/.test(peak.output)).length;
    assert.ok(six.length === 1 && scenes(six) === 0, 'six pictures: one command');
    // How many scenes is test/plugins/render/scenes.test.ts's to say; a scene of a second may go unseen here.
    assert.ok(scenes(sixty) >= 2, `sixty pictures: in scenes, ${JSON.stringify(sixty)}`);
    assert.ok(most(sixty) <= 1.3 * most(six), `60 pictures took ${most(sixty)} MiB at most, 6 took ${most(six)} MiB`);
  });
});
