import {
  argv,
  containerOf,
  CONTRACT_VERSION,
  definePlugin,
  evenPadFilter,
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
} from '../sdk.js';
import { encodedOutput } from './shared/encoded-output.js';
import { frameEdge, seconds } from './shared/timeline.js';

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

/**
 * ffmpeg's options that open the input from one span's start to its end, decoded from there, so exact
 * (a span that reaches the input's end is read to the end).
 */
const spanInput = (media: LocalInput, input: (media: LocalInput) => string[], span: TimeRange) =>
  argv(
    span.start > 0 ? ['-ss', seconds(span.start)] : null,
    span.end < media.facts.duration! ? ['-to', seconds(span.end)] : null,
    input(media),
  );

/**
 * The re-encode: each kept span is an input of its own, opened at its start (only its own packets
 * are read and decoded), and the concat filter joins them. The filter starts each part where the
 * longest stream of the part before ended, so picture and sound restart together at every join.
 */
function encodePlan(
  media: LocalInput,
  spans: TimeRange[],
  context: { output: string; input: (media: LocalInput) => string[]; quality: Quality },
): Plan {
  const { facts } = media;
  const { videoArgs, codecs, muxer } = encodedOutput(facts, containerOf(facts), context.quality);
  const video = Boolean(facts.video);
  const audio = Boolean(facts.audio);
  const pads = spans.map((_, i) => `${video ? `[${i}:v:0]` : ''}${audio ? `[${i}:a:0]` : ''}`).join('');
  const pad = evenPadFilter(videoArgs, facts.video);
  const join = `${pads}concat=n=${spans.length}:v=${video ? 1 : 0}:a=${audio ? 1 : 0}`;
  const graph = `${join}${video ? (pad ? `[joined];[joined]${pad}[v]` : '[v]') : ''}${audio ? '[a]' : ''}`;
  return {
    expectedSeconds: spans.reduce((sum, span) => sum + span.end - span.start, 0),
    commands: [
      argv(
        ...spans.map((span) => spanInput(media, context.input, span)),
        ['-filter_complex', graph],
        video ? ['-map', '[v]'] : null,
        audio ? ['-map', '[a]'] : null,
        codecs,
        muxer,
        [context.output],
      ),
    ],
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
    return encodePlan(media, keptSpans(params.remove, media.facts), { output, input, quality: params.quality });
  },
  message: () => 'Media cut successfully',
});
