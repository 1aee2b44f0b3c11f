import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { resolveBinaries } from '../engine/exec/binaries.js';
import { loadConfig } from '../engine/config.js';
import { anyLocalPath } from '../engine/run/job-run.js';
import { outputPaths } from '../engine/contract/plugin.js';
import type { Registry } from '../engine/plugins/registry.js';
import { cliRuntime } from './cli-runtime.js';
import { fail } from './fail.js';
import { ensureWritableDir } from './out-dir.js';

/** Sample media, each made by one ffmpeg run from lavfi's generators: nothing is downloaded. */
const SAMPLES: Record<string, string[]> = {
  'tone-a.mp3': ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=3'],
  'tone-b.wav': ['-f', 'lavfi', '-i', 'sine=frequency=660:duration=2'],
  'clip-a.mp4': [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=25:duration=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:duration=3',
    '-pix_fmt',
    'yuv420p',
    '-shortest',
  ],
  'clip-b.mp4': [
    '-f',
    'lavfi',
    '-i',
    'smptebars=size=640x360:rate=25:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=550:duration=2',
    '-pix_fmt',
    'yuv420p',
    '-shortest',
  ],
  'photo-a.jpg': ['-f', 'lavfi', '-i', 'testsrc2=size=1280x720', '-frames:v', '1'],
  'photo-b.png': ['-f', 'lavfi', '-i', 'mandelbrot=size=800x800', '-frames:v', '1'],
};

/** The ten operations of the endpoint table, on the samples (and the subtitles one of them writes). */
function calls(
  samples: (name: string) => string,
  subtitles: () => string,
): Array<[string, () => Record<string, unknown>]> {
  return [
    [
      'generate-subtitles',
      () => ({
        text: 'Made on this machine. Nothing was downloaded! These lines become subtitles.',
        words_per_line: 4,
        seconds_per_line: 1,
      }),
    ],
    ['add-subtitles', () => ({ video_url: samples('clip-a.mp4'), subtitle_url: subtitles() })],
    ['merge-audios', () => ({ audio_urls: `${samples('tone-a.mp3')},${samples('tone-b.wav')}` })],
    [
      'images-to-video',
      () => ({ image_urls: `${samples('photo-a.jpg')},${samples('photo-b.png')}`, seconds_per_image: 2 }),
    ],
    ['merge-audio-video', () => ({ video_url: samples('clip-b.mp4'), audio_url: samples('tone-a.mp3') })],
    ['merge-videos', () => ({ video_urls: `${samples('clip-a.mp4')},${samples('clip-b.mp4')}` })],
    ['convert-video', () => ({ video_url: samples('clip-a.mp4'), format: 'webm' })],
    ['crop_image_to_short', () => ({ image_url: samples('photo-a.jpg') })],
    ['convert_image_from_url', () => ({ image_url: samples('photo-b.png'), target_format: 'webp' })],
    ['resize_image', () => ({ image_url: samples('photo-a.jpg'), width: 320, height: 180 })],
  ];
}

/** `mediaflow quickstart` at work (quickstart-command.ts loads this module only then). */
export async function runQuickstart(dir: string, registry: Registry): Promise<void> {
  const outDir = path.resolve(dir);
  const samplesDir = path.join(outDir, 'samples');
  let madeSamples = false;
  try {
    const { ffmpeg } = resolveBinaries();
    await ensureWritableDir(outDir, '--out-dir');
    await mkdir(samplesDir, { recursive: true });
    madeSamples = true;
    for (const [name, input] of Object.entries(SAMPLES)) {
      await execa(ffmpeg, [
        '-hide_banner',
        '-nostdin',
        '-loglevel',
        'error',
        '-y',
        ...input,
        path.join(samplesDir, name),
      ]);
    }
    process.stdout.write(`samples: ${samplesDir}\n`);
    const { engine } = await cliRuntime(loadConfig(process.env), registry, path.join(outDir, 'results'));
    let srt = '';
    for (const [operation, raw] of calls(
      (name) => path.join(samplesDir, name),
      () => srt,
    )) {
      const result = await engine.run(operation, raw(), { localFiles: anyLocalPath });
      // The quick start's calls each write one file.
      const file = path.join(outDir, 'results', outputPaths(result.output)[0]!);
      if (operation === 'generate-subtitles') srt = file;
      process.stdout.write(`${operation.padEnd(24)} ${file}\n`);
    }
    process.stdout.write(
      `\nDone: open the files above. Next: \`mediaflow serve\` and the curl examples in the README.\n`,
    );
  } catch (error) {
    // Half-made samples would look like a finished first try.
    if (madeSamples) await rm(samplesDir, { recursive: true, force: true });
    fail(error);
  }
}
