import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import {
  bindingMissing,
  HELLO_SCRIPT,
  writeRandomModel,
  writeScriptedModel,
  whisperCases,
} from './helpers/whisper-model.js';

/** The recogniser's child process, run from source as the engine will run its compiled twin. */
const CHILD = path.resolve(import.meta.dirname, '../src/engine/speech/whisper-child.ts');

const SCRIPT = HELLO_SCRIPT;
/** Preloaded, hides whisper.cpp's bindings (HIDE_WHISPER_BINDINGS: both unless it names one). */
const HIDE = path.resolve(import.meta.dirname, 'helpers/hide-whisper-binding.cjs');

interface Recognised {
  language: string;
  segments: Array<{ start: number; end: number; text: string }>;
  /** The progress lines before the answer: one per 30 s window whisper.cpp starts, then 100. */
  progress: number[];
}

/**
 * The child on a model and a WAV, as a running process: with @fugood's binding unless the flags name another
 * (`--binding napi`): @napi-rs/whisper's whisper.cpp (1.7.2) runs the scripted model differently, as its cases show.
 */
const child = (model: string, audio: string, ...flags: string[]) =>
  execa(
    process.execPath,
    ['--import', 'tsx', CHILD, '--model', model, '--audio', audio, '--binding', 'fugood', ...flags],
    { reject: false, env: { HIDE_WHISPER_BINDINGS: '' } },
  );

/** Runs the child to its end; its last stdout line is the answer. */
async function recognise(model: string, audio: string, ...flags: string[]): Promise<Recognised> {
  const run = await child(model, audio, ...flags);
  assert.equal(run.exitCode, 0, run.stderr.split('\n').slice(-3).join('\n'));
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const answer = lines.pop();
  return { ...answer, progress: lines.map((line: { progress: number }) => line.progress) };
}

/** Segments as [start ms, end ms, text], to compare whole lists at a glance. */
const rows = (result: Recognised) => result.segments.map((s) => [s.start, s.end, s.text]);

