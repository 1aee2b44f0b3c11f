/**
 * `npm run bench:transcribe`: speech recognition's time per minute of audio, with random-weight models of tiny.en's
 * and base.en's dimensions (BENCH_MODELS=tiny.en to take one; BENCH_BINDINGS=fugood or napi likewise), on 60 s
 * of speech-like noise (16 kHz mono WAV from lavfi), with all the machine's cores:
 *
 * - each binding through mediaflow's child, dist/engine/speech/whisper-child.js, as /transcribe/ runs it (word
 *   times): @fugood's CPU build with no temperature fallback, so every run decodes the same tokens; @napi-rs/whisper
 *   (AVX2 build, a dev dependency: `npm install`) with it, as it cannot turn it off (a random model fails
 *   whisper.cpp's checks at temperature 0 and is decoded again at higher ones: more than real speech costs);
 * - @fugood in this process: the child's cost is the ratio of the two;
 * - @napi-rs/whisper in bench/whisper-napi-child.ts, which decodes each window once (temperature 1, at most 100
 *   tokens): about what a window of real speech costs.
 *
 * Each figure is one run (they take minutes); CPU time (Linux) beside the time, as other work on the machine slows a
 * run down without adding to its CPU time, and the load average. Printed, and written as JSON to bench/results/.
 * Models and audio are generated once into bench/.cache.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { type BindingName, BINDINGS } from '../src/engine/speech/bindings/choice.js';
import { transcribeOptions } from '../src/engine/speech/bindings/fugood.js';
import { BASE_EN, bindingMissing, TINY_EN, writeRandomModel } from '../test/helpers/whisper-model.js';
import { processSeconds, TICKS } from './cpu.js';
import { CACHE } from './fixtures.js';

const DIMS = { 'tiny.en': TINY_EN, 'base.en': BASE_EN };
type ModelName = keyof typeof DIMS;
/** Issue 22's target: tiny.en 4 times faster than real time, so at most 15 s per minute of audio. */
const TARGET_MS = 15_000;
/** Tokens a window may decode with @napi-rs/whisper: about what a 30 s window of real speech holds. */
const NAPI_TOKENS = 100;
const THREADS = os.availableParallelism();
const CHILD = path.resolve(import.meta.dirname, '../dist/engine/speech/whisper-child.js');
const NAPI_CHILD = path.resolve(import.meta.dirname, 'whisper-napi-child.ts');

/** A file of the cache, made by `make` (into a temp name, renamed when whole) unless it is there. */
async function cached(name: string, make: (file: string) => Promise<unknown>): Promise<string> {
  const file = path.join(CACHE, name);
  if (!existsSync(file)) {
    await mkdir(CACHE, { recursive: true });
    await make(`${file}.tmp`);
    await rename(`${file}.tmp`, file);
  }
  return file;
}

/** 60 s of pink noise in the voice band, in syllables and phrases (bench/fixtures.ts' speech), as whisper takes it. */
const speech = (file: string) =>
  execa('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:r=16000:a=0.5:d=60:seed=1', '-af'],
    "highpass=f=200,lowpass=f=3500,volume='2.4*(0.55+0.45*sin(2*PI*4.3*t))*lt(mod(t\\,3.7)\\,3.0)':eval=frame",
    ...['-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', file],
  ]);

interface Run {
  binding: string;
  model: ModelName;
  how: string;
  /** Wall time for the 60 s, model loading (and the child's start) included. */
  ms: number;
  /** Recognition alone, model loaded (@napi-rs's child says). */
  recognitionMs?: number;
  cpuMs: number;
  /** 30 s windows whisper.cpp started (not known for @napi-rs, whose callbacks cannot run during its full()). */
  windows?: number;
  tokens: number;
  load: number;
}

/** Times `work`, with this process's CPU time and its waited children's. */
async function timed<T extends object>(
  work: () => Promise<T>,
): Promise<T & { ms: number; cpuMs: number; load: number }> {
  const cpu = async () => (TICKS ? processSeconds('self') : NaN);
  const [started, before] = [performance.now(), await cpu()];
  const value = await work();
  const ms = Math.round(performance.now() - started);
  return { ...value, ms, cpuMs: Math.round(((await cpu()) - before) * 1000), load: os.loadavg()[0]! };
}

const FLAGS = ['--language', 'en', '--words', '--threads', String(THREADS)];

/**
 * mediaflow's child: {"progress"} lines (@fugood: one per window and one at the end), then one segment per token
 * (@fugood) or word (@napi-rs: a random model's `[12345]` tokens are words of their own).
 */
async function mediaflowChild(binding: BindingName, model: string, audio: string) {
  const flags = [...FLAGS, '--binding', binding, ...(binding === 'fugood' ? ['--no-fallback'] : [])];
  const { stdout } = await execa(process.execPath, [CHILD, '--model', model, '--audio', audio, ...flags]);
  const lines = stdout.split('\n').map((line) => JSON.parse(line) as { progress?: number; segments?: unknown[] });
  return {
    windows: binding === 'fugood' ? lines.filter((line) => line.progress !== undefined).length - 1 : undefined,
    tokens: lines.at(-1)!.segments!.length,
  };
}

type Context = {
  transcribeFile(file: string, options: Record<string, unknown>): { promise: Promise<{ segments: unknown[] }> };
};
type Binding = { WhisperContext: new (options: { filePath: string; useGpu: boolean }) => Context };

