/**
 * The picture's clock: a span of the output's clock (the whole timeline for a short, a scene of a long one) counted
 * in frames from its start. Every time of the timeline becomes a frame number here, rounded once, so clips that meet
 * on the timeline meet on a frame and every stream of the picture has an exact number of frames.
 */

/** A part of the output's clock, in seconds: the picture drawn from `start` to `end`. */
export interface Span {
  start: number;
  end: number;
}

/** A number as a filter graph writes it: decimals, never an exponent. */
export const decimal = (value: number): string => String(Math.round(value * 1e6) / 1e6);

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** A frame rate as a fraction: whole rates as they are, NTSC's (29.97, 23.976) as n/1001, others to a thousandth. */
function rational(fps: number): [number, number] {
  if (Number.isInteger(fps)) return [fps, 1];
  const ntsc = Math.round(fps * 1.001);
  if (Math.abs(fps * 1.001 - ntsc) < 1e-3) return [ntsc * 1000, 1001];
  const thousandths = Math.round(fps * 1000);
  const divisor = gcd(thousandths, 1000);
  return [thousandths / divisor, 1000 / divisor];
}

export class FrameClock {
  /** Frames of the span. */
  readonly frames: number;
  /** The frame rate as ffmpeg reads it: `30`, `30000/1001`. */
  readonly rate: string;
  /** One frame's duration, the time base of every stream of the picture: `1/30`. */
  readonly timeBase: string;
  private readonly fraction: [number, number];

  constructor(
    fps: number,
    readonly span: Span,
  ) {
    this.fraction = rational(fps);
    const [num, den] = this.fraction;
    this.rate = den === 1 ? String(num) : `${num}/${den}`;
    this.timeBase = `${den}/${num}`;
    this.frames = this.frame(span.end);
  }

  /** The frame of the span at time `seconds` of the timeline (before the span: negative). */
  frame(seconds: number): number {
    const [num, den] = this.fraction;
    return Math.round(((seconds - this.span.start) * num) / den);
  }

  /** The seconds `frames` frames last, as a filter graph writes them. */
  seconds(frames: number): string {
    return decimal(this.duration(frames));
  }

  /** The seconds `frames` frames last. */
  duration(frames: number): number {
    const [num, den] = this.fraction;
    return (frames * den) / num;
  }
}
