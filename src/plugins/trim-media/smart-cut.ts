import {
  argv,
  concatList,
  concatListArgs,
  type LocalInput,
  type MediaFacts,
  muxerFor,
  type Plan,
  type Quality,
  videoEncoder,
  type VideoContainer,
} from '../../sdk.js';

/**
 * A smart cut: a precise cut of H.264 in MP4 that encodes only the frames before the first keyframe of the kept
 * part (and those after the last one, when it ends before the input does) and copies the packets between, so
 * that its time is about that of reading the kept part. docs/operations.md#trim-media says which inputs get it.
 */

/** x264's name for each H.264 profile it can write again; other profiles (High 10, 4:2:2, ...) are encoded whole. */
const X264_PROFILES: Record<string, string> = {
  'Constrained Baseline': 'baseline',
  Baseline: 'baseline',
  Main: 'main',
  High: 'high',
};

/** Slack on keyframe times read back from a log (printed to the microsecond) and on frame times. */
const EPSILON = 1e-3;

/** Seconds for an ffmpeg option: microseconds at most, with no floating-point tail. */
const seconds = (value: number): string => String(Math.round(value * 1e6) / 1e6);

/**
 * Whether a precise cut of this input into `container` may be a smart cut: H.264 8-bit 4:2:0 in a profile x264
 * writes, upright (no display matrix turning it), with AAC sound or none, read by the MP4/MOV demuxer (whose
 * keyframes are the sync samples of its index, where a decoder can start) with a plain `1/N` time base, into
 * mp4 or mov.
 */
export function smartCutFits(facts: MediaFacts, container: string): boolean {
  const { video, audio } = facts;
  return (
    (container === 'mp4' || container === 'mov') &&
    facts.formatName.split(',')[0] === 'mov' &&
    video?.codec === 'h264' &&
    video.pixFmt === 'yuv420p' &&
    // An encoded part is turned upright (ffmpeg applies the display matrix), a copied one is not.
    !video.rotation &&
    X264_PROFILES[video.profile ?? ''] !== undefined &&
    /^1\/\d+$/.test(video.timeBase ?? '') &&
    video.fps > 0 &&
    (!audio || audio.codec === 'aac')
  );
}

export interface SmartCut {
  media: LocalInput;
  /** Opens the input (BuildContext.input). */
  input: (input: LocalInput) => string[];
  output: string;
  container: VideoContainer;
  quality: Quality;
  /** The first kept frame's time and the end of the kept part (the input's end when `toEnd`). */
  start: number;
  end: number;
  toEnd: boolean;
}

/**
 * The plan of a smart cut, from the input's keyframe times within the kept part; undefined when it would copy
 * nothing (no two keyframes in the kept part, or none before its end when it runs to the input's end), for
 * the caller to encode the whole part instead.
 */
export function smartCutPlan(cut: SmartCut, keyframes: readonly number[]): Plan | undefined {
  const { media, input, start, end, toEnd } = cut;
  // A keyframe at the end itself ends the copy there, with nothing after it to encode.
  const inside = keyframes.filter((time) => time >= start - EPSILON && time <= end + EPSILON);
  const first = inside[0];
  // The copy ends on a keyframe, where the next part starts with a picture of its own; or at the input's end.
  const last = toEnd ? end : inside.at(-1);
  if (first === undefined || last === undefined || last - first < EPSILON) return undefined;
  const video = media.facts.video!;
  const timescale = video.timeBase!.slice(2);
  // Each part keeps the input's time base: the concat demuxer reads every part's timestamps in the first one's.
  const videoOnly = ['-map', '0:v:0', '-an', '-sn', '-dn', '-map_chapters', '-1'];
  // x264 with the input's profile, and parameter sets numbered apart from the input's (which x264 numbers 0),
  // which the copied packets keep: each part's are written before its first keyframe, and neither replaces
  // the other's.
  const encoder = argv(videoEncoder(cut.container, { quality: cut.quality }), [
    '-profile:v',
    X264_PROFILES[video.profile!]!,
    '-x264-params',
    'sps-id=1',
    '-video_track_timescale',
    timescale,
  ]);
  const encoded = (from: number, to: number, file: string) =>
    argv(['-ss', seconds(from)], input(media), ['-t', seconds(to - from)], videoOnly, encoder, ['-f', 'mp4', file]);
  const head = first - start > EPSILON ? encoded(start, first, 'head.mp4') : undefined;
  const tail = !toEnd && end - last > EPSILON ? encoded(last, end, 'tail.mp4') : undefined;
  // Copied from the keyframe on: seeking a hair past it lands on it, not on the one before. A copy that stops
  // on a keyframe is split there by the segment muxer, which splits only on keyframes, as `-t` would stop in
  // decoding order and keep or lose the frames a B-frame reorder puts around the end.
  const copy = argv(
    ['-ss', seconds(first + EPSILON / 2)],
    input(media),
    !toEnd && ['-t', seconds(last - first + 1)],
    videoOnly,
    // The keyframe, a hair before the seek point, at zero rather than rounded to a frame before it.
    ['-c:v', 'copy', '-avoid_negative_ts', 'make_zero'],
    toEnd
      ? ['-video_track_timescale', timescale, '-f', 'mp4', 'middle.mp4']
      : [
          '-f',
          'segment',
          '-segment_format',
          'mp4',
          '-segment_format_options',
          `video_track_timescale=${timescale}`,
          '-segment_times',
          seconds(last - first - EPSILON),
          'middle%03d.mp4',
        ],
  );
  const parts = [
    head && { file: 'head.mp4', duration: first - start },
    { file: toEnd ? 'middle.mp4' : 'middle000.mp4', ...(tail ? { duration: last - first } : {}) },
    tail && { file: 'tail.mp4' },
  ].filter((part) => part !== undefined);
  const { audio } = media.facts;
  return {
    files: { 'parts.txt': concatList(parts) },
    expectedSeconds: end - start,
    commands: [
      ...[head, copy, tail].filter((command) => command !== undefined),
      argv(
        concatListArgs('parts.txt', 'video'),
        // The sound is copied too, from its first packet at or after the first kept frame's time (AAC's packets
        // last 1024 samples, about 21 ms): its timestamps are kept, so it stays in sync with the picture, and
        // copying spares both an encoder's time and a second generation of loss.
        audio && ['-ss', seconds(start)],
        audio && input(media),
        ['-t', seconds(end - start), '-map', '0:v:0'],
        audio && ['-map', '1:a:0'],
        ['-c:v', 'copy', '-map_chapters', '-1'],
        // Not the packets before it, which the seek to the keyframe before `start` brings along.
        audio && ['-c:a', 'copy', '-copypriorss:a', '0'],
        muxerFor(cut.container),
        [cut.output],
      ),
    ],
  };
}
