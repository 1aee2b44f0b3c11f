import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { captionPixels, meanX } from '../helpers/caption-pixels.js';
import { audioOf, frameRgb, probe, toneDbAt, videoOf } from '../helpers/media.js';
import { runCli } from '../helpers/mediaflow.js';
import { captionServers, leftovers, type Served, SHIPPED_PIPELINES } from '../helpers/pipeline-server.js';
import { FUGOOD, whisperCases } from '../helpers/whisper-model.js';

// The scripted model says "Hello world." from 0 to 2 s (Hello 0-1, world. 1-2), then, after a pause, "This is
// mediaflow." from 2.5 to 5 s (This 2.5-3.34, ...), whatever the sound: these are the times the frames are read at,
// as @fugood's whisper.cpp gives them (FUGOOD pins it).
describe('pipeline auto-captions (a scripted whisper model)', () => {
  const { missing, skipped } = whisperCases('auto-captions');
  let dir: string;
  let files: FileServer;
  let server: Served;
  let unavailable: Served;
  let stop: (() => Promise<void>) | undefined;
  const file = (name: string) => path.join(dir, name);
  const model = () => file('scripted.bin');

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-auto-captions-'));
    const picture = (seconds: number) => ['-f', 'lavfi', '-i', `color=c=0x203040:s=640x360:r=25:d=${seconds}`];
    const encode = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
    // prettier-ignore
    await execa('ffmpeg', [
      '-v', 'error', ...picture(6), '-f', 'lavfi', '-i', 'sine=frequency=440:duration=6',
      ...encode, '-c:a', 'aac', '-shortest', file('talk.mp4'),
    ]);
    await execa('ffmpeg', ['-v', 'error', ...picture(2), ...encode, file('silent.mp4')]);
    files = await startFileServer({
      '/talk.mp4': serveFile(file('talk.mp4'), 'video/mp4'),
      '/silent.mp4': serveFile(file('silent.mp4'), 'video/mp4'),
    });
    ({ server, unavailable, stop } = await captionServers(dir, model(), missing));
  });
  after(async () => {
    await stop?.();
    await files?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs over HTTP: each scripted word lit in turn at its time, low in the frame; nothing in the pauses; the ' +
      "video's size, length and sound kept",
    async (context) => {
      if (skipped(context)) return;
      const res = await server.post('/pipelines/auto-captions/', { video: files.url('/talk.mp4') });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const outputs = res.body.outputs as unknown as Record<string, string>;
      const video = server.pathOf(outputs.video!);
      assert.match(video, /\/video\.mp4$/);

      const [source, result] = [await probe(file('talk.mp4')), await probe(video)];
      const [input, output] = [videoOf(source)!, videoOf(result)!];
      assert.deepEqual([output.width, output.height], [input.width, input.height]);
      assert.ok(Math.abs(Number(output.duration) - Number(input.duration)) < 0.05, `lasts ${output.duration}`);
      assert.equal(audioOf(result)?.codec_name, 'aac');
      assert.ok((await toneDbAt(video, 440, 1, 4)) > -40, 'the 440 Hz tone is still there');

      // Hello (0-1 s), then world. (1-2 s), then This (2.5-3.34 s): the highlighted word and the others in white.
      const lit = await Promise.all([0.5, 1.5, 3].map(async (t) => captionPixels(await frameRgb(video, t))));
      for (const [i, { white, gold }] of lit.entries()) {
        assert.ok(gold.length > 20 && white.length > 20, `frame ${i}: ${gold.length} gold, ${white.length} white`);
        const ys = [...white, ...gold].map((p) => p.y);
        const xs = [...white, ...gold].map((p) => p.x);
        assert.ok(Math.min(...ys) > 240, `frame ${i}: in the bottom third (${Math.min(...ys)}..${Math.max(...ys)})`);
        assert.ok(Math.abs((Math.min(...xs) + Math.max(...xs)) / 2 - 320) < 30, `frame ${i}: centred across`);
      }
      assert.ok(meanX(lit[0]!.gold) < meanX(lit[0]!.white), 'at 0.5 s the first word, Hello, is lit');
      assert.ok(meanX(lit[1]!.gold) > meanX(lit[1]!.white), 'at 1.5 s the second word, world., is lit');
      assert.ok(meanX(lit[2]!.gold) < meanX(lit[2]!.white), 'at 3 s the first word of the second line is lit');

      // The pause between the lines, and after the last one: no caption at all.
      for (const t of [2.25, 5.5]) {
        const { white, gold } = captionPixels(await frameRgb(video, t));
        assert.equal(white.length + gold.length, 0, `no caption at ${t} s`);
      }
      assert.deepEqual(await leftovers(server.dataDir, 'work'), []);
    },
  );

  it('takes highlight_color and position: red words, in the middle of the frame', async (context) => {
    if (skipped(context)) return;
    const res = await server.post('/pipelines/auto-captions/', {
      video: files.url('/talk.mp4'),
      highlight_color: '#FF0000',
      position: 'middle',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outputs = res.body.outputs as unknown as Record<string, string>;
    const { white, gold, red } = captionPixels(await frameRgb(server.pathOf(outputs.video!), 0.5));
    assert.equal(gold.length, 0);
    assert.ok(red.length > 20 && white.length > 20, `${red.length} red, ${white.length} white`);
    const ys = [...white, ...red].map((p) => p.y);
    assert.ok(Math.min(...ys) > 120 && Math.max(...ys) < 240, `in the middle third: ${Math.min(...ys)}..`);
  });

  it('refuses a soundless video (422), a bad position or language (400), leaving nothing', async (context) => {
    if (skipped(context)) return;
    const earlier = await leftovers(server.dataDir);
    const res = await server.post('/pipelines/auto-captions/', { video: files.url('/silent.mp4') });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.error as string, /^Step 'captions' \(transcribe\) failed: .*has no audio stream/);
    assert.deepEqual(await leftovers(server.dataDir), earlier);

    // A bad caption input is refused before the video is fetched.
    const hits = files.hits.get('/talk.mp4') ?? 0;
    const misplaced = await server.post('/pipelines/auto-captions/', {
      video: files.url('/talk.mp4'),
      position: 'left',
    });
    assert.equal(misplaced.status, 400, JSON.stringify(misplaced.body));
    assert.equal(
      misplaced.body.error,
      "Step 'captions' (transcribe) failed: Expected `position` to be one of bottom, middle, top, got `left`",
    );
    // The scripted model is English-only, as tiny.en is: another language would be recognised as English anyway.
    const french = await server.post('/pipelines/auto-captions/', { video: files.url('/talk.mp4'), language: 'fr' });
    assert.equal(french.status, 400, JSON.stringify(french.body));
    assert.match(french.body.error as string, /^Step 'captions' \(transcribe\) failed: .*English-only.* not fr/);
    assert.equal(files.hits.get('/talk.mp4') ?? 0, hits, 'the video was not fetched');
    assert.deepEqual(await leftovers(server.dataDir), earlier);
  });

  it('answers a 501 saying what to set when the server has no whisper model, before fetching anything', async () => {
    // No skip: without the binding this is a 501 as well (saying what to install).
    const hits = files.hits.get('/talk.mp4') ?? 0;
    const res = await unavailable.post('/pipelines/auto-captions/', { video: files.url('/talk.mp4') });
    assert.equal(res.status, 501, JSON.stringify(res.body));
    assert.match(res.body.error as string, missing ? /install/ : /MEDIAFLOW_WHISPER_MODEL/);
    assert.equal(files.hits.get('/talk.mp4') ?? 0, hits, 'the video was not fetched');
    assert.deepEqual(await leftovers(unavailable.dataDir), []);
  });

  it('runs from the CLI on a local file, and as a batch of two rows', async (context) => {
    if (skipped(context)) return;
    const env = { MEDIAFLOW_PIPELINES_DIR: SHIPPED_PIPELINES, MEDIAFLOW_WHISPER_MODEL: model(), ...FUGOOD };
    const out = await mkdtemp(path.join(dir, 'cli-'));
    const one = await runCli(['run', 'auto-captions', '--input', `video=${file('talk.mp4')}`, '--out-dir', out], {
      env,
    });
    assert.equal(one.exitCode, 0, one.stderr);
    assert.deepEqual(JSON.parse(one.stdout).outputs, { video: path.join(out, 'video.mp4') });
    const single = captionPixels(await frameRgb(path.join(out, 'video.mp4'), 0.5));
    assert.ok(single.gold.length > 20 && single.white.length > 20, 'the captions, first word lit');

    // Relative paths in a batch file are read against the batch file's folder; an empty cell takes the default.
    const rows = file('rows.csv');
    await writeFile(rows, 'video,highlight_color\ntalk.mp4,\ntalk.mp4,#FF0000\n');
    const batchOut = await mkdtemp(path.join(dir, 'batch-'));
    const batch = await runCli(['run', 'auto-captions', '--batch', rows, '--out-dir', batchOut], { env });
    assert.equal(batch.exitCode, 0, batch.stderr);
    const summary = JSON.parse(batch.stdout) as Record<string, unknown>;
    assert.deepEqual([summary.rows, summary.done, summary.failed], [2, 2, 0]);
    const [first, second] = await Promise.all(
      [1, 2].map(async (row) => captionPixels(await frameRgb(path.join(batchOut, `row-${row}`, 'video.mp4'), 0.5))),
    );
    assert.ok(first!.gold.length > 20 && first!.red.length === 0, 'row 1: the default gold');
    assert.ok(second!.red.length > 20 && second!.gold.length === 0, 'row 2: its own red');
  });
});
