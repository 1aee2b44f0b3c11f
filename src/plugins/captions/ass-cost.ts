import { mediaError } from '../../sdk.js';
import { assSeconds, dialogues } from './ass-script.js';

/**
 * What drawing an ASS script into a video costs libass, counted from the script alone, before any frame is decoded:
 * each event weighs the frames it is on screen, more with blur and drawings. libass draws every event on screen at
 * every frame, so 50,000 blurred lines shown together on a short video are minutes of work from a few megabytes.
 */

/**
 * Weighted event-frames a script may cost: a two-hour film's subtitles cost about 200,000, a heavily typeset episode
 * under a million. A million take a few minutes on a busy two-core machine, where a line costs about 0.3 ms a frame.
 */
export const SCRIPT_MAX_COST = 1_000_000;

/**
 * An event's weight: 1 for text, plus a fifth of its strongest blur (`\blur` or `\be`, at most libass's 100: a blur
 * of 20 made a line 3.7 times as slow), plus 10 and a hundredth a point for a drawing (`\p1`: a drawing across the
 * frame that moves is drawn again every frame, costing about 15 lines).
 */
function eventWeight(text: string): number {
  let blur = 0;
  let drawing = false;
  let inDrawing = false;
  let points = 0;
  // Override blocks `{...}` set tags; the text between them is drawn, as a drawing's points while `\p` is above 0.
  for (const [, tags, plain] of text.matchAll(/\{([^}]*)\}?|([^{]+)/g)) {
    if (tags !== undefined) {
      for (const [, value] of tags.matchAll(/\\(?:blur|be)\s*(\d+(?:\.\d*)?)/gi)) blur = Math.max(blur, Number(value));
      const mode = [...tags.matchAll(/\\p\s*(\d+)/gi)].at(-1);
      if (mode) inDrawing = Number(mode[1]) > 0;
      drawing ||= inDrawing;
    } else if (inDrawing) {
      points += (plain!.match(/-?\d+(?:\.\d+)?/g)?.length ?? 0) / 2;
    }
  }
  return 1 + Math.min(blur, 100) / 5 + (drawing ? 10 + points / 100 : 0);
}

/** The video the script is drawn into: its frame rate, and its length when known (later events are never drawn). */
export interface DrawnInto {
  fps: number;
  duration?: number;
}

/**
 * The script's cost: every `Dialogue` event of its events section, the frames it is on screen within the video times
 * its weight (eventWeight), added up. Fields are found by the section's `Format:` line, as libass finds them.
 */
export function scriptCost(ass: string, video: DrawnInto): number {
  const end = video.duration ?? Infinity;
  let cost = 0;
  for (const event of dialogues(ass)) {
    const shown = Math.min(assSeconds(event.field('end')), end) - Math.max(assSeconds(event.field('start')), 0);
    // An event shown at all is drawn on a frame at least.
    if (shown > 0) cost += Math.max(1, Math.round(shown * video.fps)) * eventWeight(event.text);
  }
  return Math.round(cost);
}

/** Refuses (422) the subtitles of `source` when drawing them would cost more than SCRIPT_MAX_COST. */
export function checkScriptCost(ass: string, video: DrawnInto, source: string): void {
  const cost = scriptCost(ass, video);
  if (cost <= SCRIPT_MAX_COST) return;
  throw mediaError(
    `The subtitles of ${source} would cost ${cost} to draw (each event's frames on screen, weighted by blur and ` +
      `drawings), more than the limit of ${SCRIPT_MAX_COST}`,
  );
}
