/**
 * Where a video's keyframes are, for operations that copy streams from one (trim, cut, split):
 * a plan's first stage runs `keyframeListing`, and its `next` reads the times with `keyframesIn`.
 * Only keyframes are decoded (`-skip_frame nokey`) and only between the two times, so the listing
 * costs about as much as decoding one picture per keyframe of the window, wherever the window lies;
 * a decoder that ignores `-skip_frame` (VP9's) decodes the whole window, and the times are still
 * those of its keyframes only.
 */

/** Seconds as ffmpeg takes them, without exponent notation. */
const seconds = (value: number): string => Math.max(0, value).toFixed(6);

/**
 * An ffmpeg command that logs the times of the first video stream's keyframes from `from` to `to`
 * seconds of the input (its own timestamps, `-copyts`). `input` is the input's options and
 * `-i <file>` as BuildContext.input gives them; nothing is written. The stage that runs it should
 * expect `to` seconds (`expectedSeconds`): the cap of a stage's final command counts from the
 * timestamps' zero, not from `from`.
 */
export function keyframeListing(input: readonly string[], from: number, to: number): string[] {
  return [
    // showinfo logs each frame at the info level; the default level logs errors only.
    '-loglevel',
    'info',
    '-skip_frame',
    'nokey',
    '-ss',
    seconds(from),
    '-t',
    seconds(Math.max(to - from, 0.001)),
    '-copyts',
    ...input,
    '-map',
    '0:v:0',
    '-vf',
    'showinfo',
    '-f',
    'null',
    '-',
  ];
}

/** The keyframe times a `keyframeListing` command logged, in seconds, ascending and without repeats. */
export function keyframesIn(log: string): number[] {
  const times = new Set<number>();
  // Only frames showinfo calls keys: some decoders (VP9's) ignore -skip_frame and decode every frame.
  for (const match of log.matchAll(/\[Parsed_showinfo[^\]]*\][^\n]* pts_time:(-?[\d.]+)[^\n]* iskey:1/g)) {
    const time = Number(match[1]);
    if (Number.isFinite(time)) times.add(time);
  }
  return [...times].sort((a, b) => a - b);
}
