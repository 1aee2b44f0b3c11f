import type { FrameClock } from './clock.js';
import type { FilterGraph } from './graph.js';
import type { TransitionType } from './timeline.js';

/**
 * A run of full-frame clips on one track, back to back or passing from one to the next by a transition, joined into
 * one stream: cuts by `concat`, transitions by `xfade` over the two clips' overlap. Nothing is composited: each frame
 * of the run is one clip's, or during a transition the blend of two.
 */

/** xfade's name of each transition (the same words: only names from this table reach the graph). */
const XFADE: Record<TransitionType, string> = {
  fade: 'fade',
  wipeleft: 'wipeleft',
  wiperight: 'wiperight',
  slideup: 'slideup',
  slidedown: 'slidedown',
  slideleft: 'slideleft',
  slideright: 'slideright',
  circleopen: 'circleopen',
  dissolve: 'dissolve',
};

/** A clip's stream in a run: its frames [from, to) on the span's clock, and how it follows the piece before it. */
export interface Piece {
  label: string;
  from: number;
  to: number;
  /** A transition from the piece before, over their overlap (the earlier's `to` is past this one's `from`). */
  transition?: TransitionType;
}

/**
 * The run's pieces as one stream of frames from the first's `from` to the last's `to`, numbered from 0. Each stream is
 * renumbered after a join, on the frames' time base: concat guesses a segment's length from its frames' times, which
 * a segment of one frame does not tell, and writes them in microseconds; xfade reads its offset on its first input's
 * clock.
 */
export function joinRun(graph: FilterGraph, clock: FrameClock, pieces: readonly Piece[]): string {
  const start = pieces[0]!.from;
  let cut: string[] = [pieces[0]!.label];
  const renumber = [`settb=${clock.timeBase}`, 'setpts=N'];
  const joinCuts = () =>
    cut.length === 1 ? cut[0]! : graph.chain(cut, [`concat=n=${cut.length}:v=1:a=0`, ...renumber]);
  for (const [i, piece] of pieces.entries()) {
    if (i === 0) continue;
    const overlap = pieces[i - 1]!.to - piece.from;
    if (piece.transition && overlap > 0) {
      const before = joinCuts();
      const xfade =
        `xfade=transition=${XFADE[piece.transition]}:duration=${clock.seconds(overlap)}` +
        `:offset=${clock.seconds(piece.from - start)}`;
      cut = [graph.chain([before, piece.label], [xfade, ...renumber])];
    } else cut.push(piece.label);
  }
  return joinCuts();
}
