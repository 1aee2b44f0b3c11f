/**
 * `npm run bench:motion`: images-to-video with motion=zoom and transition=fade against the static
 * slideshow of the same 10 pictures (1280x720, 5 s each), through mediaflow's engine as the CLI runs it;
 * then ffmpeg's peak memory (VmHWM of the largest ffmpeg process) for 10 and 100 pictures with zoom
 * and fades (1 s each: memory does not depend on the seconds). Each run's CPU time too (Linux), which other
 * work on the machine does not inflate as it does the time. One run each; the results are printed and written
 * as JSON to bench/results/.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { loadConfig } from '../src/engine/config.js';
import { anyLocalPath } from '../src/engine/run/job-run.js';
import { LocalOutputStore } from '../src/engine/storage/storage.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { cliServices } from '../src/runtime.js';
import { processSeconds, TICKS } from './cpu.js';
import { PeakMemory } from './memory.js';

/** `count` different 1280x720 JPEGs: frames of ffmpeg's test pattern a second apart. */
async function pictures(dir: string, count: number): Promise<string[]> {
  const pattern = path.join(dir, 'p%03d.jpg');
  await execa(
    'ffmpeg',
    ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=1', '-frames:v', String(count)].concat([
      '-q:v',
      '2',
      pattern,
    ]),
  );
  return Array.from({ length: count }, (_, i) => path.join(dir, `p${String(i + 1).padStart(3, '0')}.jpg`));
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bench-motion-'));
  const { engine } = cliServices({
    // 100 pictures are more than the default limit of inputs.
    config: loadConfig({ MEDIAFLOW_DATA_DIR: dir, MEDIAFLOW_MAX_INPUTS: '100' }),
    registry: builtinRegistry(),
    store: new LocalOutputStore(path.join(dir, 'out')),
    workRoot: path.join(dir, 'work'),
  });
  const moving = { motion: 'zoom', transition: 'fade' };
  const cpuSeconds = async () => (TICKS ? processSeconds(process.pid) : NaN);
  const run = async (images: string[], fields: Record<string, string>) => {
    const memory = new PeakMemory();
    memory.start();
    const [started, cpuBefore] = [performance.now(), await cpuSeconds()];
    await engine.run('images-to-video', { image_urls: images.join(','), ...fields }, { localFiles: anyLocalPath });
    const ms = Math.round(performance.now() - started);
    // CPU time (ffmpeg's and this process's) does not grow when other work on the machine slows the run down.
    const cpuMs = Math.round(((await cpuSeconds()) - cpuBefore) * 1000);
    return { ms, cpuMs, peakMiB: await memory.stop() };
  };
  try {
    await mkdir(path.join(dir, 'in'));
    const all = await pictures(path.join(dir, 'in'), 100);
    const ten = all.slice(0, 10);
    const still = await run(ten, {});
    const zoom = await run(ten, moving);
    const ratio = Math.round((zoom.ms / still.ms) * 100) / 100;
    const cpuRatio = Math.round((zoom.cpuMs / still.cpuMs) * 100) / 100;
    console.log(`10 pictures x 5 s: static ${still.ms} ms, zoom and fades ${zoom.ms} ms: ${ratio}x (target <= 2)`);
    console.log(`in CPU time: static ${still.cpuMs} ms, zoom and fades ${zoom.cpuMs} ms: ${cpuRatio}x`);
    const peak10 = await run(ten, { ...moving, seconds_per_image: '1' });
    const peak100 = await run(all, { ...moving, seconds_per_image: '1' });
    console.log(`ffmpeg peak memory, zoom and fades: 10 pictures ${peak10.peakMiB} MiB, 100 ${peak100.peakMiB} MiB`);
    const results = path.resolve(import.meta.dirname, 'results');
    await mkdir(results, { recursive: true });
    const file = path.join(results, `motion-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const rows = { cpus: os.cpus().length, still, zoom, ratio, cpuRatio, peak10, peak100 };
    await writeFile(file, `${JSON.stringify(rows, null, 2)}\n`);
    console.log(`written: ${file}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
