import type { TimeRange } from '../../sdk.js';

/**
 * Speech pauses found by ffmpeg's `silencedetect` (read back from its `-loglevel info` lines) and
 * the parts of the input a jump cut keeps around them.
 */

const SILENCE_LINE = /silence_(start|end): ([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/g;

/**
 * The silences `silencedetect` logged, in order. One still open when the stream ended (a
 * `silence_start` without its `silence_end`) lasts to `duration`.
 */
export function silencesIn(log: string, duration: number): TimeRange[] {
  const silences: TimeRange[] = [];
  let start: number | undefined;
  for (const [, edge, value] of log.matchAll(SILENCE_LINE)) {
    const time = Number(value);
    if (edge === 'start') start = time;
    else if (start !== undefined) {
      silences.push({ start, end: time });
      start = undefined;
    }
  }
  if (start !== undefined && start < duration) silences.push({ start, end: duration });
  return silences;
}

/** How a jump cut treats the silences: what it keeps of them, and the grid its cut points fall on. */
export interface CutOptions {
  /** Seconds of the input, the end of the last part kept. */
  duration: number;
  /** Seconds of a silence kept next to the sound on each side of it. */
  padding: number;
  /**
   * Seconds between cut points (one video frame), so every part kept holds whole frames and its
   * sound lasts exactly as long as its picture; 0 for sound alone, cut anywhere.
   */
  step: number;
}

/** Cut points within this of the input's start or end are taken as the start or end. */
const EDGE = 0.001;

/**
 * The parts of the input a jump cut keeps, in order, and the seconds it takes out: each silence
 * less `padding` at each side that has sound next to it (a silence at the start or the end of the
 * input is removed up to the edge). A silence too short to lose anything once padded stays whole.
 */
export function keptParts(silences: readonly TimeRange[], options: CutOptions): { kept: TimeRange[]; removed: number } {
  const { duration, padding, step } = options;
  const snap = (time: number) => (step > 0 ? Math.round(time / step) * step : time);
  const kept: TimeRange[] = [];
  let from = 0;
  for (const silence of silences) {
    const start = silence.start <= EDGE ? 0 : snap(silence.start + padding);
    const end = silence.end >= duration - EDGE ? duration : snap(silence.end - padding);
    // Silences come in order; one overlapping the part already cut away only cuts what is left of it.
    const cut = { start: Math.max(start, from), end: Math.min(end, duration) };
    if (cut.end - cut.start <= Math.max(step, EDGE) / 2) continue;
    if (cut.start > from) kept.push({ start: from, end: cut.start });
    from = cut.end;
  }
  if (duration - from > EDGE) kept.push({ start: from, end: duration });
  const removed = duration - kept.reduce((sum, part) => sum + (part.end - part.start), 0);
  return { kept, removed };
}
