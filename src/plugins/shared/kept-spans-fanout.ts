import {
  evenPadFilter,
  type FanoutSpec,
  frameByFrame,
  type LocalInput,
  splitsInParts,
  type TimeRange,
  type VideoContainer,
} from '../../sdk.js';
import { soundEncoder } from './kept-container.js';

/** An encode that keeps spans of a video input, frame for frame, with nothing drawn on it (trim, cut). */
export interface KeptSpans {
  media: LocalInput;
  /** Opens the input (BuildContext.input). */
  input: (media: LocalInput) => string[];
  /** The kept spans, in order, each cut on a frame's start (so that the sound is cut at the same instants). */
  windows: readonly TimeRange[];
  container: VideoContainer;
  /** The picture's encoder options, as the one pass has them. */
  videoArgs: readonly string[];
  muxer: readonly string[];
  output: string;
}

/**
 * The fan-out of such an encode (docs/fanout.md), or undefined when it cannot be joined by stream copy
 * (`splitsInParts`). Each part is the one pass's picture (padded to an even size where it is odd), the sound is
 * the kept spans' own, encoded once.
 * Chapters are left out of both, as the one pass leaves them out: they would point at the uncut times.
 */
export function keptSpansFanout(kept: KeptSpans): FanoutSpec | undefined {
  const { media, videoArgs } = kept;
  const { video, audio } = media.facts;
  if (!video || !splitsInParts(videoArgs) || kept.windows.length === 0) return undefined;
  const pad = evenPadFilter(videoArgs, video);
  const noChapters = ['-map_chapters', '-1'];
  const audioArgs = audio ? [...soundEncoder(kept.container, media.facts), ...noChapters] : undefined;
  return frameByFrame({
    input: media,
    opened: kept.input(media),
    // No filter depends on time: the part's own clock, from 0, is all it needs.
    filters: (_shift, reset) => ['-map', '0:v:0', '-vf', pad ? `${pad},${reset}` : reset],
    videoArgs: [...videoArgs, ...noChapters],
    ...(audioArgs ? { audioArgs } : {}),
    windows: kept.windows,
    muxer: kept.muxer,
    output: kept.output,
  });
}
