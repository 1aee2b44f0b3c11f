import {
  argv,
  audioEncoder,
  concatList,
  concatListArgs,
  containerOf,
  CONTRACT_VERSION,
  definePlugin,
  evenPadFilter,
  fanoutParam,
  keptFrameTimes,
  isVideoContainer,
  keyframeListing,
  keyframesIn,
  type LocalInput,
  mediaError,
  type MediaFacts,
  Param,
  paramError,
  type Plan,
  qualityParam,
  type Quality,
  type TimeRange,
  timeWithin,
  Type,
  videoCodecFor,
  type VideoContainer,
} from '../sdk.js';
import { containerMuxer, encodedOutput } from './shared/kept-container.js';
import { keptSpansFanout } from './shared/kept-spans-fanout.js';
import { segmentArgs, segmentName } from './shared/segments.js';
import { frameEdge, halfFrame, seconds } from './shared/timeline.js';

/** Ranges one request may remove: each kept part is an input of the ffmpeg command that joins them. */
const MAX_RANGES = 100;

/**
 * The parts of the input that `remove` leaves, in order. Ranges are merged where they overlap or
 * touch, and every cut is moved up to the next frame's start (which keeps the same frames), so that
 * the sound is cut at the instant the picture is and stays in sync across every join.
 */
function keptSpans(remove: readonly TimeRange[], facts: MediaFacts): TimeRange[] {
  const duration = facts.duration!;
  for (const range of remove) timeWithin('remove', range.end, facts);
  const cuts = remove
    .map((range) => ({ start: frameEdge(range.start, facts), end: frameEdge(range.end, facts) }))
    // A range within one frame's time takes no frame out.
    .filter((cut) => cut.end > cut.start)
    .sort((a, b) => a.start - b.start);
  const kept: TimeRange[] = [];
  let cursor = 0;
  for (const cut of cuts) {
    if (cut.start > cursor) kept.push({ start: cursor, end: cut.start });
    cursor = Math.max(cursor, cut.end);
  }
  if (cursor < duration) kept.push({ start: cursor, end: duration });
  // A millisecond left between two cuts, or after the last, holds no frame: it is nothing kept.
  const spans = kept.filter((span) => span.end - span.start >= 0.001);
  if (spans.length === 0) {
    throw paramError(`\`remove\` covers the whole input, which lasts ${seconds(duration)} s: nothing would be left`);
  }
  return spans;
}

/** What both plans need: the input, the spans it keeps, and the builder's context. */
interface Cut {
  media: LocalInput;
  spans: TimeRange[];
  output: string;
  input: (media: LocalInput) => string[];
  quality: Quality;
  /** Whether a long re-encode may be split into parts (the `fanout` field). */
  fanout: boolean;
}

const keptSeconds = (spans: TimeRange[]) => spans.reduce((sum, span) => sum + span.end - span.start, 0);

/**
 * A cut's time as ffmpeg takes it: to the microsecond. A frame's start is not always a whole millisecond
 * (5.5055 s at 30000/1001 fps): rounded to one, a span's end would move past the frame and keep it.
 */
const cutTime = (value: number): string => String(Math.round(value * 1e6) / 1e6);

/**
 * ffmpeg's options that open the input from one span's start to its end, decoded from there, so exact
 * (a span that reaches the input's end is read to the end).
 */
const spanInput = ({ media, input }: Cut, span: TimeRange) =>
  argv(
    span.start > 0 ? ['-ss', cutTime(span.start)] : null,
    span.end < media.facts.duration! ? ['-to', cutTime(span.end)] : null,
    input(media),
  );

/**
 * The re-encode: each kept span is an input of its own, opened at its start (only its own packets
 * are read and decoded), and the concat filter joins them. The filter starts each part where the
 * longest stream of the part before ended, so picture and sound restart together at every join.
 * When it is long, the same spans are the windows of a split encode (docs/fanout.md): every span
 * starts and ends on a frame's start, so the picture's windows and the sound's are cut at the same
 * instants and the output's clock runs through them as the concat filter's does.
 */
function encodePlan(cut: Cut): Plan {
  const { media, spans } = cut;
  const { facts } = media;
  const container = containerOf(facts);
  const { videoArgs, codecs, muxer } = encodedOutput(facts, container, cut.quality);
  const fanout =
    cut.fanout && isVideoContainer(container)
      ? keptSpansFanout({ media, input: cut.input, windows: spans, container, videoArgs, muxer, output: cut.output })
      : undefined;
  const video = Boolean(facts.video);
  const audio = Boolean(facts.audio);
  const pads = spans.map((_, i) => `${video ? `[${i}:v:0]` : ''}${audio ? `[${i}:a:0]` : ''}`).join('');
  const pad = evenPadFilter(videoArgs, facts.video);
  const join = `${pads}concat=n=${spans.length}:v=${video ? 1 : 0}:a=${audio ? 1 : 0}`;
  const graph = `${join}${video ? (pad ? `[joined];[joined]${pad}[v]` : '[v]') : ''}${audio ? '[a]' : ''}`;
  return {
    expectedSeconds: keptSeconds(spans),
    ...(fanout ? { fanout } : {}),
    commands: [
      argv(
        ...spans.map((span) => spanInput(cut, span)),
        ['-filter_complex', graph],
        video ? ['-map', '[v]'] : null,
        audio ? ['-map', '[a]'] : null,
        // Chapters would point at the uncut times (the split encode leaves them out too).
        ['-map_chapters', '-1'],
        codecs,
        // The frames a split encode of the same cut would make (docs/fanout.md).
        video ? keptFrameTimes(videoArgs) : null,
        muxer,
        [cut.output],
      ),
    ],
  };
}

