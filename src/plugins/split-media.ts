import {
  argv,
  audioCodecFor,
  audioFileCodecFor,
  type AudioContainer,
  containerOf,
  CONTRACT_VERSION,
  definePlugin,
  evenSizeArgs,
  isVideoContainer,
  keyframeListing,
  keyframesIn,
  type LocalInput,
  mediaError,
  type MediaFacts,
  Optional,
  Param,
  paramError,
  type Plan,
  qualityParam,
  type Static,
  timeWithin,
  Type,
  videoCodecFor,
  type VideoContainer,
} from '../sdk.js';
import { containerMuxer, encodedOutput } from './shared/kept-container.js';
import { numberedPattern, segmentArgs, segmentName } from './shared/segments.js';
import { frameEdge, halfFrame, seconds } from './shared/timeline.js';

/** Parts one request may make: each is a file of its own, answered as a URL. */
const MAX_PARTS = 100;

const params = Type.Object({
  media_url: Param.url('media', 'URL of the audio or video'),
  every: Optional(
    Param.number({
      minimum: 0.1,
      maximum: 86400,
      examples: [60],
      description: 'Seconds per part (the last part is what is left); give this or `at`',
    }),
  ),
  at: Optional(Param.times('Where parts after the first start, in the input; give this or `every`')),
  mode: Param.choice(['fast', 'precise'], {
    default: 'fast',
    description:
      'fast: streams copied, each part starting at the first keyframe at or after its time (`starts` says ' +
      'where); precise: re-encoded, each part starting at the first frame at or after its time',
  }),
  quality: qualityParam(),
});
type Params = Static<typeof params>;

/** Whether `container` takes every stream of the input as it is: only then can parts be copies. */
export function copiesInto(facts: MediaFacts, container: VideoContainer | AudioContainer): boolean {
  const copied = (codecArgs: string[]) => codecArgs.includes('copy');
  if (!isVideoContainer(container)) return !facts.video && copied(audioFileCodecFor(container, facts));
  const video = !facts.video || copied(videoCodecFor(container, facts));
  return video && (!facts.audio || copied(audioCodecFor(container, facts)));
}

/** The parts' paths under uploads, numbered from 1: `part_001.mp4`, ... */
const partPath = (ext: string, index: number) => `{id}/${segmentName(`part_%03d.${ext}`, index)}`;

/** Starts as answered: seconds into the input, to the millisecond. */
const answered = (starts: number[]) => ({ starts: [0, ...starts].map((start) => Number(seconds(start))) });

/**
 * The input times where parts after the first start, as asked: every `every` seconds (a last part
 * shorter than a millisecond is no part), or the times of `at` in order, duplicates merged. A time at
 * or past the input's end is a 400 naming the field and the duration, as is a split into more than
 * MAX_PARTS parts.
 */
function askedStarts(p: Params, facts: MediaFacts): number[] {
  const duration = facts.duration!;
  let starts: number[];
  if (p.every !== undefined) {
    const count = Math.ceil((duration - 0.001) / p.every);
    if (count > MAX_PARTS) {
      throw paramError(
        `\`every\` of ${seconds(p.every)} s makes ${count} parts of the input, which lasts ${seconds(duration)} s: ` +
          `at most ${MAX_PARTS}`,
      );
    }
    starts = Array.from({ length: count - 1 }, (_, i) => (i + 1) * p.every!);
  } else {
    starts = [...new Set(p.at!)].sort((a, b) => a - b);
    for (const time of starts) {
      timeWithin('at', time, facts);
      if (time >= duration || time <= 0) {
        throw paramError(
          `\`at\` is ${seconds(time)} s: a part must start after the input's start and before its end, ` +
            `${seconds(duration)} s`,
        );
      }
    }
  }
  return starts;
}

const maps = (facts: MediaFacts) =>
  argv(facts.video ? ['-map', '0:v:0'] : null, facts.audio ? ['-map', '0:a:0'] : null);

/** What the plans need: the input, its options, and the segment muxer's pattern for the outputs. */
interface Split {
  media: LocalInput;
  input: string[];
  pattern: string;
}

/** Parts by stream copy, each from the first keyframe (or, for sound alone, packet) at or after `splits`. */
function copyPlan({ media, input, pattern }: Split, splits: number[], starts: number[]): Plan {
  const muxer = containerMuxer(containerOf(media.facts));
  return {
    expectedSeconds: media.facts.duration!,
    commands: [argv(input, maps(media.facts), ['-c', 'copy'], segmentArgs(muxer, splits, pattern))],
    answers: answered(starts),
  };
}

/** Where parts start: on keyframes (copies) or on any frame (re-encodes). */
type StartOn = 'keyframe' | 'frame';

/**
 * Where each part really starts: `startOf` each asked time (the first keyframe or frame at or after
 * it). A time whose part would start where the part before does, or that has no such frame before
 * the end, is a 400 naming `field` and the time.
 */
