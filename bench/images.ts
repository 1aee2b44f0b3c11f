/**
 * The image operations' targets (issue 13): libvips in process against the ffmpeg commands the
 * plugins ran before (still their fallback, `*WithFfmpeg`), measured on the same 1080p JPEG.
 */
import { copyFile, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { resolveBinaries } from '../src/engine/exec/binaries.js';
import { ffmpegCommandLine } from '../src/engine/exec/ffmpeg.js';
import { inputArgs } from '../src/engine/exec/input-policy.js';
import type { BuildContext, LocalInput, PluginDefinition } from '../src/engine/contract/plugin.js';
import { Registry } from '../src/engine/plugins/registry.js';
import { probeFile } from '../src/engine/probe/probe.js';
import { convertWithFfmpeg } from '../src/plugins/convert-image-from-url.js';
import { cropWithFfmpeg } from '../src/plugins/crop-image-to-short.js';
import { builtinPlugins } from '../src/plugins/index.js';
import { resizeWithFfmpeg } from '../src/plugins/resize-image.js';
import { startServeProcess } from '../test/helpers/serve-process.js';
import { rssMiB } from './memory.js';

/** One image request and the ffmpeg command that did the same work before libvips. */
export interface ImageCase {
  op: string;
  route: string;
  fields: Record<string, string>;
  /** Output file name of the ffmpeg command (its extension picks nothing: the argv does). */
  output: string;
  ffmpeg: (image: LocalInput, output: string) => string[];
}

const context = (image: LocalInput, output: string) => ({
  inputs: { image_url: [image] },
  output,
  outputs: [output],
  input: (i: LocalInput) => inputArgs(i, 'image'),
});

/** The image cases, for a picture served at `url`. */
export const imageCases = (url: string): ImageCase[] => [
  {
    op: 'resize_image',
    route: '/resize_image/',
    fields: { image_url: url, width: '300', height: '500' },
    output: 'output.jpg',
    ffmpeg: (image, output) => resizeWithFfmpeg({ ...context(image, output), params: { width: 300, height: 500 } }),
  },
  {
    op: 'crop_image_to_short',
    route: '/crop_image_to_short/',
    fields: { image_url: url },
    output: 'output.jpg',
    ffmpeg: (image, output) => cropWithFfmpeg({ ...context(image, output), params: {} }),
  },
  {
    op: 'convert_image_from_url (webp)',
    route: '/convert_image_from_url/',
    fields: { image_url: url, target_format: 'webp' },
    output: 'output.webp',
    ffmpeg: (image, output) => convertWithFfmpeg({ ...context(image, output), params: { target_format: 'webp' } }),
  },
  {
    op: 'convert_image_from_url (png)',
    route: '/convert_image_from_url/',
    fields: { image_url: url, target_format: 'png' },
    output: 'output.png',
    ffmpeg: (image, output) => convertWithFfmpeg({ ...context(image, output), params: { target_format: 'png' } }),
  },
];

/**
 * The image operations' ffmpeg commands, by operation: what their `build` returned before libvips. Each takes
 * its own operation's params, which no one type covers: `never` accepts them all here, and the registry hands
 * each the params its operation's schema checked.
 */
const FFMPEG_BUILDS: Record<string, (context: BuildContext<never>) => string[]> = {
  resize_image: resizeWithFfmpeg,
  crop_image_to_short: cropWithFfmpeg,
  convert_image_from_url: convertWithFfmpeg,
};

/**
 * The built-ins as they were before libvips: the image operations build their ffmpeg commands for
 * every picture. A server on this registry answers image requests the way mediaflow did, the
 * reference for the throughput target ("3 times today's").
 */
export function registryBeforeLibvips(): Registry {
  const registry = new Registry();
  for (const plugin of builtinPlugins) {
    const build = FFMPEG_BUILDS[plugin.name];
    registry.register(build ? ({ ...plugin, build } as PluginDefinition) : plugin, 'built-in');
  }
  return registry;
}

/** A workspace holding the picture as `in0.jpg`, probed as the engine probes it, and a runner of ffmpeg argvs in it. */
export async function ffmpegWorkspace(picture: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bench-images-'));
  await symlink(picture, path.join(dir, 'in0.jpg'));
  const { ffmpeg, ffprobe } = resolveBinaries();
  const facts = await probeFile(ffprobe, 'in0.jpg', { cwd: dir, timeoutMs: 30_000 });
  const image: LocalInput = { file: 'in0.jpg', source: picture, facts };
  return {
    dir,
    /** Runs a case's ffmpeg command, writing `name` in the workspace. */
    run: async (c: ImageCase, name = c.output) => {
      const [bin, ...args] = ffmpegCommandLine(ffmpeg, c.ffmpeg(image, name));
      await execa(bin!, args, { cwd: dir });
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/** SSIM of two pictures of one size by ffmpeg's ssim filter: over all planes, and of luma (Y) alone. */
export async function ssim(a: string, b: string): Promise<{ all: number; luma: number }> {
  const run = await execa(
    resolveBinaries().ffmpeg,
    [
      '-hide_banner',
      '-nostdin',
      '-i',
      a,
      '-i',
      b,
      '-lavfi',
      '[0:v]format=yuv444p[a];[1:v]format=yuv444p[b];[a][b]ssim',
      '-f',
      'null',
      '-',
    ],
    { reject: false },
  );
  const value = (plane: string) => Number(new RegExp(`${plane}:([\\d.]+)`).exec(String(run.stderr))?.[1] ?? NaN);
  return { all: value('All'), luma: value('Y') };
}

/** SSIM and size of our output against the ffmpeg command's, for one case. */
export async function againstFfmpeg(
  c: ImageCase,
  ours: string,
  workspace: Awaited<ReturnType<typeof ffmpegWorkspace>>,
) {
  await workspace.run(c, `reference-${c.output}`);
  const reference = path.join(workspace.dir, `reference-${c.output}`);
  const kept = path.join(workspace.dir, `ours-${c.output}`);
  await copyFile(ours, kept);
  const { all, luma } = await ssim(kept, reference);
  return {
    ssim: all,
    ssimLuma: luma,
    sizeRatio: Number(((await stat(kept)).size / (await stat(reference)).size).toFixed(3)),
  };
}

/** Jobs per second of `job`, `lanes` at a time, over `count` jobs in all. */
export async function throughput(
  count: number,
  lanes: number,
  job: (index: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) await job(next++);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/**
 * Resident memory of a `mediaflow serve` process over `count` image operations (the cases in
 * turn, two at a time), sampled every tenth: flat means the second half adds nothing, once the
 * first half has warmed up the allocator's arenas and V8's heap.
 */
export async function memoryOver(count: number, url: string) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bench-memory-'));
  // Outputs are deleted as they are made: the disk is not what is measured.
  const serve = await startServeProcess(dataDir, {
    MEDIAFLOW_LOG_LEVEL: 'warn',
    MEDIAFLOW_RETENTION: '0',
    MEDIAFLOW_CACHE_BYTES: '0',
  });
  const pid = serve.child.pid!;
  const cases = imageCases(url);
  const post = async (index: number) => {
    const c = cases[index % cases.length]!;
    const body = new FormData();
    for (const [k, v] of Object.entries(c.fields)) body.append(k, v);
    const res = await fetch(`${serve.base}${c.route}`, { method: 'POST', body });
    if (res.status !== 200) throw new Error(`${c.route}: ${res.status} ${await res.text()}`);
    const { output_file: output } = (await res.json()) as { output_file: string };
    await rm(path.join(dataDir, 'uploads', output.split('/uploads/')[1]!), { force: true });
  };
  try {
    const samplesMiB: number[] = [Math.round(await rssMiB(pid))];
    for (let tenth = 0; tenth < 10; tenth++) {
      await throughput(count / 10, 2, post);
      samplesMiB.push(Math.round(await rssMiB(pid)));
    }
    return { operations: count, samplesMiB, secondHalfGrowth: Number((samplesMiB[10]! / samplesMiB[5]!).toFixed(3)) };
  } finally {
    serve.child.kill('SIGTERM');
    await serve.child;
    await rm(dataDir, { recursive: true, force: true });
  }
}
