import type { LocalInput } from '../../sdk.js';

/**
 * The inputs of a render's one ffmpeg command, shared by the picture and the sound graphs: each file is opened
 * once however many clips use it (with the same options), and a graph refers to it by its index (`[3:v]`).
 */
export class InputList {
  /** Each input's options, and the key that shares it (none for an input of its own). */
  private readonly opened: Array<{ key?: string; file: string; args: string[] }> = [];

  /**
   * @param open the engine's safe options for opening an input (BuildContext.input), ending with `-i <file>`.
   */
  constructor(private readonly open: (input: LocalInput) => string[]) {}

  /**
   * The index of `media` opened with `options` before it (`-stream_loop -1`), opening it if no graph has yet.
   */
  indexOf(media: LocalInput, options: readonly string[] = []): number {
    const key = JSON.stringify([media.file, options]);
    const found = this.opened.findIndex((entry) => entry.key === key);
    if (found >= 0) return found;
    this.opened.push({ key, file: media.file, args: [...options, ...this.open(media)] });
    return this.opened.length - 1;
  }

  /**
   * The index of a new input of `media` opened with `options`, never shared: for a reader that must go at its own pace.
   * ffmpeg hands every frame it decodes of a stream to each of the graph's readers of it at once, so a clip that reads
   * an input another clip read long before it holds all that was decoded for the other until its own time comes (a
   * song used twice, minutes apart, holds minutes of decoded sound).
   */
  ownIndex(media: LocalInput, options: readonly string[] = []): number {
    this.opened.push({ file: media.file, args: [...options, ...this.open(media)] });
    return this.opened.length - 1;
  }

  /** Every input's options, in index order, for the command line. */
  args(): string[] {
    return this.opened.flatMap((entry) => entry.args);
  }

  /** The workspace files opened, each once: what the command reads of the inputs. */
  files(): string[] {
    return [...new Set(this.opened.map((entry) => entry.file))];
  }
}
