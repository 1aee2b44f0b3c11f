import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { audioOf, brightPixels, durationOf, frameRgb, probe, toneDbAt, videoOf } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { assertCancelStopsSpeech, heardSpans, processesMentioning } from './helpers/speech-audio.js';

/**
 * Voice clips in POST /render/: speech made by the real espeak-ng and flite in the job's input stage, heard where its
 * clip is, music ducked under it, captions from its own timings drawn while it speaks; its errors told before the job
 * is queued, with their JSON paths; the synthesis killed on cancel and at the time limit, leaving nothing behind.
 */

const RED = 'red-640x360.jpg';
/** The music's one frequency: well above a voice's fundamental, so that a notch takes it out of what is heard. */
const MUSIC_HZ = 3000;
/** Three sentences, separated by pauses in the speech. */
const TEXT = 'Hello there, my friends. This is the second sentence of the voice. Goodbye now.';
/** A long text for a voice clip (at most 5000 characters): espeak-ng takes seconds over it. */
const LONG = Array.from({ length: 90 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function render(base: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/render/`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, body: (await res.json()) as Json };
}

let server: TestServer;
let files: FileServer;
let scratch: string;

before(async () => {
  await fixtures(RED);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-render-voice-'));
  await execa('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=${MUSIC_HZ}:duration=2:sample_rate=48000`],
    path.join(scratch, 'music.wav'),
  ]);
  files = await startFileServer({ '/music.wav': serveFile(path.join(scratch, 'music.wav'), 'audio/wav') });
  server = await startMediaflow();
});

