import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { beepAt, probe, videoPacketHashes } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { beepingTone, countingClip, flashStart, frameRuns, shownFrames } from './helpers/timed-media.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';
const FRAME = 1 / 25;

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);

interface SplitAnswer {
  message: string;
  output_file: string;
  output_files: string[];
  starts: number[];
}

/** Whether ffmpeg decodes the whole file without a single error. */
async function decodesCleanly(file: string): Promise<void> {
  const { stderr } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
  assert.equal(stderr, '', `${file} decodes with errors`);
}

describe('split-media', () => {
  let files: FileServer;
  let server: TestServer;
  let scratch: string;
  /** 10 s at 25 fps, a keyframe every 2 s, two B-frames; flash and beep at 6.4 s. */
  let sparse: string;
  /** 10 s at 25 fps, a keyframe every second; flash and beep at 6 s. */
  let dense: string;
  /** 5 s of a 440 Hz tone with a beep at 3 s, as MP3. */
  let tone: string;
  /** 12 s of it, as WAV. */
  let long: string;

  before(async () => {
    await fixtures('small-300x200.png');
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-split-'));
    sparse = path.join(scratch, 'sparse.mp4');
    dense = path.join(scratch, 'dense.mp4');
    tone = path.join(scratch, 'tone.mp3');
    await countingClip(sparse, { seconds: 10, gop: 50, bframes: 2, flashAt: 6.4 });
    await countingClip(dense, { seconds: 10, gop: 25, flashAt: 6 });
    long = path.join(scratch, 'long.wav');
    await beepingTone(tone, 5, 3);
    await beepingTone(long, 12, 3);
    files = await startFileServer({
      '/local/sparse.mp4': serveFile(sparse, 'video/mp4'),
      '/local/dense.mp4': serveFile(dense, 'video/mp4'),
      '/local/tone.mp3': serveFile(tone, 'audio/mpeg'),
      '/local/long.wav': serveFile(long, 'audio/wav'),
    });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const split = async (fields: Record<string, string>, ext: string) => {
    const res = await server.post('/split-media/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const body = res.body as unknown as SplitAnswer;
    assert.equal(body.message, 'Media split successfully');
    body.output_files.forEach((url, i) =>
      assert.match(url, new RegExp(`^${server.base}/uploads/${UUID}/part_${String(i + 1).padStart(3, '0')}\\.${ext}$`)),
    );
    assert.equal(body.output_file, body.output_files[0]);
    return { ...body, parts: body.output_files.map((url) => server.pathOf(url)) };
  };

  it('copies parts that start on the keyframe at or after each time, and answers where they start', async () => {
    const { parts, starts } = await split({ media_url: files.url('/local/sparse.mp4'), every: '2.5' }, 'mp4');
    // Asked: 2.5, 5 and 7.5 s; the keyframes are every 2 s.
    assert.deepEqual(starts, [0, 4, 6, 8]);
    const runs = [];
    for (const part of parts) {
      const frames = await shownFrames(part);
      assert.equal(frames[0]!.time, 0, `${part} starts at 0`);
      runs.push(frameRuns(frames));
      await decodesCleanly(part);
    }
    assert.deepEqual(runs, [[[0, 99]], [[100, 149]], [[150, 199]], [[200, 249]]]);
    // Copies: the parts' packets, one after another, are the input's.
    const packets = (await Promise.all(parts.map((part) => videoPacketHashes(part)))).flat();
    assert.deepEqual(packets, await videoPacketHashes(sparse));
    // The flash at 6.4 s is 0.4 s into the part that starts at 6 s, with its beep.
    const flash = flashStart(await shownFrames(parts[2]!));
    close(flash, 0.4, 0.001, 'flash');
    close(await beepAt(parts[2]!), flash, FRAME, 'beep against the flash');
  });

  it('re-encodes with mode=precise so that each part starts at the first frame at or after its time', async () => {
    const { parts, starts } = await split(
      { media_url: files.url('/local/sparse.mp4'), every: '2.5', mode: 'precise' },
      'mp4',
    );
    // 2.5 s is within frame 62 (2.48 to 2.52): the part starts with frame 63.
    assert.deepEqual(starts, [0, 2.52, 5, 7.52]);
    const runs = [];
    for (const part of parts) runs.push(frameRuns(await shownFrames(part)));
    assert.deepEqual(runs, [[[0, 62]], [[63, 124]], [[125, 187]], [[188, 249]]]);
    const flash = flashStart(await shownFrames(parts[2]!));
    close(flash, 6.4 - 5, 0.001, 'flash');
    close(await beepAt(parts[2]!), flash, FRAME, 'beep against the flash');
    for (const part of parts) close(Number((await probe(part)).format.duration), 2.5, 0.05, `${part}'s duration`);
  });

  it('splits at the times of `at`, in any order', async () => {
    const { parts, starts } = await split({ media_url: files.url('/local/dense.mp4'), at: '7, 00:00:03' }, 'mp4');
    assert.deepEqual(starts, [0, 3, 7]);
    const runs = [];
    for (const part of parts) runs.push(frameRuns(await shownFrames(part)));
    assert.deepEqual(runs, [[[0, 74]], [[75, 174]], [[175, 249]]]);
  });

  it('splits sound alone in its own container', async () => {
    const { parts, starts } = await split({ media_url: files.url('/local/tone.mp3'), every: '2' }, 'mp3');
    assert.deepEqual(starts, [0, 2, 4]);
    const durations = await Promise.all(parts.map(async (part) => Number((await probe(part)).format.duration)));
    // An MP3 frame is 26 ms: parts begin at the first frame at or after their time, and end on frames.
    durations.forEach((duration, i) => close(duration, i < 2 ? 2 : 1, 0.06, `part ${i + 1}'s duration`));
    close(await beepAt(parts[1]!), 1, 0.03, 'beep');
  });

  it('gives one part, the whole input, when `every` is at or past its length (issue 33)', async () => {
    // The segment muxer cuts every 2 s by default when it is given no time: 10 s came out as a part of 2 s.
    for (const [name, ext, every, mode] of [
      ['sparse.mp4', 'mp4', '10', 'fast'],
      ['sparse.mp4', 'mp4', '60', 'precise'],
      ['tone.mp3', 'mp3', '6', 'fast'],
      ['long.wav', 'wav', '3600', 'fast'],
    ]) {
      const source = path.join(scratch, name!);
      const { parts, starts } = await split(
        { media_url: files.url(`/local/${name}`), every: every!, mode: mode! },
        ext!,
      );
      assert.deepEqual(starts, [0], `${name} every ${every}`);
      assert.equal(parts.length, 1, `${name} every ${every}`);
      const whole = Number((await probe(source)).format.duration);
      close(Number((await probe(parts[0]!)).format.duration), whole, 0.06, `${name} every ${every} (${mode})`);
    }
  });

  it('refuses neither or both of every and at, zero parts, times past the end, parts without keyframes', async () => {
    const before = await readdir(path.join(server.dataDir, 'uploads')).catch(() => []);
    const url = files.url('/local/sparse.mp4');
    const refusals: Array<[Record<string, string>, string]> = [
      [{ media_url: url }, 'Expected `every` (seconds per part) or `at` (times where parts start), got neither'],
      [{ media_url: url, every: '2', at: '3' }, 'Expected `every` or `at`, not both'],
      [{ media_url: url, every: '0' }, 'Expected `every` to be a number from 0.1 to 86400, got `0`'],
      [{ media_url: url, at: '4,12' }, '`at` is 12 s, past the end of the input, which lasts 10 s'],
      [{ media_url: url, at: '0' }, "`at` is 0 s: a part must start after the input's start and before its end, 10 s"],
      [
        { media_url: files.url('/local/long.wav'), every: '0.1' },
        '`every` of 0.1 s makes 120 parts of the input, which lasts 12 s: at most 100',
      ],
      [
        { media_url: url, at: Array.from({ length: 100 }, (_, i) => String(i / 10 + 0.05)).join(',') },
        'Expected `at` to list at most 99 times (100 parts), got 100',
      ],
      [
        { media_url: url, every: '1' },
        '`every` asks for a part at 2 s, which would start on the keyframe at 2 s, as the part before does: ' +
          'with `mode=fast` parts start on keyframes; ask for fewer parts, or for `mode=precise`',
      ],
      [
        { media_url: url, at: '2.49,2.5', mode: 'precise' },
        '`at` asks for a part at 2.5 s, which would start on the frame at 2.52 s, as the part before does: ' +
          'ask for fewer parts',
      ],
      [
        { media_url: url, at: '9.99', mode: 'precise' },
        '`at` asks for a part at 9.99 s, and the input has no frame after it: ask for fewer parts',
      ],
      [
        { media_url: url, at: '9' },
        '`at` asks for a part at 9 s, and the input has no keyframe after it: with `mode=fast` parts start on ' +
          'keyframes; ask for fewer parts, or for `mode=precise`',
      ],
    ];
    for (const [fields, error] of refusals) {
      const res = await server.post('/split-media/', fields);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error, error);
    }
    const picture = await server.post('/split-media/', { media_url: files.url('/f/small-300x200.png'), every: '1' });
    assert.equal(picture.status, 422);
    assert.match(picture.body.error!, /small-300x200\.png is a picture: it has no time to split$/);
    assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')).catch(() => []), before);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const id = await submitJob(
      server.base,
      '/split-media/',
      { media_url: files.url('/local/dense.mp4'), every: '5' },
      { Prefer: 'respond-async' },
    );
    const job = await waitForJob(server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    const result = job.result as unknown as SplitAnswer;
    assert.equal(result.message, 'Media split successfully');
    assert.deepEqual(result.starts, [0, 5]);
    assert.equal(result.output_files.length, 2);
    assert.deepEqual(frameRuns(await shownFrames(server.pathOf(result.output_files[1]!))), [[125, 249]]);
  });

  it('runs from the CLI on a local file', async () => {
    const out = await mkdtemp(path.join(scratch, 'cli-'));
    const result = await runCli(['split-media', '--media-url', dense, '--at', '4', '--out-dir', out]);
    assert.equal(result.exitCode, 0, result.stderr);
    const answer = JSON.parse(result.stdout) as SplitAnswer;
    assert.deepEqual(answer.starts, [0, 4]);
    assert.equal(answer.output_files.length, 2);
    const runs = [];
    for (const file of answer.output_files) {
      assert.ok(path.resolve(file).startsWith(out), `${file} is in --out-dir`);
      runs.push(frameRuns(await shownFrames(file)));
    }
    assert.deepEqual(runs, [[[0, 99]], [[100, 249]]]);
  });

  it('runs in a pipeline, a later step taking each part', async () => {
    const out = await mkdtemp(path.join(scratch, 'pipeline-'));
    const definition = path.join(scratch, 'split-then-cut.yaml');
    await writeFile(
      definition,
      [
        'name: split-then-cut',
        'description: Splits a clip in two, then takes the first second out of each part',
        'inputs:',
        '  clip: url',
        'steps:',
        '  parts:',
        '    op: split-media',
        '    with: { media_url: "{{ inputs.clip }}", at: "5" }',
        '  trimmed:',
        '    op: cut-media',
        '    each: "{{ steps.parts.output }}"',
        '    with: { media_url: "{{ item }}", remove: "0-1" }',
        'results:',
        '  trimmed: "{{ steps.trimmed.output }}"',
        '',
      ].join('\n'),
    );
    const result = await runCli(['run', definition, '--input', `clip=${dense}`, '--out-dir', out]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual((await readdir(out)).sort(), ['trimmed-1.mp4', 'trimmed-2.mp4']);
    assert.deepEqual(frameRuns(await shownFrames(path.join(out, 'trimmed-1.mp4'))), [[25, 124]]);
    assert.deepEqual(frameRuns(await shownFrames(path.join(out, 'trimmed-2.mp4'))), [[150, 249]]);
  });
});
