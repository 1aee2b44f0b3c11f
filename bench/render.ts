/**
 * `npm run bench:render`: the 30 s 1080x1920 short of issue 35 (six photos with zoom and fades, a voice, music
 * ducked under it, ten captions, a logo, a title) made three ways from the same local files (bench/render-ways.ts):
 * rendered from one edit document, made by the chain of six calls, and by one hand-written ffmpeg command with the
 * render's encoder settings (the floor). Targets:
 * - the render takes at most 1.15 times the hand-written command;
 * - the render is at least 1.35 times faster than the chain, in CPU time;
 * - the render's PSNR against a lossless reference of the same edit (the render's own plan, x264 at -qp 0) is at least
 *   2 dB above the chain's;
 * - ffmpeg's peak memory does not grow with the number of pictures: the short with 6 photos (sampled during the timed
 *   runs), and with 60 (half a second each, the same 30 s, one more run).
 * CPU time is the process tree's (this process and the ffmpeg and ffprobe children it waited for, from /proc), which
 * other work on this shared machine inflates far less than the wall time. The set-ups run there and back (render,
 * chain, hand-written, then back: A B C C B A) and each is taken at its mean, as this VM's speed drifts; the load
 * average before each run is recorded. Results are printed and written as JSON to bench/results/.
 *
 * Options (environment), for a shorter run than the default (over an hour on 2 busy cores): RENDER_BENCH_SIZE
 * (1080x1920), RENDER_BENCH_FPS (30), RENDER_BENCH_ONCE (1: each set-up once, no way back), RENDER_BENCH_MEMORY (0:
 * skip the 60-picture runs).
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { processSeconds, TICKS } from './cpu.js';
import { PeakMemory } from './memory.js';
import { shortEdit, shortMedia, SHORT_SECONDS, type ShortFrame } from './render-media.js';
import {
  benchEngine,
  chain,
  handWritten,
  losslessReference,
  psnr,
  render,
  type BenchEngine,
  type ChainStep,
} from './render-ways.js';

const [WIDTH, HEIGHT] = (process.env.RENDER_BENCH_SIZE ?? '1080x1920').split('x').map(Number) as [number, number];
const FRAME: ShortFrame = { width: WIDTH, height: HEIGHT, fps: Number(process.env.RENDER_BENCH_FPS ?? 30) };
const THERE_AND_BACK = process.env.RENDER_BENCH_ONCE !== '1';
const MEMORY = process.env.RENDER_BENCH_MEMORY !== '0';
/** Six photos of 5 s; for the memory runs, sixty of half a second, with fades of a fifth of a second. */
const [FEW, MANY] = [6, 60];
const FEW_SECONDS = SHORT_SECONDS / FEW;
const [MANY_SECONDS, MANY_FADE] = [SHORT_SECONDS / MANY, 0.2];
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

type Setup = 'render' | 'chain' | 'hand';

interface Run {
  setup: Setup;
  wallSeconds: number;
  cpuSeconds: number;
  /** The 1-minute load average just before the run. */
  load: number;
  /** The largest resident memory of any of its ffmpeg processes, MiB. */
  ffmpegPeakMiB: number;
  /** The chain's calls, each with its own CPU and wall time. */
  steps?: ChainStep[];
}

/** The process tree's CPU seconds so far: this process and the children it waited for. */
const cpuSeconds = () => processSeconds(process.pid);

/** The frames and seconds of a video's picture, and whether it decodes without a complaint. */
async function checked(file: string): Promise<{ frames: number; seconds: number; clean: boolean }> {
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v:0', '-count_packets'],
    ...['-show_entries', 'stream=nb_read_packets:format=duration', '-of', 'json', file],
  ]);
  const probed = JSON.parse(stdout) as { streams: [{ nb_read_packets: string }]; format: { duration: string } };
  const { stderr } = await execa('ffmpeg', ['-v', 'error', '-nostdin', '-i', file, '-f', 'null', '-']);
  return {
    frames: Number(probed.streams[0].nb_read_packets),
    seconds: round(Number(probed.format.duration), 3),
    clean: stderr.trim() === '',
  };
}

/** The mean of each set-up's runs. */
function means(runs: readonly Run[]) {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const of = (setup: Setup) => {
    const mine = runs.filter((run) => run.setup === setup);
    return {
      runs: mine.length,
      wallSeconds: round(mean(mine.map((run) => run.wallSeconds))),
      cpuSeconds: round(mean(mine.map((run) => run.cpuSeconds))),
    };
  };
  return { render: of('render'), chain: of('chain'), hand: of('hand') };
}

