import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { audioOf, durationOf, loudnessOf, probe, videoOf } from '../helpers/media.js';
import { runCli, startMediaflow, type TestServer } from '../helpers/mediaflow.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');

/**
 * A 20 s episode: a moving picture, and a tone ("speech") at -30 dBFS-ish with two pauses inside the
 * clip taken from 2 s to 16 s: 5 to 7 s and 11 to 12.5 s. remove-silence keeps 0.15 s of each pause
 * on either side, so 1.7 s + 1.2 s = 2.9 s go.
 */
const SPEECH = "aevalsrc='if(between(t,5,7)+between(t,11,12.5),0,0.05*sin(2*PI*300*t))':s=44100:d=20";
const REMOVED = 2.9;

describe('pipeline podcast-clip', () => {
  let files: FileServer;
  let server: TestServer;
  let work: string;
  let episode: string;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-podcast-clip-'));
    episode = path.join(work, 'episode.mp4');
    await execa('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=20', '-f', 'lavfi', '-i', SPEECH],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', episode],
    ]);
    files = await startFileServer({ '/local/episode.mp4': serveFile(episode, 'video/mp4') });
    server = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: PIPELINES });
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('cuts the clip, removes its pauses, normalizes it and takes a cover, from the CLI', async () => {
    const out = path.join(work, 'cli');
    const result = await runCli(
      [
        ...['run', 'podcast-clip', '--input', `episode=${episode}`, '--input', 'start=2', '--input', 'end=00:16'],
        ...['--input', 'loudness=-16', '--out-dir', out],
      ],
      { env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES } },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const body = JSON.parse(result.stdout) as {
      outputs: { clip: string; cover: string[] };
      answers: { tight: { removed_seconds: number }; loud: { loudness: { input: number; output: number } } };
    };
    assert.deepEqual(body.outputs, { clip: path.join(out, 'clip.mp4'), cover: [path.join(out, 'cover-1.jpg')] });
    assert.deepEqual((await readdir(out)).sort(), ['clip.mp4', 'cover-1.jpg']);
    assert.ok(Math.abs(body.answers.tight.removed_seconds - REMOVED) <= 0.1, JSON.stringify(body.answers));

    const clip = await probe(body.outputs.clip);
    assert.equal(videoOf(clip)?.codec_name, 'h264');
    assert.equal(audioOf(clip)?.codec_name, 'aac');
    assert.ok(Math.abs(durationOf(clip) - (14 - REMOVED)) <= 0.15, `duration ${durationOf(clip)}`);
    const loudness = await loudnessOf(body.outputs.clip);
    assert.ok(Math.abs(loudness.integrated + 16) <= 1, `${loudness.integrated} LUFS`);
    assert.ok(Math.abs(body.answers.loud.loudness.output - loudness.integrated) <= 0.5);

    const cover = videoOf(await probe(body.outputs.cover[0]!));
    assert.deepEqual([cover?.codec_name, cover?.width, cover?.height], ['mjpeg', 320, 240]);
  });

  it('runs over HTTP with a URL, and refuses an end before the start before anything runs', async () => {
    const fields = { episode: files.url('/local/episode.mp4'), start: '2', end: '16' };
    const res = await server.post('/pipelines/podcast-clip/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outputs = res.body.outputs as unknown as { clip: string; cover: string[] };
    assert.ok(Math.abs(durationOf(await probe(server.pathOf(outputs.clip))) - (14 - REMOVED)) <= 0.15);
    assert.equal(outputs.cover.length, 1);

    const backwards = await server.post('/pipelines/podcast-clip/', { ...fields, start: '10', end: '5' });
    assert.equal(backwards.status, 400, JSON.stringify(backwards.body));
    assert.match(backwards.body.error!, /^Step 'clip' \(trim-media\) failed: /);
    assert.deepEqual(await server.workLeftovers(), []);
  });
});
