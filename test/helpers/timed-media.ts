import { execa } from 'execa';

/**
 * Media whose content tells time, for operations that cut, split or retime: every frame carries its
 * own index, and a flash and a beep start together, so a test can read which frames survived and
 * whether picture and sound are still in step.
 */

const WIDTH = 160;
const HEIGHT = 120;
/** Bits of the frame index, drawn as columns BIT_WIDTH wide across the top half (white is 1). */
const BITS = 10;
const BIT_WIDTH = 16;

export interface CountingClip {
  /** Seconds. */
  seconds: number;
  fps?: number;
  /** Frames between keyframes (x264's -g); keyframes fall exactly on multiples of it. */
  gop?: number;
  /** B-frames, so that decode order differs from display order, as in most real videos. */
  bframes?: number;
  /** When the bottom half turns white and a 1 kHz beep starts, for 0.4 s (none when absent). */
  flashAt?: number;
  /** Seconds after which the flash and the beep come again, and again, from `flashAt` on (once when absent). */
  flashEvery?: number;
  /** `mp4` (H.264/AAC), `mkv` (H.264/AAC) or `webm` (VP9/Opus). */
  container?: 'mp4' | 'mkv' | 'webm';
  /**
   * `mpeg4` writes the picture as MPEG-4 Part 2 (mp4 or mkv), which operations that keep H.264 must encode; its
   * keyframes fall only where the GOP puts them too.
   */
  codec?: 'h264' | 'mpeg4';
  /**
   * A pattern drifting across the bottom half (dark enough to tell from the flash), so that an encoder has motion
   * to predict: a cut where it starts afresh shows, which a still picture would hide.
   */
  moving?: boolean;
}

/** Writes a clip whose frames carry their index (see module comment) to `file`. */
export async function countingClip(file: string, clip: CountingClip): Promise<void> {
  const { seconds, fps = 25, gop = fps, bframes = 0, flashAt, flashEvery, container = 'mp4', codec = 'h264' } = clip;
  const background = clip.moving ? `2*mod(X+Y+3*N,64)` : '0';
  // Counted in frames (N), exact, where the time T would round: a flash then starts on the frame the beep does.
  const [from, every, lasting] = [Math.round((flashAt ?? 0) * fps), Math.round((flashEvery ?? 0) * fps), 0.4 * fps];
  const flash =
    flashAt === undefined
      ? background
      : flashEvery === undefined
        ? `if(between(T,${flashAt},${flashAt + 0.39}),255,${background})`
        : `if(gte(N,${from})*lt(mod(N-${from},${every}),${lasting}),255,${background})`;
  const bits = `255*mod(floor(N/pow(2,floor(X/${BIT_WIDTH}))),2)`;
  const tone = '0.8*sin(2*PI*1000*t)';
  const beep =
    flashAt === undefined
      ? '0'
      : flashEvery === undefined
        ? `if(between(t,${flashAt},${flashAt + 0.4}),${tone},0)`
        : `if(gte(t,${flashAt})*lt(mod(t-${flashAt},${flashEvery}),0.4),${tone},0)`;
  const video =
    container === 'webm'
      ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-g', String(gop), '-keyint_min', String(gop)]
      : codec === 'mpeg4'
        ? ['-c:v', 'mpeg4', '-q:v', '3', '-bf', String(bframes), '-g', String(gop)]
        : ['-c:v', 'libx264', '-preset', 'veryfast', '-bf', String(bframes), '-g', String(gop)];
  await execa('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `color=c=black:s=${WIDTH}x${HEIGHT}:r=${fps}:d=${seconds},format=gray,` +
      `geq=lum='if(lt(Y,${HEIGHT / 2}),${bits},${flash})',format=yuv420p`,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc=exprs='${beep}':s=48000:d=${seconds}`,
    ...video,
    // Keyframes only where the GOP puts them, so a test knows where they are.
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    ...(container === 'webm' ? ['-c:a', 'libopus'] : ['-c:a', 'aac']),
    '-f',
    container === 'mp4' ? 'mp4' : container === 'mkv' ? 'matroska' : 'webm',
    '-y',
    file,
  ]);
}

/**
 * Writes `seconds` of a quiet 440 Hz tone with a loud 1 kHz beep from `beepAt` for 0.4 s (media.ts'
 * beepAt tells them apart), in a container ffmpeg picks by name.
 */
export async function beepingTone(file: string, seconds: number, beepAt: number): Promise<void> {
  const sound = `if(between(t,${beepAt},${beepAt + 0.4}),0.8*sin(2*PI*1000*t),0.03*sin(2*PI*440*t))`;
  await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `aevalsrc=exprs='${sound}':s=44100:d=${seconds}`, file]);
}

export interface ShownFrame {
  /** Presentation time, in seconds. */
  time: number;
  /** The index the frame carries: which frame of the source it is. */
  index: number;
  /** Whether it is a frame of the flash. */
  flash: boolean;
}

/** Every frame of a file's first video stream, decoded, in display order. */
export async function shownFrames(file: string): Promise<ShownFrame[]> {
  const { stdout: times } = await execa('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'frame=pts_time', '-of', 'json', file],
  ]);
  const stamps = (JSON.parse(times) as { frames: Array<{ pts_time: string }> }).frames.map((f) => Number(f.pts_time));
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-map', '0:v:0', '-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'],
    // A last pixel of 10 is a newline's byte, which execa would strip.
    { encoding: 'buffer', stripFinalNewline: false },
  );
  const pixels = stdout as unknown as Uint8Array;
  const size = WIDTH * HEIGHT;
  if (pixels.length !== stamps.length * size)
    throw new Error(`${file}: ${stamps.length} frames, ${pixels.length} bytes`);
  return stamps.map((time, i) => {
    const frame = pixels.subarray(i * size, (i + 1) * size);
    let index = 0;
    for (let bit = 0; bit < BITS; bit++)
      if (frame[(HEIGHT / 4) * WIDTH + bit * BIT_WIDTH + BIT_WIDTH / 2]! > 128) index |= 1 << bit;
    let sum = 0;
    for (let p = size / 2; p < size; p++) sum += frame[p]!;
    return { time, index, flash: sum / (size / 2) > 128 };
  });
}

/** Where the flash starts: the time of the first flash frame. */
export function flashStart(frames: ShownFrame[]): number {
  const first = frames.find((frame) => frame.flash);
  if (!first) throw new Error('no flash');
  return first.time;
}

/** Runs of consecutive source frames, as `[first, last]` index pairs: `[[0, 57], [125, 199]]`. */
export function frameRuns(frames: ShownFrame[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const { index } of frames) {
    const last = runs.at(-1);
    if (last && index === last[1] + 1) last[1] = index;
    else runs.push([index, index]);
  }
  return runs;
}
