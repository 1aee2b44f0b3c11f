import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { H264, lavfi } from '../helpers/fixtures.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';
import { useOperation } from '../helpers/operation.js';
import { eventually, ffmpegChildren } from '../helpers/serve-process.js';
import { isFinal, submitJob, waitForJob } from '../helpers/jobs.js';
import { loadRegistry } from '../../src/plugins/index.js';
import { assertCode, assertNoServerPaths, assScript } from './hostile.js';

/**
 * MEDIAFLOW_JOB_TOTAL_TIMEOUT: one job's time, whatever it spends it on (ffmpeg runs, in-process steps, the parts of
 * a split encode), beside MEDIAFLOW_JOB_TIMEOUT's limit on each ffmpeg run. Every job here would finish, or run
 * for the per-run limit, without it.
 */

const PLUGIN = path.resolve(import.meta.dirname, '../fixtures/plugins/grey-thumbnail.js');
const total = (seconds: number) =>
  `The job ran past its time limit of ${seconds} s (MEDIAFLOW_JOB_TOTAL_TIMEOUT) and was stopped`;

describe('the whole-job time limit', () => {
  // 20 s of 640x360 with a keyframe a second, whose encode splits into parts, and 100 blurred lines to burn into
  // it: each part draws them on every frame (250,000 of the million a script may cost), seconds of libass a part.
  const lines = Array.from({ length: 100 }, (_, i) => ({
    start: '0:00:00.00',
    end: '0:00:20.00',
    text: `{\\pos(${(i * 37) % 600},${(i * 53) % 360})\\blur20}Line ${i}`,
  }));
  const op = useOperation({
    fixtures: ['red-640x360.jpg', 'green-360x640.png', 'small-300x200.png'],
    make: { 'clip.mp4': [...lavfi('testsrc2=s=640x360:r=25'), '-t', '20', ...H264, '-g', '25'] },
    routes: {
      '/local/lines.ass': (_req, res) =>
        void res.writeHead(200, { 'content-type': 'text/plain' }).end(assScript(lines)),
    },
    env: {
      MEDIAFLOW_JOB_TOTAL_TIMEOUT: '1.5s',
      // Far above what any one run here takes: only the sum of them can be stopped.
      MEDIAFLOW_JOB_TIMEOUT: '10m',
      MEDIAFLOW_FANOUT_MIN: '4s',
      MEDIAFLOW_PART_SECONDS: '4s',
    },
    registry: () => loadRegistry({ env: { MEDIAFLOW_PLUGINS: PLUGIN }, configFile: false }),
  });
  /** One job at a time, with a longer limit: a split encode's parts, one after another, outlast it. */
  let parts: TestServer;
  before(async () => {
    parts = await startMediaflow({
      MEDIAFLOW_JOB_TOTAL_TIMEOUT: '4s',
      MEDIAFLOW_JOB_TIMEOUT: '10m',
      MEDIAFLOW_FANOUT_MIN: '4s',
      MEDIAFLOW_PART_SECONDS: '4s',
      MEDIAFLOW_CONCURRENCY: '1',
    });
  });
  after(async () => {
    await parts?.close();
  });

  /** No ffmpeg of this process left running, and no work files left behind. */
  async function assertAllStopped(on = op.server): Promise<void> {
    assert.ok(await eventually(async () => (await ffmpegChildren(process.pid)).length === 0, 5000), 'ffmpeg left');
    assert.deepEqual(await on.workLeftovers(), [], 'files left in the work directory');
  }

  it('stops a job of many short ffmpeg runs (a slideshow in pieces) at the sum of their times: 504', async () => {
    const images = [op.files.url('/f/red-640x360.jpg'), op.files.url('/f/green-360x640.png')];
    const res = await op.server.post('/images-to-video/', {
      image_urls: [...images, ...images, ...images].join(','),
      seconds_per_image: '3',
      motion: 'zoom',
      transition: 'fade',
      width: '1280',
      height: '720',
      quality: 'small',
    });
    assert.equal(res.status, 504, JSON.stringify(res.body));
    assertCode(res.body.code, { status: 504, code: 'MF_ERR_TIMEOUT' });
    assert.equal(res.body.error, total(1.5));
    assertNoServerPaths(res.body.error!, op.server);
    await assertAllStopped();
  });

  it('stops an in-process step that would wait for the per-run limit', async () => {
    const res = await op.server.post('/grey-thumbnail/', {
      image_url: op.files.url('/f/small-300x200.png'),
      mode: 'hang',
    });
    assert.equal(res.status, 504, JSON.stringify(res.body));
    assert.equal(res.body.error, total(1.5));
    await assertAllStopped();
  });

  it('stops a split encode while its parts run, and the job fails with the 504', async () => {
    const id = await submitJob(
      parts.base,
      '/add-subtitles/',
      { video_url: op.files.url('/local/clip.mp4'), subtitle_url: op.files.url('/local/lines.ass') },
      { prefer: 'respond-async' },
    );
    // Seen while its parts run (a stage that names them), or else as it ended.
    const splitting = await waitForJob(parts.base, id, (job) => /parts/.test(job.stage) || isFinal(job), {
      every: 20,
    });
    assert.match(splitting.stage ?? '', /^process \(in \d+ parts\)$/, JSON.stringify(splitting));
    const failed = await waitForJob(parts.base, id);
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.equal(failed.error?.status, 504);
    assert.equal(failed.error?.error, total(4));
    await assertAllStopped(parts);
  });
});
