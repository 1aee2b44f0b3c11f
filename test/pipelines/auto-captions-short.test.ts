import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { captionPixels, extent, meanX } from '../helpers/caption-pixels.js';
import { audioOf, durationOf, frameRgb, probe, toneDbAt, videoOf } from '../helpers/media.js';
import { runCli } from '../helpers/mediaflow.js';
import { captionServers, leftovers, type Served, SHIPPED_PIPELINES } from '../helpers/pipeline-server.js';
import { FUGOOD, whisperCases } from '../helpers/whisper-model.js';

// The scripted model says "Hello world." from 0 to 2 s (Hello 0-1, world. 1-2), then, after a pause, "This is
// mediaflow." from 2.5 to 5 s (This 2.5-3.34, ...), whatever the sound: these are the times the frames are read at,
// as @fugood's whisper.cpp gives them (FUGOOD pins it).
describe('pipeline auto-captions-short (a scripted whisper model)', () => {
  const { missing, skipped } = whisperCases('auto-captions-short');
  let dir: string;
  let files: FileServer;
  let server: Served;
  let unavailable: Served;
  let stop: (() => Promise<void>) | undefined;
  const file = (name: string) => path.join(dir, name);
  const model = () => file('scripted.bin');

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-auto-captions-short-'));
    // A landscape video, a quarter of the short's height: the captions must fit the crop, not this frame.
    // prettier-ignore
    await execa('ffmpeg', [
      '-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x203040:s=640x360:r=25:d=6',
      '-f', 'lavfi', '-i', 'sine=frequency=440:duration=6',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', file('talk.mp4'),
    ]);
    files = await startFileServer({ '/talk.mp4': serveFile(file('talk.mp4'), 'video/mp4') });
    ({ server, unavailable, stop } = await captionServers(dir, model(), missing));
  });
  after(async () => {
    await stop?.();
    await files?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs over HTTP: a 720x1280 H.264 short as long as the video, its sound kept, each scripted word lit in turn ' +
      'at its time in the middle third, sized for the short',
    async (context) => {
      if (skipped(context)) return;
      const res = await server.post('/pipelines/auto-captions-short/', { video: files.url('/talk.mp4') });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const outputs = res.body.outputs as unknown as Record<string, string>;
      const video = server.pathOf(outputs.video!);
      assert.match(video, /\/video\.mp4$/);

      const [source, result] = [await probe(file('talk.mp4')), await probe(video)];
      const output = videoOf(result)!;
      assert.deepEqual([output.codec_name, output.width, output.height], ['h264', 720, 1280]);
      assert.ok(Math.abs(durationOf(result) - durationOf(source)) < 0.05, `lasts ${durationOf(result)} s`);
      assert.equal(audioOf(result)?.codec_name, 'aac');
      assert.ok((await toneDbAt(video, 440, 1, 4)) > -40, 'the 440 Hz tone is still there');

      // Hello (0-1 s), then world. (1-2 s), then This (2.5-3.34 s): the highlighted word and the others in white.
      const lit = await Promise.all([0.5, 1.5, 3].map(async (t) => captionPixels(await frameRgb(video, t))));
      for (const [i, { white, gold }] of lit.entries()) {
        assert.ok(gold.length > 20 && white.length > 20, `frame ${i}: ${gold.length} gold, ${white.length} white`);
        const box = extent([...white, ...gold]);
        assert.ok(box.top > 1280 / 3 && box.bottom < (2 * 1280) / 3, `frame ${i}: in the middle third (${box.top}..)`);
        assert.ok(Math.abs((box.left + box.right) / 2 - 360) < 30, `frame ${i}: centred across`);
        // Within 85% of the short's width: the 1920x1080 layout of the ASS is scaled to the frame it is burned on.
        assert.ok(box.left >= 50 && box.right <= 670, `frame ${i}: within the margins (${box.left}..${box.right})`);
      }
      // One line of 90 units of 1080 is about 107 px on the short (its letters about 60 px); on the 360-pixel
      // source it would have been a quarter of that.
      const line = extent([...lit[0]!.white, ...lit[0]!.gold]);
      assert.ok(
        line.bottom - line.top > 40 && line.bottom - line.top < 100,
        `a line ${line.bottom - line.top} px high`,
      );
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

  it('transcribes and crops at the same time, then burns the captions in (the plan of a dry run)', async (context) => {
    if (skipped(context)) return;
    const env = { MEDIAFLOW_PIPELINES_DIR: SHIPPED_PIPELINES, MEDIAFLOW_WHISPER_MODEL: model(), ...FUGOOD };
    const run = await runCli(['run', 'auto-captions-short', '--dry-run', '--input', `video=${file('talk.mp4')}`], {
      env,
    });
    assert.equal(run.exitCode, 0, run.stderr);
    const stages = [...run.stdout.matchAll(/^Stage (\d+).*\n((?:\s.*\n)*)/gm)].map(([, n, body]) => ({
      n: Number(n),
      steps: [...body!.matchAll(/^ {2}(\w+): ([\w-]+)/gm)].map(([, step, op]) => `${step}: ${op}`),
    }));
    assert.deepEqual(stages, [
      { n: 1, steps: ['captions: transcribe', 'cropped: crop-video'] },
      { n: 2, steps: ['captioned: add-subtitles'] },
    ]);
    assert.match(run.stdout, /crop=720:1280,setsar=1/);
  });

  it('runs as a batch from the CLI: one 720x1280 short per row, each captioned', async (context) => {
    if (skipped(context)) return;
    const env = { MEDIAFLOW_PIPELINES_DIR: SHIPPED_PIPELINES, MEDIAFLOW_WHISPER_MODEL: model(), ...FUGOOD };
    const rows = file('rows.csv');
    await writeFile(rows, 'video,position\ntalk.mp4,\ntalk.mp4,top\n');
    const out = await mkdtemp(path.join(dir, 'batch-'));
    const batch = await runCli(['run', 'auto-captions-short', '--batch', rows, '--out-dir', out], { env });
    assert.equal(batch.exitCode, 0, batch.stderr);
    const summary = JSON.parse(batch.stdout) as Record<string, unknown>;
    assert.deepEqual([summary.rows, summary.done, summary.failed], [2, 2, 0]);
    const lit: number[] = [];
    for (const row of [1, 2]) {
      const video = path.join(out, `row-${row}`, 'video.mp4');
      const stream = videoOf(await probe(video))!;
      assert.deepEqual([stream.width, stream.height], [720, 1280], `row ${row}`);
      const { white, gold } = captionPixels(await frameRgb(video, 0.5));
      assert.ok(gold.length > 20, `row ${row}: the first word lit`);
      lit.push(extent([...white, ...gold]).top);
    }
    // Row 1 takes the short's default, the middle; row 2 its own position, the top.
    assert.ok(lit[0]! > 1280 / 3 && lit[1]! < 1280 / 3, `caption tops ${lit.join(', ')}`);
  });

  it('answers a 501 saying what to set when the server has no whisper model, before fetching anything', async () => {
    // No skip: without the binding this is a 501 as well (saying what to install).
    const hits = files.hits.get('/talk.mp4') ?? 0;
    const res = await unavailable.post('/pipelines/auto-captions-short/', { video: files.url('/talk.mp4') });
    assert.equal(res.status, 501, JSON.stringify(res.body));
    assert.match(res.body.error as string, missing ? /install/ : /MEDIAFLOW_WHISPER_MODEL/);
    assert.equal(files.hits.get('/talk.mp4') ?? 0, hits, 'the video was not fetched');
    assert.deepEqual(await leftovers(unavailable.dataDir), []);
  });
});
