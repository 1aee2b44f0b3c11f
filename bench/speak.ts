/**
 * `npm run bench:speak`: text to speech's cost per minute of speech, engine by engine, at load 1 (one synthesis at a
 * time), through the voice layer as a job runs it (Voices.synthesise, from dist/), on a fixed English text of about a
 * minute (TEXT):
 *
 * - flite (ffmpeg's `flite` filter, voice slt);
 * - espeak-ng through its library (koffi) and through its command line (koffi hidden, as where it is not installed);
 * - a Piper "low" voice of random weights and the real network's dimensions (test/helpers/piper-low-onnx.ts),
 *   generated into a temp folder, spoken by sherpa-onnx in its child with the machine's cores (MEDIAFLOW_CONCURRENCY
 *   1), and again with one thread (MEDIAFLOW_CONCURRENCY 2 on 2 cores): on a busy machine two threads wait on each
 *   other and their CPU time grows, one thread's CPU time is the wall clock a quiet core would take.
 *
 * Each voice runs in a process of its own (bench/speak-child.ts): a warm-up, then BENCH_RUNS runs (3), each after
 * waiting for a quiet second, then the engine alone on the same text as the reference. The speech's own length is
 * the reference for real time: seconds of CPU (user and system, children included) per minute of speech, and how
 * many times faster than real time by the wall clock and by CPU time. Medians, with the load average and the cores
 * other processes used meanwhile: on a shared machine the wall clock slows down, the CPU time much less. Printed,
 * and written as JSON to bench/results/. Targets (issue 36): flite and espeak-ng at least 20 times faster than real
 * time, the Piper low voice at least 5 times on 2 cores.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { packageResolves } from '../src/engine/exec/optional-packages.js';
import { sherpaInstalled } from '../src/engine/voice/neural-engine.js';
import { writeLowVoice } from '../test/helpers/piper-low-onnx.js';
import type { ChildReport, Measured } from './speak-child.js';

/** About a minute of plain English at espeak-ng's 175 words a minute: 158 words in 12 sentences. */
const TEXT =
  'The river town wakes slowly in the autumn. Fishing boats leave the harbour before the sun has cleared the ' +
  'hills, and the market opens at seven. By nine the streets are full of people buying bread, apples and fresh ' +
  'fish. Children walk to school along the canal, counting the ducks that follow them. In the afternoon the wind ' +
  'turns, and clouds come in from the sea. Most days it rains for an hour, then the sky clears again. The old ' +
  'bridge was built more than two hundred years ago. Its stones are worn smooth by the feet of travellers and the ' +
  'wheels of carts. Every summer the town holds a festival on the water, with music, lanterns and a race between ' +
  'the boats. Visitors come from far away to watch it. When the evening comes, the lights of the houses shine on ' +
  'the river. The boats return, the market closes, and the town falls quiet until the morning.';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Cores other processes may have used (median) for a run's wall clock to count. */
const QUIET_CORES = 0.3;
const CHILD = path.resolve(import.meta.dirname, 'speak-child.ts');
const HIDE = path.resolve(import.meta.dirname, '../test/helpers/hide-packages.cjs');
const DIST_VOICES = path.resolve(import.meta.dirname, '../dist/engine/voice/voices.js');

interface Engine {
  name: string;
  voice: string;
  /** Times faster than real time it must speak. */
  target: number;
  /** Why it cannot run here. */
  missing?: string;
  env?: Record<string, string>;
}

