import { mediaError, paramError } from '../errors.js';
import type { LocalInput, Plan } from '../contract/plugin.js';

/**
 * Limits on how long an output may grow, whatever the inputs' timestamps say. A file's header may
 * lie about its length, and a container the probe cannot look into (Matroska, AVI, ...) is only
 * known by its claim: the final ffmpeg command of every plan is capped at the length the plan
 * expects plus a margin, so a lying input cannot make a longer output than what was checked.
 */

/**
 * The margin over the expected length: estimates (VBR MP3 without a header, rounding) must not cut a real output short.
 */
export const capSeconds = (expectedSeconds: number): number => expectedSeconds * 1.1 + 5;

/** The frame rate the frame cap allows at least: every built-in output's rate is at most this. */
const CAP_FPS = 120;

/** Refuses output longer than the limit: a 400 when the parameters alone say so, a 422 when the probed inputs do. */
export function checkOutputLength(
  seconds: number | undefined,
  maxDurationMs: number,
  knownFrom: 'params' | 'inputs',
): void {
  if (seconds === undefined || seconds * 1000 <= maxDurationMs) return;
  const message =
    `The output would last ${Math.round(seconds)} s, more than the limit of ${maxDurationMs / 1000} s ` +
    `(MEDIAFLOW_MAX_DURATION)`;
  throw knownFrom === 'params' ? paramError(message) : mediaError(message);
}

/**
 * Refuses output pictures larger than the limit: a 400 when the parameters alone size them (outputSize), a 422 when
 * the probed inputs do (Plan.frameSize).
 */
export function checkFrameSize(size: Plan['frameSize'], maxPixels: number, knownFrom: 'params' | 'inputs'): void {
  if (!size || size.width * size.height <= maxPixels) return;
  const message =
    `The output's pictures would be ${size.width}x${size.height} pixels, more than the limit of ${maxPixels} ` +
    'pixels (MEDIAFLOW_MAX_PIXELS)';
  throw knownFrom === 'params' ? paramError(message) : mediaError(message);
}

/**
 * The plan with its final command capped: `-t` at the expected length plus the margin (the
 * limit itself when the plan expects none) and `-frames:v` at that many seconds of the fastest
 * input's frame rate (at least 120 fps). They go right after the last input, where they are
 * output options a plugin's own later `-t` or `-frames:v` (a shorter one, from its parameters)
 * still overrides; a command without inputs gets them before its output file.
 */
export function cappedPlan(plan: Plan, inputs: readonly LocalInput[], maxDurationMs: number): Plan {
  const last = plan.commands.at(-1);
  if (!last) return plan;
  const seconds = plan.expectedSeconds ? capSeconds(plan.expectedSeconds) : maxDurationMs / 1000;
  const fps = Math.max(CAP_FPS, ...inputs.map((input) => input.facts.video?.fps ?? 0).filter(Number.isFinite));
  const caps = ['-t', seconds.toFixed(3), '-frames:v', String(Math.ceil(seconds * fps))];
  const lastInput = last.lastIndexOf('-i');
  const at = lastInput >= 0 ? lastInput + 2 : last.length - 1;
  const capped = [...last.slice(0, at), ...caps, ...last.slice(at)];
  return { ...plan, commands: [...plan.commands.slice(0, -1), capped] };
}