describe('generated whisper models on the real whisper.cpp, in a child process', () => {
  const { missing, skipped } = whisperCases('whisper model');
  let dir: string;
  const wav = (name: string) => path.join(dir, `${name}.wav`);
  const scripted = () => path.join(dir, 'scripted.bin');
  const random = () => path.join(dir, 'random-tiny-en.bin');

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-whisper-'));
    if (missing) return;
    await writeScriptedModel(scripted(), { segments: SCRIPT });
    await writeRandomModel(random(), { seed: 1 });
    // 16 kHz mono, as the recogniser will be given: a tone, since the scripted model hears nothing anyway.
    for (const seconds of [2, 8, 61, 65]) {
      await execa('ffmpeg', [
        ...['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}:sample_rate=16000`],
        ...['-ac', '1', '-c:a', 'pcm_s16le', wav(`tone-${seconds}s`)],
      ]);
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the scripted model replays its script with its segment times', async (context) => {
    if (skipped(context)) return;
    const result = await recognise(scripted(), wav('tone-8s'));
    assert.equal(result.language, 'en');
    assert.deepEqual(rows(result), [
      [0, 2000, ' Hello world.'],
      [2500, 5000, ' This is mediaflow.'],
    ]);
  });

  it('the script comes again in each 30 s window of a 65 s input', async (context) => {
    if (skipped(context)) return;
    const result = await recognise(scripted(), wav('tone-65s'));
    assert.deepEqual(rows(result), [
      [0, 2000, ' Hello world.'],
      [2500, 5000, ' This is mediaflow.'],
      [30000, 32000, ' Hello world.'],
      [32500, 35000, ' This is mediaflow.'],
      [60000, 62000, ' Hello world.'],
      [62500, 65000, ' This is mediaflow.'],
    ]);
    // Three windows started (0, 30 and 60 s: 0, 46 and 92 %), then the end.
    assert.deepEqual(result.progress, [0, 46, 92, 100]);
  });

  it('a segment can end past the input: 60-62 s on a 61 s input', async (context) => {
    if (skipped(context)) return;
    // whisper.cpp stops the last window at its first timestamp within 0.1 s of the end, or past it.
    const result = await recognise(scripted(), wav('tone-61s'));
    assert.deepEqual(rows(result).slice(4), [[60000, 62000, ' Hello world.']]);
  });

  it('--words gives each word its scripted start, the first token <|0.00|> as an empty segment', async (context) => {
    if (skipped(context)) return;
    const result = await recognise(scripted(), wav('tone-8s'), '--words');
    assert.deepEqual(rows(result), [
      [0, 0, ''],
      [0, 1000, ' Hello'],
      [1000, 2000, ' world.'],
      [2500, 3340, ' This'],
      [3340, 4160, ' is'],
      [4160, 5000, ' mediaflow.'],
    ]);
  });

  it('a multilingual scripted model: language auto finds its language, a given one is kept', async (context) => {
    if (skipped(context)) return;
    const model = path.join(dir, 'multilingual.bin');
    // Index 2 of whisper.cpp's languages is German.
    await writeScriptedModel(model, { multilingual: true, language: 2, segments: [SCRIPT[0]!] });
    const detected = await recognise(model, wav('tone-8s'), '--language', 'auto');
    assert.equal(detected.language, 'de');
    assert.deepEqual(rows(detected), [[0, 2000, ' Hello world.']]);
    assert.equal((await recognise(model, wav('tone-8s'), '--language', 'fr')).language, 'fr');
  });

  it('a file that is not a model: exit 1, whisper.cpp saying why on stderr', async (context) => {
    if (skipped(context)) return;
    const run = await child(wav('tone-8s'), wav('tone-8s'));
    assert.equal(run.exitCode, 1);
    assert.match(run.stderr, /invalid model data \(bad magic\)/);
    assert.equal(run.stdout, '');
  });

  const slow = { timeout: 300_000 } as never;

  it(
    'a long recognition ends at once when its process is killed, as cancel and time limits will',
    slow,
    async (context) => {
      if (skipped(context)) return;
      const running = child(random(), wav('tone-65s'));
      // The first progress line: the model is loaded and whisper.cpp is in its first window.
      await new Promise((resolve) => running.stdout.once('data', resolve));
      const killed = performance.now();
      running.kill('SIGTERM');
      assert.equal((await running).signal, 'SIGTERM');
      const took = performance.now() - killed;
      assert.ok(took < 2000, `ended ${Math.round(took)} ms after the kill`);
    },
  );

  // 2 s of audio: whisper.cpp encodes a whole 30 s window whatever it holds, and random weights decode tokens up to the
  // window's end, which took 36 s of CPU for 30 s of audio against 14 s for 2 s (docs/performance.md, "The test
  // suite"). bench:transcribe times real-size models.
  it('a random-weight model of tiny.en dimensions runs (and says how long a window takes)', slow, async (context) => {
    if (skipped(context)) return;
    const started = performance.now();
    const result = await recognise(random(), wav('tone-2s'), '--no-fallback', '--threads', '2');
    const seconds = (performance.now() - started) / 1000;
    assert.ok(result.segments.length > 0, 'random weights still decode some tokens');
    const windows = result.progress.filter((progress) => progress < 100).length;
    console.log(`random tiny.en model: ${seconds.toFixed(1)} s for 2 s of audio, ${windows} window(s)`);
  });
});