/**
 * The copy, when every cut falls on a keyframe: ffmpeg's segment muxer copies the picture into
 * pieces that begin at the cuts, and the concat demuxer joins the kept pieces, packets untouched. The
 * sound is taken from the kept spans as the re-encode takes it, exact to the sample, and encoded (a
 * small cost): copied audio packets run up to one audio frame past a cut, which adds up join after
 * join until the sound no longer matches the picture.
 */
function copyPlan(cut: Cut, container: VideoContainer, cuts: number[]): Plan {
  const { media, spans } = cut;
  const { facts } = media;
  const pattern = `piece_%03d.${container}`;
  const bounds = [0, ...cuts];
  const pieces = spans.map((span) => ({ file: segmentName(pattern, bounds.indexOf(span.start)) }));
  const half = halfFrame(facts);
  const sound = `${spans.map((_, i) => `[${i + 1}:a:0]`).join('')}concat=n=${spans.length}:v=0:a=1[a]`;
  return {
    files: { 'pieces.txt': concatList(pieces) },
    expectedSeconds: keptSeconds(spans),
    commands: [
      // Each split just before its keyframe, so that rounding cannot move it to the next one.
      argv(
        cut.input(media),
        ['-map', '0:v:0', '-c', 'copy'],
        segmentArgs(
          containerMuxer(container),
          cuts.map((time) => time - half),
          pattern,
        ),
      ),
      argv(
        // The pieces share the input's SPS and PPS: their packets go through as they are.
        ['-auto_convert', '0'],
        concatListArgs('pieces.txt', 'video'),
        facts.audio ? spans.flatMap((span) => spanInput(cut, span)) : null,
        facts.audio ? ['-filter_complex', sound] : null,
        ['-map', '0:v:0'],
        facts.audio ? ['-map', '[a]'] : null,
        ['-c:v', 'copy'],
        facts.audio ? audioEncoder(container) : null,
        // Chapters would point at the uncut times.
        ['-map_chapters', '-1'],
        containerMuxer(container),
        [cut.output],
      ),
    ],
  };
}

/**
 * Copy where the cuts allow it, else re-encode: the copy needs a picture the container takes as it is
 * (its sound is encoded either way), and a keyframe at every cut, which a first stage lists (decoding
 * keyframes only).
 */
function cutPlan(cut: Cut): Plan {
  const { facts } = cut.media;
  const container = containerOf(facts);
  const copies = isVideoContainer(container) && videoCodecFor(container, facts).includes('copy');
  if (!facts.video || !copies) return encodePlan(cut);
  const duration = facts.duration!;
  const cuts = [...new Set(cut.spans.flatMap((span) => [span.start, span.end]))].filter(
    (time) => time > 0 && time < duration,
  );
  if (cuts.length === 0) return copyPlan(cut, container, cuts);
  const half = halfFrame(facts);
  const from = Math.max(0, cuts[0]! - half);
  const to = Math.min(duration, cuts.at(-1)! + half);
  return {
    // The listing keeps the input's timestamps, up to `to`: the stage's cap must not stop it before.
    expectedSeconds: to,
    commands: [keyframeListing(cut.input(cut.media), from, to)],
    next: (logs) => {
      const keyframes = keyframesIn(logs[0] ?? '');
      const onKeyframes = cuts.every((time) => keyframes.some((key) => Math.abs(key - time) < half));
      return onKeyframes ? copyPlan(cut, container, cuts) : encodePlan(cut);
    },
  };
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'cut-media',
  path: '/cut-media/',
  summary: 'Take ranges out of audio or video',
  description:
    'Removes the ranges of `remove` and joins what is left, picture and sound together. Overlapping ranges ' +
    "merge. The output keeps the input's container (MP4 and MOV as mp4, Matroska as mkv or webm, mp3, m4a, " +
    'wav, ...).',
  params: Type.Object({
    media_url: Param.url('media', 'URL of the audio or video'),
    remove: Param.ranges('What to take out'),
    quality: qualityParam(),
    fanout: fanoutParam(),
  }),
  output: (_p, inputs) => {
    const facts = inputs?.media_url?.[0];
    // Asked before any input exists (the API docs): an MP4, the commonest input.
    return { field: 'output_file', path: `{id}/cut.${facts ? containerOf(facts) : 'mp4'}` };
  },
  checkParams: ({ remove }) => {
    if (remove.length > MAX_RANGES)
      throw paramError(`Expected \`remove\` to list at most ${MAX_RANGES} ranges, got ${remove.length}`);
  },
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (media.facts.isImage) throw mediaError(`${media.source} is a picture: it has no time to cut`);
    if (media.facts.duration === undefined)
      throw mediaError(`${media.source} does not say how long it lasts: its ranges cannot be cut`);
  },
  build: ({ params, inputs, output, input }) => {
    const media = inputs.media_url![0]!;
    const spans = keptSpans(params.remove, media.facts);
    return cutPlan({ media, spans, output, input, quality: params.quality, fanout: params.fanout });
  },
  message: () => 'Media cut successfully',
});
