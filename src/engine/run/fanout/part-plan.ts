import type { TimeRange } from '../../contract/times.js';
import type { VideoPackets } from './video-packets.js';

/** One part of a split encode: its first frame's time on the input's clock, the seek that reaches it, its frames. */
export interface PartSpan {
  start: number;
  /** `-ss`'s value: the time as ffprobe printed it, else rounded down to the microsecond (never past the frame). */
  seek: string;
  /** Where the part starts on the output's clock. */
  outputStart: number;
  frames: number;
  /** Seconds of input it covers. */
  seconds: number;
}

/**
 * How far before a window's bound a frame's time may be and still count as at it: ffprobe prints times to the
 * microsecond, and a bound that is a frame's start computed from the frame rate (`k / fps`) lands on either side of
 * the printed time (7.3073000000000001 against 7.307300 at 30000/1001 fps). A frame at a window's start is its
 * first frame, as the seek keeps it; one at its end is not in it.
 */
export const BOUND_SLACK = 1e-6;

/**
 * The length of the parts to plan for `seconds` of input: `partSeconds` (MEDIAFLOW_PART_SECONDS), made a little
 * longer or shorter so that the parts come in a multiple of `capacity`, the parts that can run at once (the slots, or
 * the workers' slots): they then end together, where ten parts on three workers would leave two workers idle while
 * the third encodes the tenth. Kept as asked when that would take it below two thirds or past one and a half of it.
 */
export function partLength(seconds: number, partSeconds: number, capacity: number): number {
  const asked = seconds / partSeconds;
  if (capacity < 2 || asked < 2) return partSeconds;
  const count = capacity * Math.max(1, Math.round(asked / capacity));
  const ratio = count / asked;
  return ratio >= 2 / 3 && ratio <= 1.5 ? seconds / count : partSeconds;
}

/**
 * Splits the frames of `windows` (the kept spans of the input, in order; the whole input when absent) into parts
 * of about `partSeconds`. A window's first part starts at its start; the next ones at the first keyframe at or past
 * each multiple of `partSeconds` from there (so that small steps between keyframes do not add up), each needing
 * nothing of another part to decode; a tail shorter than half a part stays with the part before it. The output's
 * clock runs through the windows one after the other. Returns no part when no frame is kept.
 */
export function planParts(packets: VideoPackets, partSeconds: number, windows?: readonly TimeRange[]): PartSpan[] {
  const spans: PartSpan[] = [];
  let offset = 0;
  for (const window of windows ?? [{ start: 0, end: Number.POSITIVE_INFINITY }]) {
    const inWindow = packets.times.filter(
      (time) => time >= window.start - BOUND_SLACK && time < window.end - BOUND_SLACK,
    );
    if (inWindow.length === 0) continue;
    const first = inWindow[0]!;
    const last = inWindow[inWindow.length - 1]!;
    // A whole input starts at its first frame, whose time is the output's too; a window at its start.
    const base = windows ? window.start : first;
    const starts = [base];
    let next = 1;
    for (const key of packets.keyframes) {
      if (key <= first || key > last || key - base < next * partSeconds - BOUND_SLACK) continue;
      // A split leaves each side at least half a part: no part of a few frames, which costs an encoder start.
      if (last - key < partSeconds / 2) break;
      starts.push(key);
      next = Math.floor((key - base) / partSeconds + BOUND_SLACK) + 1;
    }
    const frameSeconds = inWindow.length > 1 ? (last - first) / (inWindow.length - 1) : 0;
    const end = Math.min(window.end, last + frameSeconds);
    starts.forEach((start, index) => {
      const until = starts[index + 1] ?? end;
      spans.push({
        start,
        seek: packets.printed.get(start) ?? floorMicros(start),
        outputStart: offset + (windows ? start - window.start : start),
        frames: inWindow.filter((time) => time >= start - BOUND_SLACK && time < until - BOUND_SLACK).length,
        seconds: until - start,
      });
    });
    if (windows) offset += window.end - window.start;
  }
  return spans;
}

/** Seconds as `-ss` takes them, rounded down to the microsecond: a seek rounded up would drop the keyframe. */
const floorMicros = (seconds: number): string => (Math.floor(Math.max(0, seconds) * 1e6) / 1e6).toFixed(6);