async function main() {
  if (!TICKS) throw new Error('bench:render reads CPU times from /proc: run it on Linux');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bench-render-'));
  try {
    const few = await shortMedia(FEW);
    const edit = shortEdit(few, FRAME, FEW_SECONDS);
    const engine = benchEngine(dir);
    const handDir = path.join(dir, 'hand');
    await mkdir(handDir);
    const kept = new Map<Setup, string>();
    const ways: Record<Setup, () => Promise<{ file: string; steps?: ChainStep[] }>> = {
      render: async () => ({ file: await render(engine, edit) }),
      chain: () => chain(engine, few, FRAME, FEW_SECONDS, cpuSeconds),
      hand: async () => ({ file: await handWritten(handDir, few, FRAME, FEW_SECONDS) }),
    };
    const order: Setup[] = THERE_AND_BACK
      ? ['render', 'chain', 'hand', 'hand', 'chain', 'render']
      : ['render', 'chain', 'hand'];
    const runs: Run[] = [];
    for (const setup of order) {
      const load = round(os.loadavg()[0]!);
      const memory = new PeakMemory();
      const [cpuBefore, started] = [await cpuSeconds(), performance.now()];
      memory.start();
      const { file, steps } = await ways[setup]();
      const ffmpegPeakMiB = await memory.stop();
      const run: Run = {
        setup,
        wallSeconds: round((performance.now() - started) / 1000),
        cpuSeconds: round((await cpuSeconds()) - cpuBefore),
        load,
        ffmpegPeakMiB,
        ...(steps
          ? {
              steps: steps.map((step) => ({
                ...step,
                cpuSeconds: round(step.cpuSeconds),
                wallSeconds: round(step.wallSeconds),
              })),
            }
          : {}),
      };
      runs.push(run);
      console.log(
        `${setup.padEnd(6)} ${run.cpuSeconds} s CPU, ${run.wallSeconds} s wall, ffmpeg peak ${ffmpegPeakMiB} MiB ` +
          `(load ${load})`,
      );
      // The first output of each set-up is kept for the checks and the PSNR; the outputs are alike run to run.
      if (kept.has(setup)) await rm(file, { force: true });
      else kept.set(setup, setup === 'hand' ? await keepAside(file, dir) : file);
    }
    const mean = means(runs);
    // The pictures against the render's own plan encoded losslessly, and each against its own edit made losslessly
    // (what its encodes alone lost, whatever its edit draws a little differently).
    const reference = await losslessReference(engine, edit);
    const own: Record<Setup, string> = {
      render: reference,
      chain: (await chain(engine, few, FRAME, FEW_SECONDS, cpuSeconds, { lossless: true })).file,
      hand: await handWritten(handDir, few, FRAME, FEW_SECONDS, { lossless: true }),
    };
    const outputs = Object.fromEntries(
      await Promise.all(
        [...kept].map(async ([setup, file]) => [
          setup,
          { ...(await checked(file)), psnr: await psnr(file, reference), ownPsnr: await psnr(file, own[setup]) },
        ]),
      ),
    ) as Record<
      Setup,
      Awaited<ReturnType<typeof checked>> & Record<'psnr' | 'ownPsnr', { y: number; average: number }>
    >;
    const memory = MEMORY ? await peakMemory(engine, handDir, runs) : undefined;

    const floor = {
      cpu: round(mean.render.cpuSeconds / mean.hand.cpuSeconds),
      wall: round(mean.render.wallSeconds / mean.hand.wallSeconds),
    };
    const faster = {
      cpu: round(mean.chain.cpuSeconds / mean.render.cpuSeconds),
      wall: round(mean.chain.wallSeconds / mean.render.wallSeconds),
    };
    const gain = round(outputs.render.psnr.average - outputs.chain.psnr.average);
    const ownGain = round(outputs.render.ownPsnr.average - outputs.chain.ownPsnr.average);
    const targets = [
      {
        target: 'render ÷ hand-written command, CPU time',
        measured: floor.cpu,
        goal: '<= 1.15',
        met: floor.cpu <= 1.15,
      },
      {
        target: 'render ÷ hand-written command, wall time',
        measured: floor.wall,
        goal: '<= 1.15',
        met: floor.wall <= 1.15,
      },
      { target: 'chain ÷ render, CPU time', measured: faster.cpu, goal: '>= 1.35', met: faster.cpu >= 1.35 },
      { target: "render's PSNR - chain's, dB (mean of Y, U, V)", measured: gain, goal: '>= 2', met: gain >= 2 },
      {
        target: 'the same, each against its own edit made losslessly',
        measured: ownGain,
        goal: '>= 2',
        met: ownGain >= 2,
      },
      ...(memory
        ? [
            {
              target: `render's ffmpeg peak memory, ${MANY} pictures ÷ ${FEW}`,
              measured: round(memory.render.many / memory.render.few),
              goal: '<= 1.1',
              met: memory.render.many / memory.render.few <= 1.1,
            },
          ]
        : []),
    ];
    console.log(`\nmeans of ${mean.render.runs} runs each (${WIDTH}x${HEIGHT}, ${FRAME.fps} fps, ${SHORT_SECONDS} s):`);
    for (const setup of ['render', 'chain', 'hand'] as const)
      console.log(
        `  ${setup.padEnd(6)} ${mean[setup].cpuSeconds} s CPU, ${mean[setup].wallSeconds} s wall; ` +
          `${outputs[setup].frames} frames, ${outputs[setup].seconds} s, ` +
          `${outputs[setup].clean ? 'clean decode' : 'DECODE ERRORS'}; ` +
          `PSNR ${outputs[setup].psnr.average} dB (Y ${outputs[setup].psnr.y}), ` +
          `against its own lossless ${outputs[setup].ownPsnr.average} dB`,
      );
    const chainSteps = runs.filter((run) => run.steps).map((run) => run.steps!);
    console.log('  the chain, call by call (mean CPU s):');
    for (const [i, step] of chainSteps[0]!.entries()) {
      const cpu = chainSteps.reduce((sum, steps) => sum + steps[i]!.cpuSeconds, 0) / chainSteps.length;
      console.log(`    ${step.operation.padEnd(18)} ${round(cpu)}`);
    }
    if (memory)
      for (const setup of ['render', 'hand'] as const)
        console.log(
          `  ${setup}'s ffmpeg peak memory: ${FEW} pictures ${memory[setup].few} MiB, ` +
            `${MANY} pictures ${memory[setup].many} MiB`,
        );
    if (memory) console.log(`  chain's ffmpeg peak memory: ${FEW} pictures ${memory.chain.few} MiB`);
    console.log('');
    for (const t of targets)
      console.log(`${t.met ? 'met  ' : 'SHORT'} ${t.target.padEnd(52)} ${String(t.measured).padEnd(8)} ${t.goal}`);

    const results = path.resolve(import.meta.dirname, 'results');
    await mkdir(results, { recursive: true });
    const file = path.join(results, `render-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version };
    const command = 'npm run bench:render';
    await writeFile(
      file,
      `${JSON.stringify({ command, machine, frame: FRAME, runs, means: mean, outputs, memory, targets }, null, 2)}\n`,
    );
    console.log(`written: ${file}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Moves the hand-written command's output out of its way (the next run writes the same name). */
async function keepAside(file: string, dir: string): Promise<string> {
  const aside = path.join(dir, 'hand-kept.mp4');
  await rename(file, aside);
  return aside;
}

/**
 * ffmpeg's peak memory making the short with FEW pictures (the largest of the timed runs'), then with MANY in the same
 * 30 s: by the render, and by the hand-written command (one filter graph too, for comparison).
 */
async function peakMemory(engine: BenchEngine, dir: string, runs: readonly Run[]) {
  const many = await shortMedia(MANY);
  const fewPeak = (setup: Setup) =>
    Math.max(...runs.filter((run) => run.setup === setup).map((run) => run.ffmpegPeakMiB));
  const peak = async (make: () => Promise<string>) => {
    const memory = new PeakMemory();
    memory.start();
    await rm(await make(), { force: true });
    return memory.stop();
  };
  return {
    render: {
      few: fewPeak('render'),
      many: await peak(() => render(engine, shortEdit(many, FRAME, MANY_SECONDS, MANY_FADE))),
    },
    hand: {
      few: fewPeak('hand'),
      many: await peak(() => handWritten(dir, many, FRAME, MANY_SECONDS, { fade: MANY_FADE })),
    },
    chain: { few: fewPeak('chain') },
  };
}

await main();