/** The same recognition in this process: the options the child gives for FLAGS. */
async function fugoodInProcess(model: string, audio: string) {
  const binding = createRequire(import.meta.url)(BINDINGS.fugood.packages[0]!) as Binding;
  let windows = -1;
  const options = {
    ...transcribeOptions({ language: 'en', words: true, threads: THREADS, noFallback: true }),
    onProgress: () => windows++,
  };
  const context = new binding.WhisperContext({ filePath: model, useGpu: false });
  const result = await context.transcribeFile(audio, options).promise;
  return { windows, tokens: result.segments.length };
}

async function napiChild(model: string, audio: string, maxTokens: number) {
  const args = ['--import', 'tsx', NAPI_CHILD, model, audio, String(THREADS), String(maxTokens)];
  const { stdout } = await execa(process.execPath, args);
  const answer = JSON.parse(stdout) as { ms: number; tokens: number };
  return { recognitionMs: answer.ms, tokens: answer.tokens };
}

async function main() {
  const models = (process.env.BENCH_MODELS ?? 'tiny.en,base.en').split(',') as ModelName[];
  for (const name of models) if (!DIMS[name]) throw new Error(`BENCH_MODELS: ${name} is not one of tiny.en, base.en`);
  const bindings = (process.env.BENCH_BINDINGS ?? 'fugood,napi').split(',');
  const unchosen = (binding: string) => `${binding} is not in BENCH_BINDINGS`;
  const fugoodMissing = bindings.includes('fugood') ? bindingMissing('fugood') : unchosen('@fugood');
  const napiMissing = bindings.includes('napi') ? bindingMissing('napi') : unchosen('@napi-rs/whisper');
  if (!existsSync(CHILD)) throw new Error(`${CHILD} is missing: run npm run build first`);
  for (const missing of [fugoodMissing, napiMissing]) if (missing) console.log(`skipped: ${missing}`);

  const audio = await cached('speech-60s-16k.wav', speech);
  const runs: Run[] = [];
  const ratios: Record<string, { ms: number; cpu: number }> = {};
  const alone = (run: Run) =>
    run.recognitionMs ? `, recognition alone ${(run.recognitionMs / 1000).toFixed(1)} s` : '';
  const windows = (run: Run) => (run.windows === undefined ? '' : `${run.windows} windows, `);
  const results = path.resolve(import.meta.dirname, 'results');
  await mkdir(results, { recursive: true });
  const file = path.join(results, `transcribe-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const skipped = [fugoodMissing, napiMissing].filter(Boolean);
  // Written after every run, as a run takes minutes: a bench stopped half way keeps what it measured.
  const save = () =>
    writeFile(file, `${JSON.stringify({ cpus: THREADS, targetMs: TARGET_MS, runs, ratios, skipped }, null, 2)}\n`);
  const note = async (run: Run) => {
    runs.push(run);
    await save();
    const seconds = (ms: number) => (ms / 1000).toFixed(1);
    console.log(
      `${run.model.padEnd(8)} ${run.binding.padEnd(15)} ${run.how.padEnd(34)} ${seconds(run.ms).padStart(6)} s` +
        ` (CPU ${seconds(run.cpuMs)} s${alone(run)}) ${windows(run)}${run.tokens} tokens, load ${run.load.toFixed(1)}`,
    );
  };
  console.log(`per minute of audio, ${THREADS} threads, ${os.cpus()[0]?.model}; load before: ${os.loadavg()[0]}`);
  for (const name of models) {
    const model = await cached(`random-${name}.bin`, (file) => writeRandomModel(file, { dims: DIMS[name], seed: 1 }));
    if (!fugoodMissing) {
      const child = await timed(() => mediaflowChild('fugood', model, audio));
      await note({
        binding: '@fugood 1.1.3',
        model: name,
        how: 'child (whisper-child.js)',
        ...child,
      });
      const inProcess = await timed(() => fugoodInProcess(model, audio));
      await note({
        binding: '@fugood 1.1.3',
        model: name,
        how: 'in process',
        ...inProcess,
      });
      const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
      ratios[name] = { ms: ratio(child.ms, inProcess.ms), cpu: ratio(child.cpuMs, inProcess.cpuMs) };
      console.log(`${name}: child / in process = ${ratios[name].ms} (CPU ${ratios[name].cpu})`);
    }
    if (!napiMissing) {
      const child = await timed(() => mediaflowChild('napi', model, audio));
      const how = 'child (whisper-child.js)';
      await note({ binding: '@napi-rs 0.0.4', model: name, how, ...child });
      const once = await timed(() => napiChild(model, audio, NAPI_TOKENS));
      const capped = `child, T=1, <= ${NAPI_TOKENS} tokens/window`;
      await note({ binding: '@napi-rs 0.0.4', model: name, how: capped, ...once });
    }
  }
  for (const run of runs.filter((r) => r.model === 'tiny.en')) {
    const verdict = run.ms <= TARGET_MS ? 'meets' : 'misses';
    console.log(`tiny.en, ${run.binding} ${run.how}: ${verdict} the target (<= 15 s per minute of audio)`);
  }
  await save();
  console.log(`written: ${file}`);
  // The binding keeps native handles open after its answer.
  process.exit(0);
}

await main();
