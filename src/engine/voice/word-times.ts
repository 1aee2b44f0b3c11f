import { weightOf } from './text-units.js';
import type { WordSpan } from './voice-types.js';
import type { TimedWord } from '../contract/speech.js';

/**
 * When each word of a sentence is spoken, within the sentence's exact start and end: from the engine's own word
 * starts where it gave them (`anchors`, seconds on the same clock, null where it gave none), the words between two
 * known starts sharing that time by their lengths; without anchors, every word its share of the whole sentence by
 * its length. A word ends where the next begins; the last ends with the sentence.
 */
export function placeWords(
  words: readonly WordSpan[],
  start: number,
  end: number,
  anchors?: ReadonlyArray<number | null>,
): TimedWord[] {
  const clamp = (time: number) => Math.min(end, Math.max(start, time));
  const starts: Array<number | null> = words.map((_, i) => {
    const anchor = anchors?.[i];
    return anchor === null || anchor === undefined ? null : clamp(anchor);
  });
  // The first word starts with the sentence: its audio was trimmed to where the speech begins.
  starts[0] = start;
  // Starts must not run backwards: an anchor before an earlier one is dropped.
  let latest = start;
  for (let i = 1; i < starts.length; i++) {
    if (starts[i] !== null && starts[i]! < latest) starts[i] = null;
    if (starts[i] !== null) latest = starts[i]!;
  }
  for (let i = 0; i < starts.length;) {
    let next = i + 1;
    while (next < starts.length && starts[next] === null) next++;
    const from = starts[i]!;
    const to = next < starts.length ? starts[next]! : end;
    const run = words.slice(i, next).map((word) => weightOf(word.text));
    const total = run.reduce((sum, weight) => sum + weight, 0);
    let at = from;
    for (let k = 1; k < run.length; k++) {
      at += ((to - from) * run[k - 1]!) / total;
      starts[i + k] = at;
    }
    i = next;
  }
  return words.map((word, i) => ({
    text: word.text,
    start: starts[i]!,
    end: i + 1 < words.length ? starts[i + 1]! : end,
  }));
}