after(async () => {
  await server?.close();
  await files?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A short: a red picture, a voice from 1.5 s, ducked music under it, and captions of the voice. */
const short = (voice: string) => ({
  output: { width: 320, height: 240, fps: 25 },
  tracks: [
    { clips: [{ type: 'image', src: files.url(`/f/${RED}`), duration: 9 }] },
    { clips: [{ id: 'narrator', type: 'voice', text: TEXT, voice, start: 1.5 }] },
    { clips: [{ type: 'audio', src: files.url('/music.wav'), loop: true, duration: 9, volume: -12, duck: true }] },
    { clips: [{ type: 'captions', from: 'narrator', words_per_line: 3, font_size: 150 }] },
  ],
});

describe('POST /render/ with a voice clip', () => {
  it('answers the speech in the dry run: its length, the voice that spoke, no src', async () => {
    const res = await render(server.base, { dry_run: true, edit: short('flite:slt') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [, voice, , captions] = res.body.timeline.clips;
    assert.deepEqual(
      { ...voice, end: undefined, facts: { ...voice.facts, duration: undefined } },
      {
        ...{ track: 1, index: 0, id: 'narrator', type: 'voice', start: 1.5, end: undefined, src: null },
        facts: { duration: undefined, image: false, audio: { sample_rate: 16000, channels: 1 } },
        voice: 'flite:slt',
      },
    );
    assert.ok(voice.facts.duration > 3 && voice.facts.duration < 8, `${voice.facts.duration} s of speech`);
    assert.equal(voice.end, Math.round((1.5 + voice.facts.duration) * 1000) / 1000);
    assert.deepEqual([captions.start, captions.end], [voice.start, voice.end], 'the captions follow the voice');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('renders it: speech where the clip is, music ducked under it, captions while it speaks', async () => {
    const res = await render(server.base, { edit: short('espeak:en-us') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Video rendered successfully');
    const file = server.pathOf(res.body.output_file);
    const probed = await probe(file);
    assert.ok(Math.abs(durationOf(probed) - 9) < 0.05, `${durationOf(probed)} s`);
    assert.equal(videoOf(probed)?.width, 320);
    assert.equal(audioOf(probed)?.sample_rate, '48000');

    // The speech, with the music notched out (and the notch's first milliseconds, as it settles): three sentences,
    // the first heard from the clip's start.
    const notched = await heardSpans(file, -45, 0.25, `bandreject=f=${MUSIC_HZ}:width_type=h:w=300`);
    const spans = notched.spans.filter((span) => span.end > 0.05);
    assert.equal(spans.length, 3, JSON.stringify(spans));
    assert.ok(Math.abs(spans[0]!.start - 1.5) < 0.1, `speech from ${spans[0]!.start} s`);
    const spoken = { start: spans[0]!.start, end: spans[2]!.end };
    assert.ok(spoken.end < 8, `speech to ${spoken.end} s`);

    // The music: 12 dB down under the voice (at least 6, as mix-audio ducks), back up once it has ended.
    const music = (from: number, to: number) => toneDbAt(file, MUSIC_HZ, from, to - from);
    const alone = await music(0.2, 1.1);
    const under = await music(spoken.start + 0.1, spoken.end - 0.1);
    assert.ok(alone - under >= 6 && Math.abs(alone - under - 12) < 1, `down ${alone - under} dB under the voice`);
    assert.ok(Math.abs((await music(spoken.end + 0.8, 8.9)) - alone) < 0.5, 'back up after it');

    // A caption from where each sentence is heard, none in the pauses between them, before or after the voice.
    const caption = async (time: number) => brightPixels(await frameRgb(file, time), 0, 0, 320, 240, 200);
    for (const [i, span] of spans.entries())
      assert.ok((await caption(span.start + 0.2)) > 30, `a caption at ${span.start + 0.2} s (sentence ${i + 1})`);
    for (const [i, span] of spans.slice(1).entries()) {
      const pause = (spans[i]!.end + span.start) / 2;
      assert.equal(await caption(pause), 0, `no caption at ${pause} s, in a pause`);
    }
    assert.equal(await caption(1), 0, 'none before the voice');
    assert.equal(await caption(spoken.end + 0.3), 0, 'none after it');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('refuses unknown voices and texts without words at their paths, before a job is queued', async () => {
    const edit = {
      tracks: [
        {
          clips: [
            { type: 'voice', text: 'Hello.', voice: 'espeak:en-uss' },
            { type: 'voice', text: 'Hello.', voice: 'flite:nobody' },
          ],
        },
      ],
    };
    const res = await render(server.base, { edit }, { prefer: 'respond-async' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.job_id, undefined);
    assert.deepEqual(
      res.body.errors.map((problem: Json) => problem.path),
      ['tracks[0].clips[0].voice', 'tracks[0].clips[1].voice'],
    );
    assert.match(res.body.errors[0].error, /^unknown voice 'espeak:en-uss': did you mean espeak:en-us\?/);
    assert.match(res.body.error, /^tracks\[0\]\.clips\[0\]\.voice: unknown voice/);

    for (const [text, error] of [
      ['', 'expected text, got none'],
      ['... — !', 'has no words to speak (no letter or digit)'],
    ]) {
      const empty = await render(server.base, { edit: { tracks: [{ clips: [{ type: 'voice', text }] }] } });
      assert.equal(empty.status, 400, JSON.stringify(empty.body));
      assert.deepEqual(empty.body.errors, [{ path: 'tracks[0].clips[0].text', error }]);
    }
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('kills the synthesis when its job is cancelled, leaving no program and no file behind', async () => {
    const edit = { tracks: [{ clips: [{ type: 'voice', text: LONG, voice: 'espeak:en-us' }] }] };
    await assertCancelStopsSpeech(server, '/render/', { edit: JSON.stringify(edit) });
  });
});

describe('POST /render/ voice clips past the limits', () => {
  let limited: TestServer;
  before(async () => {
    limited = await startMediaflow({ MEDIAFLOW_MAX_TEXT_BYTES: '6000', MEDIAFLOW_JOB_TIMEOUT: '1s' });
  });
  after(() => limited?.close());

  it('answers 413 for voice texts past MEDIAFLOW_MAX_TEXT_BYTES together, naming the one that passes it', async () => {
    const text = 'é'.repeat(1600);
    const res = await render(limited.base, {
      edit: {
        tracks: [
          {
            clips: [
              { type: 'voice', text },
              { type: 'voice', text: `${text}.` },
            ],
          },
        ],
      },
    });
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.match(
      res.body.error,
      /^`tracks\[0\]\.clips\[1\]\.text` takes the text to speak past the limit of 6000 bytes of UTF-8/,
    );
  });

  it('answers 504 past MEDIAFLOW_JOB_TIMEOUT, stopping the synthesis and leaving nothing behind', async () => {
    const res = await render(limited.base, {
      edit: { tracks: [{ clips: [{ type: 'voice', text: LONG, voice: 'espeak:en-us' }] }] },
    });
    assert.equal(res.status, 504, JSON.stringify(res.body));
    assert.match(res.body.error, /time limit/);
    assert.deepEqual(await processesMentioning(limited.dataDir), []);
    assert.deepEqual(await limited.workLeftovers(), []);
    assert.deepEqual(await readdir(path.join(limited.dataDir, 'uploads')), []);
  });
});

describe('mediaflow render with a voice clip', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-render-voice-cli-'));
    await writeFile(
      path.join(dir, 'edit.json'),
      JSON.stringify({ tracks: [{ clips: [{ type: 'voice', text: 'Hello.', voice: 'piper:amy' }] }] }),
    );
  });
  after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it('says what to install for a neural voice where sherpa-onnx is missing', async () => {
    const { exitCode, stderr } = await runCli(['render', 'edit.json', '--dry-run'], {
      cwd: dir,
      env: {
        NODE_OPTIONS: `--require ${path.resolve(import.meta.dirname, 'helpers/hide-packages.cjs')}`,
        HIDE_PACKAGES: 'sherpa-onnx-node',
        // A model configured (never read: the missing runtime is told first).
        MEDIAFLOW_TTS_MODELS: `piper:amy=${path.join(dir, 'amy.onnx')}`,
      },
    });
    assert.equal(exitCode, 1, stderr);
    assert.match(stderr, /Piper voices are not available on this server: sherpa-onnx is not installed \(npm install/);
  });
});
