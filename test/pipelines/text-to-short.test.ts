import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { useOperation } from '../helpers/operation.js';
import { fixture } from '../helpers/fixtures.js';
import { audioOf, brightPixels, durationOf, frameRgb, probe, toneDbAt, videoOf } from '../helpers/media.js';
import { runCli } from '../helpers/mediaflow.js';
import { cuesOf } from '../helpers/speech-audio.js';

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
  const op = useOperation({
    fixtures: ['red-640x360.jpg', 'green-360x640.png', 'tone-3s-44k-stereo.mp3'],
    env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES },
  });

  it('runs from the CLI with local files, writing only the result to --out-dir', async () => {
    const out = path.join(op.scratch, 'cli');
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
    const out = path.join(op.scratch, 'dry');
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
    assert.match(text.stdout, /^Stage 1 \(3 steps run at the same time\):$/m);
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
    assert.match(text.stdout, /^ {2}short: add-subtitles, after voiced, speech, subtitles$/m);
    // With a recorded voice, the script's steps and the music's do not run.
    assert.match(
      text.stdout,
      /^ {2}speech: speak\n(?: {4}.*\n)* {4}does not run: its `when` input `script` is not given$/m,
    );
    assert.match(text.stdout, /^ {4}does not run: its `when` input `music` is not given$/m);

    const json = await runCli([...args, '--json']);
    assert.equal(json.exitCode, 0, json.stderr);
    const plan = JSON.parse(json.stdout) as {
      stages: Array<
        Array<{ name: string; after: string[]; runs?: Array<{ item?: number; steps: string[]; commands: string[][] }> }>
      >;
    };
    assert.deepEqual(
      plan.stages.map((stage) => stage.map((step) => step.name)),
      [['subtitles', 'speech', 'frames'], ['slideshow', 'music_under'], ['voiced'], ['short']],
    );
    const [subtitles, speech, frames] = plan.stages[0]!;
    assert.equal(speech!.runs, undefined);
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
    const res = await fetch(`${op.server.base}/pipelines/text-to-short/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        text: TEXT,
        images: [op.files.url('/f/red-640x360.jpg'), op.files.url('/f/green-360x640.png')],
        voice: op.files.url('/f/tone-3s-44k-stereo.mp3'),
        seconds_per_image: 1,
      }),
    });
    const body = (await res.json()) as { message: string; outputs: Record<string, string> };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.message, 'Pipeline text-to-short completed successfully');
    assert.deepEqual(Object.keys(body.outputs), ['short']);
    const match = new RegExp(`^${op.server.base}/uploads/([0-9a-f-]{36})/short\\.mp4$`).exec(body.outputs.short!);
    assert.ok(match, body.outputs.short);
    await checkShort(op.server.pathOf(body.outputs.short!));
    // Intermediate files travel as local files: every input was fetched once, none is published.
    for (const name of ['red-640x360.jpg', 'green-360x640.png', 'tone-3s-44k-stereo.mp3'])
      assert.equal(op.files.hits.get(`/f/${name}`), 1, name);
    assert.deepEqual(await readdir(path.join(op.server.dataDir, 'uploads')), [match[1]]);
    assert.deepEqual(await readdir(path.join(op.server.dataDir, 'uploads', match[1]!)), ['short.mp4']);
    assert.deepEqual(await op.server.workLeftovers(), []);
    const served = await fetch(body.outputs.short!);
    assert.equal(served.status, 200);
    assert.equal(Number(served.headers.get('content-length')) > 0, true);
  });

  it('speaks a script instead of a recorded voice, music under it, each caption shown while it is said', async () => {
    const script = 'Hello there. This short was spoken by the server.';
    const hits = new Map(op.files.hits);
    const res = await fetch(`${op.server.base}/pipelines/text-to-short/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        script,
        images: [op.files.url('/f/red-640x360.jpg'), op.files.url('/f/green-360x640.png')],
        music: op.files.url('/f/tone-3s-44k-stereo.mp3'),
        seconds_per_image: 2,
      }),
    });
    const body = (await res.json()) as {
      outputs: Record<string, string>;
      answers: Record<string, Record<string, unknown>>;
    };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.answers.speech!.voice, 'espeak:en-us');
    const spoken = Number(body.answers.speech!.duration);
    const file = op.server.pathOf(body.outputs.short!);
    const info = await probe(file);
    assert.equal(videoOf(info)!.width, 720);
    assert.ok(audioOf(info), 'the speech is in the short');
    // The short ends with the speech (3 s), before the slideshow (4 s).
    assert.ok(Math.abs(durationOf(info) - spoken) < 0.15, `${durationOf(info)} s, the speech ${spoken} s`);
    // The captions are the speech's own: the script spoken alone is timed the same.
    const alone = await op.server.post('/speak/', { text: script, captions: 'srt', words_per_line: '6' });
    const cues = cuesOf(await readFile(op.server.pathOf(alone.body.subtitle_file_url!), 'utf8'));
    assert.deepEqual(
      cues.map((cue) => cue.text),
      ['Hello there.', 'This short was spoken by the', 'server.'],
    );
    const bottom = async (seconds: number) => brightPixels(await frameRgb(file, seconds), 40, 1100, 640, 170, 200);
    assert.ok((await bottom((cues[0]!.start + cues[0]!.end) / 2)) > 50, 'the first caption shows while it is said');
    const pause = { start: cues[0]!.end, end: cues[1]!.start };
    assert.ok(pause.end - pause.start > 0.3, JSON.stringify(cues));
    assert.equal(await bottom((pause.start + pause.end) / 2), 0, 'no caption shows in the pause between sentences');
    assert.ok((await bottom((cues[1]!.start + cues[1]!.end) / 2)) > 50, 'the second caption shows while it is said');
    // The music (550 Hz, 18 LU under the voice) sounds in the pause, where the speech alone is silent.
    const inPause = (audio: string) => toneDbAt(audio, 550, pause.start + 0.05, pause.end - pause.start - 0.1);
    const music = await inPause(file);
    const silence = await inPause(op.server.pathOf(alone.body.output_file!));
    assert.ok(music > -60 && silence < music - 30, `550 Hz in the pause: ${music} dB, without music ${silence} dB`);
    for (const name of ['red-640x360.jpg', 'green-360x640.png', 'tone-3s-44k-stereo.mp3'])
      assert.equal(op.files.hits.get(`/f/${name}`), (hits.get(`/f/${name}`) ?? 0) + 1, name);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('refuses a run with neither a voice nor a script, before anything is fetched', async () => {
    const hits = new Map(op.files.hits);
    const res = await fetch(`${op.server.base}/pipelines/text-to-short/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT, images: [op.files.url('/f/red-640x360.jpg')] }),
    });
    const body = (await res.json()) as { error: string };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(
      body.error,
      /^Step 'voiced' \(merge-audio-video\) failed: \{\{ steps\.music_under\.output \|\| steps\.speech\.output \|\| inputs\.voice \}\} has no value: .*step 'speech' does not run \(its `when` input `script` is not given\), and input `voice` is not given$/,
    );
    assert.deepEqual(op.files.hits, hits);
  });
});
