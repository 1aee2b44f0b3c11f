/**
 * The three ways of making the render benchmark's short (bench/render.ts), each from the same local media:
 * - the render: its edit document through mediaflow's engine in process, as `mediaflow render` runs it;
 * - the chain: what a user does without it, six operations through the same engine, each taking the last result
 *   (images-to-video with zoom and fades, merge-audio-video, add-subtitles, overlay-image, mix-audio, add-text);
 * - the floor: one ffmpeg command written by hand, one filter graph doing the same, with the render's encoder settings.
 * And the lossless reference the pictures are compared with: the render's own plan, its x264 at `-qp 0`.
 */
import { rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { loadConfig } from '../src/engine/config.js';
import type { Plan, PluginDefinition } from '../src/engine/contract/plugin.js';
import { anyLocalPath } from '../src/engine/run/job-run.js';
import { LocalOutputStore } from '../src/engine/storage/storage.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { cliServices } from '../src/runtime.js';
import { audioEncoder, muxerFor, videoEncoder } from '../src/sdk/encoding.js';
import {
  FADE,
  LOGO_MARGIN,
  LOGO_WIDTH,
  MUSIC_DB,
  SHORT_SECONDS,
  TITLE_SECONDS,
  type ShortFrame,
  type ShortMedia,
} from './render-media.js';

/** The operations the short is made with: the render, and the chain's. */
const OPERATIONS = [
  'render',
  'images-to-video',
  'merge-audio-video',
  'add-subtitles',
  'overlay-image',
  'mix-audio',
  'add-text',
] as const;

/** The name of an operation's variant whose x264 encodes losslessly. */
const lossless = (operation: string) => `${operation}-lossless`;

/** A plan's x264 encodes made lossless: `-crf <n>` replaced by `-qp 0` in every command of every stage. */
function losslessPlan(plan: Plan | string[]): Plan | string[] {
  if (Array.isArray(plan)) return plan;
  const commands = plan.commands.map((args) => {
    const crf = args.indexOf('-crf');
    return crf < 0 ? args : [...args.slice(0, crf), '-qp', '0', ...args.slice(crf + 2)];
  });
  const next = plan.next;
  return { ...plan, commands, ...(next ? { next: (logs: string[]) => losslessPlan(next(logs)) } : {}) };
}

/** An operation whose encodes are lossless, under its own name and route. */
const losslessVariant = (plugin: PluginDefinition): PluginDefinition => ({
  ...plugin,
  name: lossless(plugin.name),
  path: `/${lossless(plugin.name)}/`,
  build: (context) => losslessPlan(plugin.build(context)),
});

/**
 * mediaflow's engine in this process, writing its outputs under `dir`/out, with a lossless variant of each operation
 * the short is made with beside it.
 */
export function benchEngine(dir: string) {
  const registry = builtinRegistry();
  for (const operation of OPERATIONS) registry.register(losslessVariant(registry.get(operation)!), 'bench');
  const out = path.join(dir, 'out');
  const { engine } = cliServices({
    // 60 pictures and four other files are more than the default limit of inputs.
    config: loadConfig({ MEDIAFLOW_DATA_DIR: dir, MEDIAFLOW_MAX_INPUTS: '100' }),
    registry,
    store: new LocalOutputStore(out),
    workRoot: path.join(dir, 'work'),
  });
  /** Runs one operation on local files and answers its output file. */
  const run = async (operation: string, fields: Record<string, unknown>): Promise<string> => {
    const { output } = await engine.run(operation, fields, { localFiles: anyLocalPath });
    if (!('path' in output)) throw new Error(`${operation} wrote no single file`);
    return path.join(out, output.path);
  };
  return { run };
}

export type BenchEngine = ReturnType<typeof benchEngine>;

/** The render of one edit document. */
export const render = (engine: BenchEngine, edit: object): Promise<string> => engine.run('render', { edit });

/** The render of the same document, encoded losslessly: the reference the pictures are compared with. */
export const losslessReference = (engine: BenchEngine, edit: object): Promise<string> =>
  engine.run(lossless('render'), { edit });

/** One call of the chain: the operation, and the CPU and wall seconds it took. */
export interface ChainStep {
  operation: string;
  cpuSeconds: number;
  wallSeconds: number;
}

/**
 * The chain of six calls, each taking the result of the one before (the intermediate files are removed once used);
 * `cpu` reads the process tree's CPU seconds so far, for each step's share. `lossless`: every encode lossless, so
 * that the output is the chain's own edit without its generations' losses.
 */
export async function chain(
  engine: BenchEngine,
  media: ShortMedia,
  frame: ShortFrame,
  seconds: number,
  cpu: () => Promise<number>,
  options: { lossless?: boolean } = {},
): Promise<{ file: string; steps: ChainStep[] }> {
  const steps: ChainStep[] = [];
  let previous: string | undefined;
  const call = async (operation: string, fields: (video: string) => Record<string, string>) => {
    const [cpuBefore, started] = [await cpu(), performance.now()];
    const file = await engine.run(options.lossless ? lossless(operation) : operation, fields(previous ?? ''));
    steps.push({
      operation,
      cpuSeconds: (await cpu()) - cpuBefore,
      wallSeconds: (performance.now() - started) / 1000,
    });
    if (previous) await rm(previous, { force: true });
    previous = file;
  };
  await call('images-to-video', () => ({
    image_urls: media.photos.join(','),
    seconds_per_image: String(seconds),
    width: String(frame.width),
    height: String(frame.height),
    fps: String(frame.fps),
    quality: 'balanced',
    motion: 'zoom',
    transition: 'fade',
    transition_seconds: String(FADE),
  }));
  await call('merge-audio-video', (video) => ({ video_url: video, audio_url: media.voice }));
  await call('add-subtitles', (video) => ({ video_url: video, subtitle_url: media.captions }));
  await call('overlay-image', (video) => ({
    video_url: video,
    image_url: media.logo,
    position: 'top-right',
    width: String(LOGO_WIDTH),
    margin: String(LOGO_MARGIN),
  }));
  await call('mix-audio', (video) => ({ media_url: video, music_url: media.music, music_volume: String(MUSIC_DB) }));
  await call('add-text', (video) => ({
    video_url: video,
    text: media.title,
    start: '0',
    end: String(TITLE_SECONDS),
    position: 'top',
  }));
  return { file: previous!, steps };
}

/**
 * The same short as one ffmpeg command written by hand: each photo letterboxed and zoomed (the sub-pixel zoom of
 * perspective, 1 to 1.2 over its time on screen), the photos joined by xfade, the captions burned in by the subtitles
 * filter, the logo overlaid, the title drawn by drawtext for its first seconds; the music looped, ducked by a
 * compressor keyed on the voice, and mixed with it. Encoded with the render's x264 and AAC settings (`lossless`:
 * x264 at `-qp 0`).
 */
export async function handWritten(
  dir: string,
  media: ShortMedia,
  frame: ShortFrame,
  seconds: number,
  options: { lossless?: boolean; fade?: number } = {},
): Promise<string> {
  const { width, height, fps } = frame;
  const fade = options.fade ?? FADE;
  const n = media.photos.length;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const frames = Math.round((seconds + (i < n - 1 ? fade : 0)) * fps);
    const margin = `(1-1/(1+0.2*in/${frames}))/2`;
    lines.push(
      `[${i}:v]scale=${width}:${height}:force_original_aspect_ratio=decrease,` +
        `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p,` +
        `loop=loop=${frames - 1}:size=1,settb=1/${fps},setpts=N,fps=${fps},` +
        `perspective=x0='W*${margin}':y0='H*${margin}':x1='W-W*${margin}':y1='H*${margin}':` +
        `x2='W*${margin}':y2='H-H*${margin}':x3='W-W*${margin}':y3='H-H*${margin}':interpolation=linear:eval=frame` +
        `[p${i}]`,
    );
  }
  let joined = 'p0';
  for (let i = 1; i < n; i++) {
    lines.push(`[${joined}][p${i}]xfade=transition=fade:duration=${fade}:offset=${i * seconds}[x${i}]`);
    joined = `x${i}`;
  }
  const logoWidth = 2 * Math.round((LOGO_WIDTH * width) / 2);
  const margin = Math.round(LOGO_MARGIN * width);
  const [logo, voice, music] = [n, n + 1, n + 2];
  lines.push(
    `[${joined}]subtitles=filename=captions.srt[captioned]`,
    `[${logo}:v]scale=${logoWidth}:-2[logo]`,
    `[captioned][logo]overlay=x=W-w-${margin}:y=${margin}[logoed]`,
    `[logoed]drawtext=textfile=title.txt:font=Noto Sans:fontsize=${Math.round(height / 24)}:fontcolor=white:` +
      `borderw=${Math.max(1, Math.round(height / 540))}:bordercolor=black:x=(w-text_w)/2:y=h/20:` +
      `enable='lt(t,${TITLE_SECONDS})',format=yuv420p[vout]`,
    `[${voice}:a]aresample=48000,aformat=channel_layouts=stereo,asplit=2[voice][key]`,
    `[${music}:a]aresample=48000,aformat=channel_layouts=stereo,volume=${MUSIC_DB}dB[music]`,
    '[music][key]sidechaincompress=threshold=0.02:ratio=6:attack=20:release=500[ducked]',
    '[voice][ducked]amix=inputs=2:duration=first:normalize=0[aout]',
  );
  await writeFile(path.join(dir, 'hand.graph'), lines.join(';\n'));
  await writeFile(path.join(dir, 'title.txt'), media.title);
  await rm(path.join(dir, 'captions.srt'), { force: true });
  await symlink(media.captions, path.join(dir, 'captions.srt'));
  const output = path.join(dir, options.lossless ? 'hand-lossless.mp4' : 'hand.mp4');
  const encoder = videoEncoder('mp4', { quality: 'balanced' });
  await execa(
    'ffmpeg',
    [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'],
      ...media.photos.flatMap((photo) => ['-i', photo]),
      ...['-i', media.logo, '-i', media.voice, '-stream_loop', '-1', '-i', media.music],
      ...['-filter_complex_script', 'hand.graph', '-map', '[vout]', '-map', '[aout]'],
      ...(options.lossless ? (losslessPlan({ commands: [encoder] }) as Plan).commands[0]! : encoder),
      ...audioEncoder('mp4'),
      ...['-t', String(SHORT_SECONDS)],
      ...muxerFor('mp4'),
      output,
    ],
    { cwd: dir },
  );
  return output;
}

/** A video's PSNR against a reference (ffmpeg's psnr filter, frame by frame): luma, and the mean of the planes. */
export async function psnr(file: string, reference: string): Promise<{ y: number; average: number }> {
  const { stderr } = await execa('ffmpeg', [
    ...['-hide_banner', '-nostdin', '-i', file, '-i', reference],
    ...['-lavfi', '[0:v][1:v]psnr', '-f', 'null', '-'],
  ]);
  const line = /PSNR y:([\d.]+|inf) u:[\d.inf]+ v:[\d.inf]+ average:([\d.]+|inf)/.exec(stderr);
  if (!line) throw new Error(`no PSNR in ffmpeg's log: ${stderr.slice(-500)}`);
  return { y: Number(line[1]), average: Number(line[2]) };
}
