import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { audioOf, durationOf, frameRgb, probe, videoOf } from '../helpers/media.js';
import { runCli, startMediaflow, type TestServer } from '../helpers/mediaflow.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');
const TEXT = 'Hello there. This short was made by a pipeline!';

/**
 * Checks a short: 720x1280 H.264 with sound, 2 s (two images of 1 s; the 3 s voice is cut), the red
 * then the green image, subtitles burned in.
 */
async function checkShort(file: string): Promise<void> {
  const info = await probe(file);
  const video = videoOf(info)!;
  assert.equal(video.codec_name, 'h264');
  assert.equal(video.width, 720);
  assert.equal(video.height, 1280);
  assert.ok(audioOf(info), 'the voice-over is in the short');
  assert.ok(Math.abs(durationOf(info) - 2) < 0.2, `duration ${durationOf(info)}`);
  const first = await frameRgb(file, 0.5);
  const [r, g, b] = first.pixel(360, 640);
  assert.ok(r > 200 && g < 60 && b < 60, `the first image (red) is in the middle of the frame, got ${[r, g, b]}`);
  // The red landscape picture is padded with black above and below: white there is the subtitle.
  let white = 0;
  for (let y = 1100; y < 1270; y += 2)
    for (let x = 40; x < 680; x += 2) if (first.pixel(x, y).every((c) => c > 200)) white++;
  assert.ok(white > 50, `subtitles are burned in at the bottom (${white} white pixels)`);
  const [r2, g2, b2] = (await frameRgb(file, 1.5)).pixel(360, 640);
  assert.ok(g2 > 200 && r2 < 60 && b2 < 60, `the second image (green) follows, got ${[r2, g2, b2]}`);
}

describe('pipeline text-to-short', () => {
  let files: FileServer;
  let server: TestServer;
  let work: string;

  before(async () => {
    await fixtures('red-640x360.jpg', 'green-360x640.png', 'tone-3s-44k-stereo.mp3');
    files = await startFileServer();
    server = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: PIPELINES });
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-short-'));
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('runs from the CLI with local files, writing only the result to --out-dir', async () => {
    const out = path.join(work, 'cli');
    const images = [await fixture('red-640x360.jpg'), await fixture('green-360x640.png')].join(',');
    const result = await runCli(
      [
        'run',
        'text-to-short',
        '--input',
        `text=${TEXT}`,
        '--input',
        `images=${images}`,
        '--input',
        `voice=${await fixture('tone-3s-44k-stereo.mp3')}`,
        '--input',
        'seconds_per_image=1',
        '--out-dir',
        out,
      ],
      { env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES } },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const body = JSON.parse(result.stdout) as { message: string; outputs: Record<string, string> };
    assert.equal(body.message, 'Pipeline text-to-short completed successfully');
    assert.deepEqual(body.outputs, { short: path.join(out, 'short.mp4') });
    assert.deepEqual(await readdir(out), ['short.mp4']);
    await checkShort(body.outputs.short!);
    // Off a terminal, progress is plain log lines on stderr.
    assert.match(result.stderr, /text-to-short: step 'frames' \(crop_image_to_short\) started for 2 items/);
    assert.match(result.stderr, /text-to-short: step 'short' done in /);
  });

  it('prints the plan with --dry-run: stages, what runs at once, and argv where it is known', async () => {
    const out = path.join(work, 'dry');
    const args = [
      'run',
      path.join(PIPELINES, 'text-to-short.yaml'),
      '--dry-run',
      '--input',
      `text=${TEXT}`,
      '--input',
      `images=${await fixture('red-640x360.jpg')}`,
      '--input',
      `images=${await fixture('green-360x640.png')}`,
      '--input',
      `voice=${await fixture('tone-3s-44k-stereo.mp3')}`,
      '--out-dir',
      out,
    ];
    const text = await runCli(args);
    assert.equal(text.exitCode, 0, text.stderr);
    assert.match(text.stdout, /^Stage 1 \(2 steps run at the same time\):$/m);
    assert.match(
      text.stdout,
      /^ {2}frames: crop_image_to_short, once per item of \{\{ inputs\.images \}\} \(2 items, at the same time\)$/m,
    );
    // Pictures libvips reads are cropped in process: the plan names that work instead of an argv.
    assert.match(
      text.stdout,
      /^ {4}item 2: in process: libvips: in0\.png fitted to 720x1280 \(contain, centred\), flattened onto black, JPEG q90 -> output\.jpg$/m,
    );
    assert.doesNotMatch(text.stdout, /^ {4}item \d: \S*ffmpeg /m);
    assert.match(text.stdout, /^ {2}short: add-subtitles, after voiced, subtitles$/m);
    assert.match(text.stdout, /argv: known once 'voiced' and 'subtitles' have run/);

    const json = await runCli([...args, '--json']);
    assert.equal(json.exitCode, 0, json.stderr);
    const plan = JSON.parse(json.stdout) as {
      stages: Array<
        Array<{ name: string; after: string[]; runs?: Array<{ item?: number; steps: string[]; commands: string[][] }> }>
      >;
    };
    assert.deepEqual(
      plan.stages.map((stage) => stage.map((step) => step.name)),
      [['subtitles', 'frames'], ['slideshow'], ['voiced'], ['short']],
    );
    const [subtitles, frames] = plan.stages[0]!;
    // The document is built in a worker thread, by a step (the text may be a megabyte).
    assert.deepEqual(subtitles!.runs, [{ steps: ['worker thread: subtitles -> output.srt'], commands: [], files: [] }]);
    assert.equal(frames!.runs!.length, 2);
    for (const run of frames!.runs!) {
      assert.deepEqual(run.commands, []);
      assert.equal(run.steps.length, 1);
      assert.match(run.steps[0]!, /^libvips: in0\.(jpg|png) fitted to 720x1280 /);
    }
    assert.equal(plan.stages[1]![0]!.runs, undefined);
    assert.deepEqual(plan.stages[1]![0]!.after, ['frames']);
    // Nothing ran: no output folder was even made.
    await assert.rejects(readdir(out));
  });

  it('runs over HTTP: one download per input, only the result published', async () => {
    const res = await fetch(`${server.base}/pipelines/text-to-short/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        text: TEXT,
        images: [files.url('/f/red-640x360.jpg'), files.url('/f/green-360x640.png')],
        voice: files.url('/f/tone-3s-44k-stereo.mp3'),
        seconds_per_image: 1,
      }),
    });
    const body = (await res.json()) as { message: string; outputs: Record<string, string> };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.message, 'Pipeline text-to-short completed successfully');
    assert.deepEqual(Object.keys(body.outputs), ['short']);
    const match = new RegExp(`^${server.base}/uploads/([0-9a-f-]{36})/short\\.mp4$`).exec(body.outputs.short!);
    assert.ok(match, body.outputs.short);
    await checkShort(server.pathOf(body.outputs.short!));
    // Intermediate files travel as local files: every input was fetched once, none is published.
    for (const name of ['red-640x360.jpg', 'green-360x640.png', 'tone-3s-44k-stereo.mp3'])
      assert.equal(files.hits.get(`/f/${name}`), 1, name);
    assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')), [match[1]]);
    assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads', match[1]!)), ['short.mp4']);
    assert.deepEqual(await server.workLeftovers(), []);
    const served = await fetch(body.outputs.short!);
    assert.equal(served.status, 200);
    assert.equal(Number(served.headers.get('content-length')) > 0, true);
  });
});