interface Row {
  engine: string;
  voice: string;
  wordTimes: string;
  runs: Measured[];
  /** The engine alone on the same text: how, its runs, and their medians (sherpa-onnx's model loading apart). */
  alone: ChildReport['alone'] & { speech: number; ms: number; cpuMs: number };
  /** Medians of the runs. */
  speech: number;
  ms: number;
  cpuMs: number;
  otherCores: number;
  load: number;
  cpuSecondsPerMinute: number;
  realTimeByWall: number;
  realTimeByCpu: number;
  /** The layer's CPU time over the engine's alone on the same text, per second of speech. */
  layerOverAlone: number;
  target: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

async function main() {
  if (!existsSync(DIST_VOICES)) throw new Error(`${DIST_VOICES} is missing: run npm run build first`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bench-speak-'));
  try {
    const textFile = path.join(work, 'text.txt');
    await writeFile(textFile, TEXT);
    const model = path.join(work, 'en_US-random-low.onnx');
    const started = performance.now();
    const parameters = await writeLowVoice(model);
    const generated = {
      parameters,
      bytes: (await stat(model)).size,
      generateMs: Math.round(performance.now() - started),
    };
    const koffi = packageResolves('koffi');
    const sherpa = sherpaInstalled() ? undefined : 'sherpa-onnx-node is not installed (npm install)';
    const engines: Engine[] = [
      { name: 'flite', voice: 'flite:slt', target: 20 },
      {
        name: 'espeak-ng, library',
        voice: 'espeak:en-us',
        target: 20,
        missing: koffi ? undefined : 'koffi is not installed',
      },
      {
        name: 'espeak-ng, command line',
        voice: 'espeak:en-us',
        target: 20,
        env: { NODE_OPTIONS: `--require ${HIDE}`, HIDE_PACKAGES: 'koffi' },
      },
      {
        name: 'Piper low (random weights)',
        voice: 'piper:low',
        target: 5,
        missing: sherpa,
      },
      {
        name: 'Piper low (random weights), 1 thread',
        voice: 'piper:low',
        target: 5,
        missing: sherpa,
        env: { MEDIAFLOW_CONCURRENCY: String(os.availableParallelism()) },
      },
    ];
    const only = process.env.BENCH_ENGINES?.split(',');
    console.log(
      `${os.cpus().length} × ${os.cpus()[0]?.model}; ${RUNS} runs each; load before: ${os.loadavg()[0]}; ` +
        `Piper low model: ${(generated.parameters / 1e6).toFixed(2)} M parameters, ` +
        `${(generated.bytes / 1e6).toFixed(1)} MB, generated in ${(generated.generateMs / 1000).toFixed(1)} s`,
    );
    const rows: Row[] = [];
    const skipped: string[] = [];
    for (const engine of engines) {
      if (only && !only.some((name) => engine.voice.startsWith(name) || engine.name.includes(name))) continue;
      if (engine.missing) {
        skipped.push(`${engine.name}: ${engine.missing}`);
        console.log(`skipped ${engine.name}: ${engine.missing}`);
        continue;
      }
      const dataDir = await mkdtemp(path.join(work, 'data-'));
      const args = ['--voice', engine.voice, '--runs', String(RUNS), '--text', textFile, '--work', dataDir];
      const { stdout } = await execa(process.execPath, ['--import', 'tsx', CHILD, ...args], {
        env: {
          MEDIAFLOW_DATA_DIR: dataDir,
          MEDIAFLOW_TTS_MODELS: `piper:low=${model}`,
          MEDIAFLOW_CONCURRENCY: '1',
          ...engine.env,
        },
      });
      const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildReport;
      const medianOf = (runs: Measured[], key: keyof Measured) => median(runs.map((run) => run[key]));
      const of = (key: keyof Measured) => medianOf(report.runs, key);
      const [speech, ms, cpuMs] = [of('speech'), of('ms'), of('cpuMs')];
      const alone = {
        ...report.alone,
        speech: round(medianOf(report.alone.runs, 'speech')),
        ms: medianOf(report.alone.runs, 'ms'),
        cpuMs: medianOf(report.alone.runs, 'cpuMs'),
      };
      const row: Row = {
        engine: engine.name,
        voice: engine.voice,
        wordTimes: report.wordTimes,
        runs: report.runs,
        alone,
        speech: round(speech),
        ms,
        cpuMs,
        otherCores: round(of('otherCores')),
        load: round(of('load')),
        cpuSecondsPerMinute: round(((cpuMs / 1000) * 60) / speech),
        realTimeByWall: round(speech / (ms / 1000), 1),
        realTimeByCpu: round(speech / (cpuMs / 1000), 1),
        layerOverAlone: round(cpuMs / speech / (alone.cpuMs / alone.speech)),
        target: engine.target,
      };
      rows.push(row);
      const runs = (measured: Measured[]) => measured.map((run) => `${run.cpuMs} ms CPU in ${run.ms} ms`).join(', ');
      const loading = alone.load ? `; its model loaded in ${alone.load.cpuMs} ms CPU, ${alone.load.ms} ms` : '';
      console.log(
        `${row.engine}: ${runs(row.runs)}; alone (${alone.how}): ${runs(alone.runs)} for ${alone.speech} s${loading}`,
      );
    }

    const header = [
      'engine',
      'speech s',
      'wall s',
      'CPU s',
      'CPU s / min',
      '× real time (wall)',
      '× (CPU)',
      'layer ÷ alone (CPU)',
      'others (cores)',
      'load',
    ];
    const table = rows.map((row) => [
      row.engine,
      row.speech.toFixed(1),
      (row.ms / 1000).toFixed(2),
      (row.cpuMs / 1000).toFixed(2),
      row.cpuSecondsPerMinute.toFixed(2),
      row.realTimeByWall.toFixed(1),
      row.realTimeByCpu.toFixed(1),
      row.layerOverAlone.toFixed(2),
      row.otherCores.toFixed(2),
      row.load.toFixed(1),
    ]);
    const widths = header.map((title, i) => Math.max(title.length, ...table.map((cells) => cells[i]!.length)));
    const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i]!)).join('  ');
    console.log(`\nmedians of ${RUNS} runs, ${TEXT.split(/\s+/).length} words:\n${line(header)}`);
    for (const cells of table) console.log(line(cells));
    for (const row of rows) {
      // flite, espeak-ng and the one-thread Piper row speak on one thread, so their CPU time is the time they take on
      // a quiet machine. The Piper voice on all cores: the wall clock says it when the machine was quiet; when it was
      // not, the CPU time, which a quiet machine's wall clock does not exceed.
      const byWall = row.voice.startsWith('piper:') && row.otherCores <= QUIET_CORES;
      const measured = byWall ? row.realTimeByWall : row.realTimeByCpu;
      const verdict = measured >= row.target ? 'meets' : 'misses';
      console.log(
        `${row.engine}: ${measured}× real time (${byWall ? 'wall clock' : 'CPU time'}), ` +
          `${verdict} the target (>= ${row.target}×)`,
      );
    }
    const results = path.resolve(import.meta.dirname, 'results');
    await mkdir(results, { recursive: true });
    const file = path.join(results, `speak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const summary = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      runs: RUNS,
      words: TEXT.split(/\s+/).length,
      piperLow: generated,
      rows,
      skipped,
    };
    await writeFile(file, `${JSON.stringify(summary, null, 2)}\n`);
    console.log(`written: ${file}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
