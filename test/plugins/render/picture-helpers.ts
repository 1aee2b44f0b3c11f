import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { inputArgs } from '../../../src/engine/exec/input-policy.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import { probeFile } from '../../../src/engine/probe/probe.js';
import { resolveBinaries } from '../../../src/engine/exec/binaries.js';
import { subtitleAsAss } from '../../../src/engine/subtitles/subtitle-ass.js';
import { InputList } from '../../../src/plugins/render/input-list.js';
import { pictureGraph, type Picture, type Span } from '../../../src/plugins/render/picture.js';
import type { Clip, RenderOutput, Timeline } from '../../../src/plugins/render/timeline.js';

/**
 * A render's picture tried for real: media made by ffmpeg's lavfi sources in a workspace of its own, probed by the
 * engine's probe as the engine hands inputs to a builder, a Timeline written by hand around them, and the picture's
 * graph run by ffmpeg into a file the test reads back.
 */
export class Workspace {
  private constructor(readonly dir: string) {}

  static async create(): Promise<Workspace> {
    return new Workspace(await mkdtemp(path.join(os.tmpdir(), 'mediaflow-picture-')));
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  /** A file made by ffmpeg from lavfi sources (`-f lavfi -i <source>` each), probed. */
  async media(name: string, sources: string[], options: string[] = []): Promise<LocalInput> {
    const lavfi = sources.flatMap((source) => ['-f', 'lavfi', '-i', source]);
    await execa('ffmpeg', ['-v', 'error', '-y', ...lavfi, ...options, name], { cwd: this.dir });
    return this.probed(name);
  }

  /** One picture from a lavfi source. */
  image(name: string, source: string): Promise<LocalInput> {
    return this.media(name, [source], ['-frames:v', '1']);
  }

  /** A subtitle file, probed and converted to ASS as the engine hands it over. */
  async subtitles(name: string, text: string): Promise<LocalInput> {
    await writeFile(path.join(this.dir, name), text);
    const input = await this.probed(name);
    const ass = await subtitleAsAss('ffmpeg', this.dir, name, inputArgs(input, 'subtitle'), { timeoutMs: 30_000 });
    return { ...input, ass };
  }

  private async probed(name: string): Promise<LocalInput> {
    const facts = await probeFile(resolveBinaries().ffprobe, name, { cwd: this.dir, timeoutMs: 30_000 });
    return { file: name, source: `https://example.com/${name}`, facts };
  }

  /**
   * The picture of `timeline` over `span` (default: all of it) rendered to `name` (H.264 nearly lossless, so colours
   * read back within a few levels), with the script a transcription step would write when `heard` is given.
   */
  async render(name: string, timeline: Timeline, span?: Span, write?: (picture: Picture) => Record<string, string>) {
    const inputs = new InputList((input) => inputArgs(input));
    const picture = pictureGraph(timeline, inputs, span ?? { start: 0, end: timeline.output.duration });
    const files = { ...picture.files, ...(write ? write(picture) : {}), [`${name}.graph`]: picture.graph };
    for (const [file, content] of Object.entries(files)) await writeFile(path.join(this.dir, file), content);
    const encoder = ['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '4', '-pix_fmt', 'yuv420p'];
    await execa(
      'ffmpeg',
      ['-v', 'error', '-y', ...inputs.args(), '-filter_complex_script', `${name}.graph`, '-map', `[${picture.output}]`]
        .concat(encoder)
        .concat([name]),
      { cwd: this.dir },
    );
    return { file: path.join(this.dir, name), picture, inputs };
  }
}

/** A timeline of `clips` (track, index and path filled in from their order) in a small frame. */
export function timelineOf(
  clips: Array<Omit<Clip, 'index' | 'path'> & Partial<Pick<Clip, 'index' | 'path'>>>,
  output: Partial<RenderOutput> = {},
): Timeline {
  const counts = new Map<number, number>();
  const placed = clips.map((clip) => {
    const index = counts.get(clip.track) ?? 0;
    counts.set(clip.track, index + 1);
    return { index, path: `tracks[${clip.track}].clips[${index}]`, ...clip } as Clip;
  });
  return {
    output: {
      format: 'mp4',
      width: 160,
      height: 90,
      fps: 25,
      quality: 'balanced',
      background: '#000000',
      duration: Math.max(...placed.map((clip) => clip.end)),
      ...output,
    },
    clips: placed,
    merge: {},
  };
}

/** Frames of a file's video stream, counted by decoding it, and the decode's complaints (none for a clean file). */
export async function decodedFrames(file: string): Promise<{ frames: number; errors: string }> {
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', '-count_frames', '-select_streams', 'v:0'],
    ...['-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', file],
  ]);
  const { stderr } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
  return { frames: Number(stdout.trim()), errors: stderr.trim() };
}
