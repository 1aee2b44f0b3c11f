import { decimal } from './graph-numbers.js';

/**
 * Ducking on a timeline: a music clip with `duck` dips while any voice sounds. mix-audio keys a compressor on the
 * voice, which needs the voice's loudness measured first (a second decode) to set its threshold, and dips by as much
 * as the voice is over it. On a timeline every voice's span is known exactly, so the dip is a gain envelope computed
 * from those spans instead: the same depth whatever the voice's level, no measuring pass, and a cost of one
 * expression a frame. The music is down by `depthDb` from `leadSeconds` before a voice starts (so that its first
 * syllable is clear) to its end, and comes back over `releaseSeconds` (mix-audio's release); voices closer than
 * `bridgeSeconds` count as one, so that the music does not rise between sentences.
 */
export const DUCK = { depthDb: 12, leadSeconds: 0.25, releaseSeconds: 0.5, bridgeSeconds: 1 };

/** Samples of a ducked music's frames, so that its gain, computed a frame at a time, moves in steps of 10 ms. */
const DUCK_FRAME_SAMPLES = 480;

/**
 * Spans one volume filter dips under: ffmpeg refuses an expression of more than about 4,000 characters (90 spans),
 * so a long timeline's are shared among filters, each enabled only from its first span's dip to its last one's end.
 */
const SPANS_PER_FILTER = 24;

/** When something sounds on the output's clock, in seconds. */
export interface Span {
  start: number;
  end: number;
}

/** The spans in time order, those closer than DUCK.bridgeSeconds (or overlapping) joined into one. */
export function bridgedSpans(spans: readonly Span[]): Span[] {
  // Once the gaps shorter than the ramps are bridged, no two spans' envelopes overlap, so they add up.
  const bridge = Math.max(DUCK.bridgeSeconds, DUCK.leadSeconds + DUCK.releaseSeconds);
  const joined: Span[] = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    const last = joined.at(-1);
    if (last && span.start - last.end < bridge) last.end = Math.max(last.end, span.end);
    else joined.push({ ...span });
  }
  return joined;
}

/** `t - x` in ffmpeg's expression syntax, for an x of either sign. */
const minus = (x: number): string => (x < 0 ? `t+${decimal(-x)}` : `t-${decimal(x)}`);

/**
 * The filters that dip a clip spanning `clip` (on the output's clock) under the voices' `spans` (bridged), on the
 * clip's own clock (its first sample at t = 0); none when no voice comes near it. Each span is a trapezoid from 0
 * to 1 (down, held, back up), and the gain is 10^(-depth x their sum / 20): linear in dB.
 */
export function duckingFilters(clip: Span, spans: readonly Span[]): string[] {
  const lead = DUCK.leadSeconds;
  const release = DUCK.releaseSeconds;
  const dips = spans
    .filter((span) => span.start - lead < clip.end && span.end + release > clip.start)
    .map((span) => ({ down: span.start - lead - clip.start, up: span.end + release - clip.start }));
  if (dips.length === 0) return [];
  const filters = [`asetnsamples=n=${DUCK_FRAME_SAMPLES}:p=0`];
  for (let first = 0; first < dips.length; first += SPANS_PER_FILTER) {
    const group = dips.slice(first, first + SPANS_PER_FILTER);
    const sum = group
      .map(
        ({ down, up }) =>
          `clip((${minus(down)})/${decimal(lead)},0,1)*clip((${decimal(up)}-t)/${decimal(release)},0,1)`,
      )
      .join('+');
    const from = Math.max(0, group[0]!.down);
    const to = group.at(-1)!.up;
    filters.push(
      `volume=eval=frame:enable='between(t,${decimal(from)},${decimal(to)})'` +
        `:volume='pow(10,${decimal(-DUCK.depthDb / 20)}*(${sum}))'`,
    );
  }
  return filters;
}
