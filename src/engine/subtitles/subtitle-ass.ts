import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runFfmpeg } from '../exec/ffmpeg.js';

/**
 * A subtitle input as ASS text, converted by ffmpeg the way libass is fed: SRT and WebVTT cues
 * become events of one `Default` style (ffmpeg's default header), ASS and SSA keep their own
 * styles. Plugins get it as `LocalInput.ass`, so a builder, which runs nothing, can restyle the
 * subtitles and write the result as a plan file instead of pasting styles into a filter graph.
 */
export async function subtitleAsAss(
  ffmpeg: string,
  dir: string,
  file: string,
  inputArgs: string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<string> {
  // A name of the engine's own, beside the input (whose name is generated too).
  const converted = `${file}.converted.ass`;
  await runFfmpeg(ffmpeg, [...inputArgs, '-map', '0:s:0', '-c:s', 'ass', '-f', 'ass', converted], {
    cwd: dir,
    ...options,
  });
  return readFile(path.join(dir, converted), 'utf8');
}