describe('@napi-rs/whisper (--binding napi): the AVX2 build, in the same child', () => {
  const missing = bindingMissing('napi');
  if (missing) console.warn(`skipping the @napi-rs/whisper cases: ${missing}`);
  const skipped = (context: unknown) => {
    if (missing) (context as { skip?: (why: string) => void }).skip?.(missing);
    return missing !== undefined;
  };
  const NAPI = ['--binding', 'napi'];
  let dir: string;
  const wav = (name: string) => path.join(dir, `${name}.wav`);
  const scripted = () => path.join(dir, 'scripted.bin');

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-whisper-napi-'));
    if (missing) return;
    await writeScriptedModel(scripted(), { segments: SCRIPT });
    await execa('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=8:sample_rate=16000'],
      ...['-ac', '1', '-c:a', 'pcm_s16le', wav('tone-8s')],
    ]);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // whisper.cpp 1.7.2, against @fugood's later one: a segment after a pause starts where the one before ended
  // (" This" at 2000 ms, not 2500: it takes the first of the two timestamps between them), and a window that ends on
  // one timestamp (the script's <|5.00|>) is followed by one from there, not from its end, so the script comes again
  // every 5 s (up to the end of a longer input). No progress while it runs: 0 before, 100 after.
  it('the scripted model: its text and segment times, no progress until the end', async (context) => {
    if (skipped(context)) return;
    const result = await recognise(scripted(), wav('tone-8s'), ...NAPI);
    assert.equal(result.language, 'en');
    assert.deepEqual(rows(result), [
      [0, 2000, ' Hello world.'],
      [2000, 5000, ' This is mediaflow.'],
      [5000, 7000, ' Hello world.'],
    ]);
    assert.deepEqual(result.progress, [0, 100]);
  });

  it('--words: the same word times as @fugood but where a segment starts after a pause', async (context) => {
    if (skipped(context)) return;
    const result = await recognise(scripted(), wav('tone-8s'), '--words', ...NAPI);
    assert.deepEqual(rows(result), [
      [0, 0, ''],
      [0, 1000, ' Hello'],
      [1000, 2000, ' world.'],
      [2000, 3340, ' This'],
      [3340, 4160, ' is'],
      [4160, 5000, ' mediaflow.'],
      [5000, 5000, ''],
      [5000, 6000, ' Hello'],
      [6000, 7000, ' world.'],
    ]);
  });

  it('a multilingual scripted model: language auto finds its language, a given one is kept', async (context) => {
    if (skipped(context)) return;
    const model = path.join(dir, 'multilingual.bin');
    await writeScriptedModel(model, { multilingual: true, language: 2, segments: [SCRIPT[0]!] });
    const detected = await recognise(model, wav('tone-8s'), '--language', 'auto', ...NAPI);
    assert.equal(detected.language, 'de');
    assert.deepEqual(rows(detected)[0], [0, 2000, ' Hello world.']);
    assert.equal((await recognise(model, wav('tone-8s'), '--language', 'fr', ...NAPI)).language, 'fr');
  });

  it('fails clearly: not a model, --no-fallback, the package missing (exit 3)', async (context) => {
    if (skipped(context)) return;
    let run = await child(wav('tone-8s'), wav('tone-8s'), ...NAPI);
    assert.equal(run.exitCode, 1);
    assert.match(run.stderr, /Failed to initialize Whisper model/);
    run = await child(scripted(), wav('tone-8s'), '--no-fallback', ...NAPI);
    assert.equal(run.exitCode, 1);
    assert.equal(run.stderr, '@napi-rs/whisper@0.0.4 cannot turn off the temperature fallback');
    assert.equal(run.stdout, '');
    run = await execa(
      process.execPath,
      ['--require', HIDE, '--import', 'tsx', CHILD, '--model', scripted(), '--audio', wav('tone-8s'), ...NAPI],
      { reject: false },
    );
    assert.equal(run.exitCode, 3);
    assert.equal(run.stderr, "whisper.cpp's binding is not installed (npm install @napi-rs/whisper@0.0.4)");
    // auto falls back to @fugood where @napi-rs is not installed.
    run = await execa(
      process.execPath,
      ['--require', HIDE, '--import', 'tsx', CHILD, '--model', scripted(), '--audio', wav('tone-8s')],
      { reject: false, env: { HIDE_WHISPER_BINDINGS: 'napi' } },
    );
    assert.equal(run.exitCode, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim().split('\n').at(-1)!).segments[1], {
      start: 2500,
      end: 5000,
      text: ' This is mediaflow.',
    });
  });
});
