/**
 * `npm run bench:startup`: what starting the CLI costs (docs/performance.md, "Start-up"), in CPU time above bare
 * node. Three commands take turns, BENCH_RUNS rounds (default 21) after one untimed round:
 * - the reference, `node -e 0`;
 * - `mediaflow --version`, as a user runs it (bin/mediaflow.js on the built dist/, which the npm script builds
 *   first): the plugin registry, the program with a subcommand per operation, and its two probes, `ffmpeg -version`
 *   and `ffprobe -version`;
 * - a metadata read of a local 2 s MP4 (`mediaflow media-metadata --media-url <file>`): the registry, the engine
 *   and the reading of the file's headers.
 * CPU time is user plus system time of the command and of the programs it waited for (the probes), from /proc, so
 * Linux only, in clock ticks (10 ms). Each figure is the median of the rounds; "above node" is the median of each
 * round's difference to that round's `node -e 0`, so that a change in the machine's load weighs on both. Wall time is
 * printed too, though on a shared machine it says little. Targets: `--version` within 250 ms above node, the
 * metadata read within 300 ms. The table is printed and written as JSON to bench/results/. BENCH_BIN names another
 * checkout's bin/mediaflow.js (built) to measure instead, an earlier commit's, say.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { childrenSeconds, TICKS } from './cpu.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const BIN = path.resolve(process.env.BENCH_BIN ?? path.join(import.meta.dirname, '../bin/mediaflow.js'));

interface Case {
  command: string;
  /** node's arguments, given the scratch folder and the local clip. */
  argv: (dir: string, clip: string) => string[];
  /** CPU time above `node -e 0` at most, in ms. */
  goalMs?: number;
}

const REFERENCE: Case = { command: 'node -e 0', argv: () => ['-e', '0'] };
const CASES: Case[] = [
  { command: 'mediaflow --version', argv: () => [BIN, '--version'], goalMs: 250 },
  {
    command: 'mediaflow media-metadata --media-url <local 2 s MP4>',
    argv: (dir, clip) => [BIN, 'media-metadata', '--media-url', clip, '--out-dir', dir],
    goalMs: 300,
  },
];

interface Timing {
  /** CPU time, ms. */
  cpu: number;
  /** Wall time, ms. */
  wall: number;
}

/** One run of node with `argv` (a failure stops the bench), timed. */
async function timed(argv: string[], env: Record<string, string>): Promise<Timing> {
  const cpuBefore = await childrenSeconds();
  const started = performance.now();
  await execa(process.execPath, argv, { env });
  const wall = performance.now() - started;
  return { cpu: ((await childrenSeconds()) - cpuBefore) * 1000, wall };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const rounded = (ms: number) => Math.round(ms);

async function main() {
  if (!TICKS) throw new Error('bench:startup reads CPU times from /proc: it runs on Linux only');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bench-startup-'));
  // The CLI's work and cache folders go here too, not to the shared <tmp>/mediaflow.
  const env = { MEDIAFLOW_DATA_DIR: dir };
  const rows = [];
  try {
    const clip = path.join(dir, 'clip.mp4');
    await execa('ffmpeg', [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error'],
      ...['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=2'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'],
      ...['-pix_fmt', 'yuv420p', '-shortest', clip],
    ]);
    const all = [REFERENCE, ...CASES];
    const times: Timing[][] = all.map(() => []);
    for (let round = -1; round < RUNS; round++) {
      for (const [i, c] of all.entries()) {
        const timing = await timed(c.argv(dir, clip), env);
        if (round >= 0) times[i]!.push(timing);
      }
    }
    const [reference, ...cases] = times as [Timing[], ...Timing[][]];
    const referenceCpu = median(reference.map((t) => t.cpu));
    console.log(
      `${REFERENCE.command.padEnd(56)} CPU ${rounded(referenceCpu)} ms ` +
        `(wall ${rounded(median(reference.map((t) => t.wall)))} ms)`,
    );
    rows.push({
      command: REFERENCE.command,
      cpuMs: rounded(referenceCpu),
      wallMs: rounded(median(reference.map((t) => t.wall))),
    });
    for (const [i, c] of CASES.entries()) {
      const runs = cases[i]!;
      const cpuMs = rounded(median(runs.map((t) => t.cpu)));
      const aboveNodeMs = rounded(median(runs.map((t, round) => t.cpu - reference[round]!.cpu)));
      const wallMs = rounded(median(runs.map((t) => t.wall)));
      const met = aboveNodeMs <= c.goalMs!;
      rows.push({ command: c.command, cpuMs, aboveNodeMs, wallMs, goalMs: c.goalMs, met });
      console.log(
        `${c.command.padEnd(56)} CPU ${cpuMs} ms, ${aboveNodeMs} ms above node: ` +
          `${met ? 'met  ' : 'SHORT'} (<= ${c.goalMs}) (wall ${wallMs} ms)`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const results = path.resolve(import.meta.dirname, 'results');
  await mkdir(results, { recursive: true });
  const date = new Date().toISOString();
  const file = path.join(results, `startup-${date.replace(/[:.]/g, '-')}.json`);
  const result = {
    date,
    bin: BIN,
    runs: RUNS,
    cpus: os.cpus().length,
    node: process.version,
    tickMs: 1000 / TICKS,
    rows,
  };
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwritten: ${file}`);
}

await main();
