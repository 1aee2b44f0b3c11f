import type { MediaFacts } from '../../sdk.js';

/** Seconds as ffmpeg options and messages take them: at most three decimals (`12.5`, `2.32`). */
export const seconds = (value: number): string => String(Math.round(value * 1000) / 1000);

/**
 * The start of the first frame at or after `time`, on the picture's frame grid, capped at the input's
 * end (`time` itself without a picture). Cutting there keeps the same frames as cutting at `time`,
 * and lets the sound be cut at the instant the picture changes: no join ever shifts one against the other.
 */
export function frameEdge(time: number, facts: MediaFacts): number {
  const fps = facts.video?.fps ?? 0;
  if (!(fps > 0)) return time;
  // A millionth of a frame of slack: 2.32 s at 25 fps is frame 57.99999999999999 in binary.
  const edge = Math.ceil(time * fps - 1e-6) / fps;
  return facts.duration === undefined ? edge : Math.min(edge, facts.duration);
}

/** Half the picture's frame time (a millisecond without a picture): times closer than this are the same frame. */
export const halfFrame = (facts: MediaFacts): number => {
  const fps = facts.video?.fps ?? 0;
  return fps > 0 ? 0.5 / fps : 0.001;
};
