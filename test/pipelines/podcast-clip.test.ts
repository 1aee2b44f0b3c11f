import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { H264, lavfi } from '../helpers/fixtures.js';
import { audioOf, durationOf, loudnessOf, probe, videoOf } from '../helpers/media.js';
import { runCli } from '../helpers/mediaflow.js';
import { useOperation } from '../helpers/operation.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');

/**
 * A 20 s episode: a moving picture, and a tone ("speech") at -30 dBFS-ish with two pauses inside the
 * clip taken from 2 s to 16 s: 5 to 7 s and 11 to 12.5 s. remove-silence keeps 0.15 s of each pause
 * on either side, so 1.7 s + 1.2 s = 2.9 s go.
 */
const SPEECH = "aevalsrc='if(between(t,5,7)+between(t,11,12.5),0,0.05*sin(2*PI*300*t))':s=44100:d=20";
const REMOVED = 2.9;

describe('pipeline podcast-clip', () => {
  const op = useOperation({
    make: {
      'episode.mp4': [...lavfi('testsrc2=s=320x240:r=25:d=20', SPEECH), ...H264, '-g', '50', '-c:a', 'aac'],
    },
    env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES },
  });
  const episode = () => op.made['episode.mp4']!;

  it('cuts the clip, removes its pauses, normalizes it and takes a cover, from the CLI', async () => {
    const out = path.join(op.scratch, 'cli');
    const result = await runCli(
      [
        ...['run', 'podcast-clip', '--input', `episode=${episode()}`, '--input', 'start=2', '--input', 'end=00:16'],
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
    const fields = { episode: op.local('episode.mp4'), start: '2', end: '16' };
    const res = await op.server.post('/pipelines/podcast-clip/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outputs = res.body.outputs as unknown as { clip: string; cover: string[] };
    assert.ok(Math.abs(durationOf(await probe(op.server.pathOf(outputs.clip))) - (14 - REMOVED)) <= 0.15);
    assert.equal(outputs.cover.length, 1);

    const backwards = await op.server.post('/pipelines/podcast-clip/', { ...fields, start: '10', end: '5' });
    assert.equal(backwards.status, 400, JSON.stringify(backwards.body));
    assert.match(backwards.body.error!, /^Step 'clip' \(trim-media\) failed: /);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });
});