function partStarts(
  asked: number[],
  startOf: (time: number) => number | undefined,
  facts: MediaFacts,
  field: string,
  on: StartOn,
): number[] {
  const half = halfFrame(facts);
  const starts: number[] = [];
  for (const time of asked) {
    const start = startOf(time);
    const refusal =
      start === undefined || start >= facts.duration! - half
        ? `and the input has no ${on} after it`
        : start <= (starts.at(-1) ?? 0) + half
          ? `which would start on the ${on} at ${seconds(start)} s, as the part before does`
          : undefined;
    if (refusal) {
      const advice =
        on === 'keyframe'
          ? 'with `mode=fast` parts start on keyframes; ask for fewer parts, or for `mode=precise`'
          : 'ask for fewer parts';
      throw paramError(`\`${field}\` asks for a part at ${seconds(time)} s, ${refusal}: ${advice}`);
    }
    starts.push(start!);
  }
  return starts;
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'split-media',
  path: '/split-media/',
  summary: 'Split audio or video into parts, at fixed lengths or at given times',
  description:
    "Parts keep the input's container. By default (`mode=fast`) the streams are copied, so a video's parts " +
    'start on keyframes: at the first keyframe at or after each time asked, which `starts` gives for every ' +
    'part. `mode=precise` re-encodes so that each part starts at the first frame at or after its time.',
  params,
  answers: Type.Object({
    starts: Type.Array(Type.Number(), {
      description: "Where each part starts in the input, in seconds, in the parts' order (the first is 0)",
    }),
  }),
  output: (p, inputs) => {
    const facts = inputs?.media_url?.[0];
    // Asked before any input exists (the API docs, a pipeline's check): one part of an MP4 at least.
    const ext = facts ? containerOf(facts) : 'mp4';
    const count = facts?.duration !== undefined ? askedStarts(p, facts).length + 1 : (p.at?.length ?? 0) + 1;
    return { files: Array.from({ length: count }, (_, i) => partPath(ext, i)) };
  },
  checkParams: (p) => {
    if (p.every === undefined && p.at === undefined)
      throw paramError('Expected `every` (seconds per part) or `at` (times where parts start), got neither');
    if (p.every !== undefined && p.at !== undefined) throw paramError('Expected `every` or `at`, not both');
    if (p.at !== undefined && p.at.length >= MAX_PARTS)
      throw paramError(
        `Expected \`at\` to list at most ${MAX_PARTS - 1} times (${MAX_PARTS} parts), got ${p.at.length}`,
      );
  },
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (media.facts.isImage) throw mediaError(`${media.source} is a picture: it has no time to split`);
    if (media.facts.duration === undefined)
      throw mediaError(`${media.source} does not say how long it lasts: it cannot be split`);
  },
  build: ({ params: p, inputs, input, outputs }) => {
    const media = inputs.media_url![0]!;
    const { facts } = media;
    const container = containerOf(facts);
    const asked = askedStarts(p, facts);
    const split: Split = { media, input: input(media), pattern: numberedPattern(outputs) };
    const field = p.every !== undefined ? 'every' : 'at';
    if (p.mode === 'precise' || !copiesInto(facts, container)) {
      // Each part's first frame is made a keyframe, so the segment muxer splits exactly there.
      const starts = partStarts(asked, (time) => frameEdge(time, facts), facts, field, 'frame');
      const { videoArgs, codecs, muxer } = encodedOutput(facts, container, p.quality);
      return {
        expectedSeconds: facts.duration!,
        commands: [
          argv(
            split.input,
            maps(facts),
            codecs,
            evenSizeArgs(videoArgs, facts.video),
            facts.video && starts.length > 0 ? ['-force_key_frames', starts.map(seconds).join(',')] : null,
            segmentArgs(muxer, starts, split.pattern),
          ),
        ],
        answers: answered(starts),
      };
    }
    // Sound alone: every packet is a keyframe, and a part starts at the first one at or after its time.
    if (!facts.video || asked.length === 0) return copyPlan(split, asked, asked);
    const half = halfFrame(facts);
    return {
      // The keyframes from the first time asked to the end; the listing keeps the input's timestamps.
      expectedSeconds: facts.duration!,
      commands: [keyframeListing(split.input, Math.max(0, asked[0]! - half), facts.duration!)],
      next: (logs) => {
        const keyframes = keyframesIn(logs[0] ?? '');
        const firstKeyframe = (time: number) => keyframes.find((key) => key >= time - half);
        const starts = partStarts(asked, firstKeyframe, facts, field, 'keyframe');
        // Each split just before its keyframe, so that rounding cannot move it to the next one.
        return copyPlan(
          split,
          starts.map((start) => start - half),
          starts,
        );
      },
    };
  },
  message: () => 'Media split successfully',
});
