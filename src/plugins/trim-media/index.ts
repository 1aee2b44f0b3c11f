import { encodedOutput, keptContainer, keptFormatParam, type KeptContainer } from '../shared/kept-container.js';
import { keptSpansFanout } from '../shared/kept-spans-fanout.js';
import { type SmartCut, smartCutFits, smartCutPlan } from './smart-cut.js';
import {
  argv,
  audioCodecFor,
  audioFileCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  evenSizeArgs,
  fanoutParam,
  keptFrameTimes,
  isVideoContainer,
  keyframeListing,
  keyframesIn,
  type MediaFacts,
  mediaError,
  Optional,
  Param,
  paramError,
  type Plan,
  qualityParam,
  timeWithin,
  Type,
  videoCodecFor,
} from '../../sdk.js';

const MODES = ['precise', 'fast'] as const;

/** How far past the end the keyframe listing looks: a keyframe right at the end must be in it. */
const KEYFRAME_SLACK = 0.05;

/** Seconds for an ffmpeg option: microseconds at most, with no floating-point tail (`10.300000000000001`). */
const seconds = (value: number): string => String(Math.round(value * 1e6) / 1e6);

/** Seconds as a message shows them: milliseconds at most. */
const shown = (value: number): string => String(Math.round(value * 1000) / 1000);

/**
 * Where the kept part starts and ends (undefined: at the input's end), from the parsed fields and the input's
 * duration. Refuses a start at or past the end, and an `end` past it; a `duration` reaching past the end keeps
 * what there is, as a length is not a point of the input.
 */
function span(
  params: { start: number; end?: number | undefined; duration?: number | undefined },
  facts: MediaFacts,
): { start: number; end?: number } {
  const start = timeWithin('start', params.start, facts);
  if (facts.duration !== undefined && start >= facts.duration)
    throw paramError(`\`start\` is ${shown(start)} s, the end of the input, which lasts ${shown(facts.duration)} s`);
  const asked = params.end !== undefined ? timeWithin('end', params.end, facts) : undefined;
  const end = asked ?? (params.duration !== undefined ? start + params.duration : undefined);
  const last =
    end !== undefined && facts.duration !== undefined ? Math.min(end, facts.duration) : (end ?? facts.duration);
  return last !== undefined ? { start, end: last } : { start };
}

/**
 * When an encoded cut starts: the time of the first frame at or after `start`, on the grid of the picture's
 * frame rate, so that the output's first frame is that frame at time zero, and the sound is cut at the same
 * time. Between two frames, ffmpeg would start the picture half a frame late and repeat the first frame to
 * fill the gap, and `-t` would then drop the last one. Left as it is without a picture, or when nothing of
 * the picture would be kept before `end`.
 */
function firstFrameAt(start: number, end: number | undefined, facts: MediaFacts): number {
  const fps = facts.video?.fps;
  if (!fps || !Number.isFinite(fps)) return start;
  // A thousandth of a frame of slack: a time given as 5.52 at 25 fps is frame 138, not 139, whatever the rounding.
  const frame = Math.ceil(start * fps - 1e-3) / fps;
  return end === undefined || frame < end ? frame : start;
}

/**
 * Codec options that copy every stream into the container, or undefined when it does not take one of them as
 * it is. Copying is all or nothing: an encoded stream would start at `start` exactly and a copied one at the
 * keyframe before it, out of sync by the difference.
 */
