/**
 * One voice of `npm run bench:speak` (bench/speak.ts), measured in a process of its own, so that the CPU time it
 * reads is its own and its children's (/proc/self/stat counts every thread, and the children once they are waited
 * for: ffmpeg, espeak-ng, the engines' Node children):
 *
 *   node --import tsx bench/speak-child.ts --voice <id> --runs <n> --text <file> --work <dir>
 *
 * The settings come from the environment (MEDIAFLOW_TTS_MODELS, MEDIAFLOW_CONCURRENCY, ...). The text is spoken by
 * the voice layer as a job runs it, Voices.synthesise from dist/ (so its children are the production ones), once to
 * warm up (a Piper voice's copy with sherpa-onnx's metadata is made then) and then `runs` times, one at a time,
 * each after waiting (at most 30 s) for a second in which other processes use less than MAX_OTHER_CORES. Then the
 * engine alone speaks the same text in one piece, as many times, as the reference: flite in one ffmpeg run,
 * espeak-ng in one command, sherpa-onnx in this process (its model loaded once, apart). Prints one JSON line.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { processSeconds } from './cpu.js';
import { idleMachine, machineSeconds } from './jobs-kit.js';

/** Cores other processes may use during a run for the machine to count as quiet. */
const MAX_OTHER_CORES = 0.3;
const DIST = path.resolve(import.meta.dirname, '../dist/engine');

type VoicesModule = typeof import('../src/engine/voice/voices.js');
type ConfigModule = typeof import('../src/engine/config.js');
type NeuralModule = typeof import('../src/engine/voice/neural-engine.js');

/** What one measured piece of work took: wall and CPU time, and how busy the rest of the machine was. */
export interface Measured {
  /** Seconds of speech it made. */
  speech: number;
  ms: number;
  cpuMs: number;
  /** Cores the machine's other processes used meanwhile (its busy time less this process tree's). */
  otherCores: number;
  /** The load average (1 minute) at its end. */
  load: number;
}

export interface ChildReport {
  voice: string;
  /** Where its word times came from: `engine` when espeak-ng spoke through its library. */
  wordTimes: string;
  runs: Measured[];
  alone: Alone;
}

/** The engine alone on the same text, as many times; for sherpa-onnx, with its model's loading apart. */
export interface Alone {
  how: string;
  runs: Measured[];
  load?: Measured;
}

/** Measures `work`, which answers the seconds of speech it made. */
async function measure(work: () => Promise<number>): Promise<Measured> {
  const [machine, cpu, started] = [await machineSeconds(), await processSeconds('self'), performance.now()];
  const speech = await work();
  const ms = performance.now() - started;
  const cpuSeconds = (await processSeconds('self')) - cpu;
  const otherCores = Math.max(0, ((await machineSeconds()) - machine - cpuSeconds) / (ms / 1000));
  return { speech, ms: Math.round(ms), cpuMs: Math.round(cpuSeconds * 1000), otherCores, load: os.loadavg()[0]! };
}

/** Measures `work` `runs` times, one at a time, each after waiting (at most 30 s) for a quiet second. */
async function repeat(runs: number, work: () => Promise<number>): Promise<Measured[]> {
  const measured: Measured[] = [];
  for (let run = 0; run < runs; run++) {
    await idleMachine(MAX_OTHER_CORES);
    measured.push(await measure(work));
  }
  return measured;
}

interface OfflineTts {
  generate(request: { text: string; sid: number; speed: number }): { samples: Float32Array; sampleRate: number };
}

/** sherpa-onnx in this process, as sherpa-child.js configures it: loaded, then speaking the whole text `runs` times. */
async function sherpaAlone(
  voices: InstanceType<VoicesModule['Voices']>,
  text: string,
  threads: number,
  runs: number,
): Promise<Alone> {
  const ready = await voices.store.present(voices.models[0]!);
  if (!ready) throw new Error('the Piper voice was not prepared by the warm-up run');
  const sherpa = createRequire(import.meta.url)('sherpa-onnx-node') as {
    OfflineTts: new (config: unknown) => OfflineTts;
  };
  let tts: OfflineTts | undefined;
  await idleMachine(MAX_OTHER_CORES);
  const load = await measure(async () => {
    tts = new sherpa.OfflineTts({
      model: { ...ready.sherpa, numThreads: threads, provider: 'cpu', debug: false },
      maxNumSentences: 1,
    });
    return 0;
  });
  const measured = await repeat(runs, async () => {
    const audio = tts!.generate({ text, sid: 0, speed: 1 });
    return audio.samples.length / audio.sampleRate;
  });
  return { how: 'sherpa-onnx in process, model loaded', runs: measured, load };
}

/** A command that speaks the whole text into `out`, `runs` times (its length read after, unmeasured). */
async function commandAlone(how: string, file: string, args: string[], out: string, runs: number): Promise<Alone> {
  const measured = await repeat(runs, async () => {
    await execa(file, args);
    return 0;
  });
  const probe = ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', out];
  const speech = Number((await execa('ffprobe', probe)).stdout);
  return { how, runs: measured.map((run) => ({ ...run, speech })) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      voice: { type: 'string' },
      runs: { type: 'string' },
      text: { type: 'string' },
      work: { type: 'string' },
    },
  });
  const [voice, textFile, work] = [values.voice!, values.text!, values.work!];
  const text = await readFile(textFile, 'utf8');
  const { Voices } = (await import(path.join(DIST, 'voice/voices.js'))) as VoicesModule;
  const { loadConfig } = (await import(path.join(DIST, 'config.js'))) as ConfigModule;
  const { threadsPerSynthesis } = (await import(path.join(DIST, 'voice/neural-engine.js'))) as NeuralModule;
  const settings = loadConfig(process.env);
  const voices = new Voices({ settings, ffmpeg: 'ffmpeg' });

  let wordTimes = '';
  const speak = async () => {
    const dir = await mkdtemp(path.join(work, 'run-'));
    try {
      const speech = await voices.synthesise({ text, voice }, 'speech.wav', {
        dir,
        signal: AbortSignal.timeout(settings.jobTimeoutMs),
      });
      wordTimes = speech.wordTimes;
      return speech.duration;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  await speak();
  const runs = Number(values.runs);
  const measured = await repeat(runs, speak);

  const out = path.join(work, 'alone.wav');
  const [engine, name] = voice.split(':') as [string, string];
  const flite = ['-v', 'error', '-y', '-f', 'lavfi', '-i', `flite=textfile=${textFile}:voice=${name}`];
  const alone =
    engine === 'piper'
      ? await sherpaAlone(voices, text, threadsPerSynthesis(settings.concurrency), runs)
      : engine === 'flite'
        ? await commandAlone('one ffmpeg run', 'ffmpeg', [...flite, '-c:a', 'pcm_s16le', out], out, runs)
        : await commandAlone('one espeak-ng command', 'espeak-ng', ['-v', name, '-w', out, '-f', textFile], out, runs);
  const report: ChildReport = { voice, wordTimes, runs: measured, alone };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  // sherpa-onnx keeps native threads after its answer.
  process.exit(0);
}

await main();