function copyArgs(facts: MediaFacts, container: KeptContainer): string[] | undefined {
  const codecs = isVideoContainer(container)
    ? [facts.video && videoCodecFor(container, facts), facts.audio && audioCodecFor(container, facts)]
    : [audioFileCodecFor(container, facts)];
  const streams = codecs.filter((codec): codec is string[] => Array.isArray(codec));
  // The SDK's choices copy as `-c:<stream> copy`, and encode otherwise.
  return streams.every((codec) => codec[1] === 'copy') ? argv(...streams) : undefined;
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'trim-media',
  path: '/trim-media/',
  summary: 'Keep one part of an audio or video',
  description:
    'Keeps the part from `start` to `end` (or for `duration`; neither: to the end of the input). `precise` cuts ' +
    'at the exact frame and sample, encoding the kept part; `fast` copies the streams, so the start moves back ' +
    "to the keyframe at or before it. The output keeps the input's container (MP4 and MOV as mp4, Matroska as " +
    'mkv or webm, mp3, m4a, wav, ...) unless `format` names a video container.',
  params: Type.Object({
    media_url: Param.url('media', 'URL of the audio or video to trim'),
    start: Param.time({ default: 0, description: 'Where the kept part starts' }),
    end: Optional(Param.time({ description: 'Where the kept part ends (not with `duration`; neither: the end)' })),
    duration: Optional(Param.time({ description: 'How long the kept part lasts (not with `end`)' })),
    mode: Param.choice(MODES, {
      default: 'precise',
      description:
        'precise: cut at the exact frame, encoding the kept part; fast: streams copied, the start moves back ' +
        "to the keyframe at or before it (encoded and precise when the container does not take the input's codecs)",
    }),
    format: keptFormatParam(),
    quality: qualityParam(),
    fanout: fanoutParam(),
  }),
  output: (p, inputs) => {
    const facts = inputs?.media_url?.[0];
    // Asked before any input exists (the API docs): an MP4, the commonest input.
    return { field: 'output_file', path: `{id}/trimmed.${keptContainer(p.format, facts)}` };
  },
  // What the fields alone say is wrong is refused before anything is downloaded.
  checkParams: ({ start, end, duration }) => {
    if (end !== undefined && duration !== undefined) throw paramError('Give `end` or `duration`, not both');
    if (duration === 0) throw paramError('Expected `duration` to be more than 0 s, got 0: nothing would be kept');
    if (end !== undefined && end === start)
      throw paramError(`Expected \`end\` to be after \`start\`, got both at ${shown(start)} s: nothing would be kept`);
    if (end !== undefined && end < start)
      throw paramError(`Expected \`end\` (${shown(end)} s) to be after \`start\` (${shown(start)} s)`);
  },
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (media.facts.isImage) throw mediaError(`${media.source} is a picture: it has no time to trim`);
  },
  build: ({ params, inputs, output, input }) => {
    const media = inputs.media_url![0]!;
    const { facts } = media;
    const asked = span(params, facts);
    const container = keptContainer(params.format, facts);
    // `fast` where every stream can be copied; where one cannot, the cut is as `precise` makes it.
    const copied = params.mode === 'fast' ? copyArgs(facts, container) : undefined;
    const encoded = encodedOutput(facts, container, params.quality);
    const start = copied ? asked.start : firstFrameAt(asked.start, asked.end, facts);
    const length = asked.end !== undefined ? asked.end - start : undefined;
    // An encoded kept part, in parts when it is long (docs/fanout.md): the one window from the first kept frame.
    const fanout =
      params.fanout && !copied && asked.end !== undefined && isVideoContainer(container)
        ? keptSpansFanout({
            media,
            input,
            windows: [{ start, end: asked.end }],
            container,
            videoArgs: encoded.videoArgs,
            muxer: encoded.muxer,
            output,
          })
        : undefined;
    const plan: Plan = {
      ...(length !== undefined ? { expectedSeconds: length } : {}),
      ...(fanout ? { fanout } : {}),
      commands: [
        argv(
          // Seeking before the input: ffmpeg reads from the keyframe at or before `start`, not from the
          // beginning. Encoding drops what it decodes before `start`; copying keeps it from that keyframe on.
          start > 0 && ['-ss', seconds(start)],
          input(media),
          length !== undefined && ['-t', seconds(length)],
          facts.video && ['-map', '0:v:0'],
          facts.audio && ['-map', '0:a:0'],
          // Chapters would point at the untrimmed times (and MP4 would write them as a text track).
          ['-map_chapters', '-1'],
          copied ??
            argv(
              encoded.codecs,
              facts.video && evenSizeArgs(encoded.videoArgs, facts.video),
              // The frames a split encode of the same cut would make (docs/fanout.md).
              facts.video && keptFrameTimes(encoded.videoArgs),
            ),
          // Copied packets from before `start` have negative times: shifted so the output starts at zero.
          copied && ['-avoid_negative_ts', 'make_zero'],
          encoded.muxer,
          [output],
        ),
      ],
    };
    if (copied || asked.end === undefined || !isVideoContainer(container) || !smartCutFits(facts, container))
      return plan;
    // A smart cut: the keyframes of the kept part first (a keyframe at its end too, where the copy may stop).
    const cut: SmartCut = {
      media,
      input,
      output,
      container,
      quality: params.quality,
      start,
      end: asked.end,
      toEnd: facts.duration !== undefined && asked.end >= facts.duration,
    };
    const to = asked.end + KEYFRAME_SLACK;
    return {
      // The listing keeps the input's timestamps (-copyts), against which the output cap's -t counts from zero:
      // it is held to the window's end, not its length, or it would stop after the first keyframes.
      expectedSeconds: to,
      commands: [keyframeListing(input(media), start, to)],
      next: ([log]) => smartCutPlan(cut, keyframesIn(log ?? '')) ?? plan,
    };
  },
  message: () => 'Media trimmed successfully',
});
