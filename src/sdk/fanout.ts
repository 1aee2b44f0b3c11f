import {
  argv,
  KEEP_FRAME_TIMES,
  Param,
  type FanoutSpec,
  type LocalInput,
  type TimeRange,
} from '../engine/contract/plugin.js';
import type { MediaFacts } from '../engine/contract/media-facts.js';

export { joinParts, type Join, type PlacedPart } from '../engine/run/fanout/join.js';

/** The request field that keeps one encode in one pass: `fanout=false` (docs/fanout.md). */
export const fanoutParam = () =>
  Param.boolean({
    default: true,
    description:
      'Split a long encode into parts encoded at once and joined seamlessly (longer than MEDIAFLOW_FANOUT_MIN); ' +
      'false: one pass',
  });

/** A frame-by-frame encode of one video input, as `frameByFrame` makes its parts. */
export interface FrameByFrame {
  /** The video input, and its options as `BuildContext.input` gives them (`-i <file>` last). */
  input: LocalInput;
  opened: readonly string[];
  /** Options of the other inputs every part reads whole (a picture to overlay), after the video's. */
  others?: readonly string[];
  /**
   * The video's filter options, given the filter that puts a part's frames on the output's clock and the one that
   * ends the chain (FanoutPart's `shift` and `reset`): `['-vf', `${shift},drawtext=...,${reset}`]`, or a graph and
   * its `-map`. None: the video stream as it is.
   */
  filters?: (shift: string, reset: string) => string[];
  /** The video encoder's options: the same for every part (the join copies them). */
  videoArgs: readonly string[];
  /** The audio encoder's options (the first audio stream, whole); none: the output has no audio. */
  audioArgs?: readonly string[];
  /**
   * A container for what `audioArgs` write; by default `.m4a` when they write AAC (encoded, or copied from an AAC
   * input), else `.mka` (Matroska takes any codec the video containers do, PCM and Opus included).
   */
  audioExtension?: string;
  /** Files a step writes that the commands read (FanoutSpec.reads): a part on another worker gets them too. */
  reads?: readonly string[];
  /** The spans of the input the output holds (FanoutSpec.windows); the whole input when absent. */
  windows?: FanoutSpec['windows'];
  muxer: readonly string[];
  output: string;
}

/**
 * Whether an encode with these video options can be split (Plan.fanout): its parts are joined by stream copy out of
 * mp4 files, so the encoder must be x264 or x265. VP9 (webm), MPEG-4 Part 2 (avi) and a copy run in one pass.
 */
export const splitsInParts = (videoArgs: readonly string[]): boolean =>
  videoArgs.includes('libx264') || videoArgs.includes('libx265');

/**
 * The output options of an encode's one pass that keep the input's frames and times (KEEP_FRAME_TIMES) when it could
 * be split, so that `fanout=false` and a split make the same frames; none for other encoders (AVI wants a constant
 * rate).
 */
export const keptFrameTimes = (videoArgs: readonly string[]): readonly string[] =>
  splitsInParts(videoArgs) ? KEEP_FRAME_TIMES : [];

/** `.m4a` for audio options that write AAC (an AAC encoder, or a copy of an AAC input), `.mka` for anything else. */
const audioExtensionFor = (audioArgs: readonly string[], facts: MediaFacts): string =>
  audioArgs.includes('aac') || (audioArgs.includes('copy') && facts.audio?.codec === 'aac') ? '.m4a' : '.mka';

/**
 * The fan-out of an encode that maps its input's frames one to one (Plan.fanout): each part reads the input from its
 * seek, filters on the output's clock, and writes its frames' video into an mp4; the audio is one command of its own.
 */
export function frameByFrame(encode: FrameByFrame): FanoutSpec {
  const { input, opened, others, filters, videoArgs, audioArgs, reads, windows, muxer, output } = encode;
  return {
    input,
    output,
    muxer,
    ...(reads ? { reads } : {}),
    ...(windows ? { windows } : {}),
    video: (part) =>
      argv(
        part.seek,
        opened,
        others,
        filters ? filters(part.shift, part.reset) : ['-map', '0:v:0', '-vf', part.reset],
        videoArgs,
        part.frames,
        ['-an', '-sn', '-dn', '-f', 'mp4', part.output],
      ),
    ...(audioArgs
      ? {
          audio: (file: string) => windowedAudio(opened, windows, audioArgs, file),
          audioExtension: encode.audioExtension ?? audioExtensionFor(audioArgs, input.facts),
        }
      : {}),
  };
}

/**
 * The command encoding the audio of `windows` (the whole input when absent) into `file`: one window is read from its
 * start to its end; several are joined by the concat filter, sample-exact, so an encoder must be given.
 */
function windowedAudio(
  opened: readonly string[],
  windows: FanoutSpec['windows'],
  audioArgs: readonly string[],
  file: string,
): string[] {
  // No seek to 0, as the one passes do not: the MP4 demuxer takes every stream to the picture's keyframe at or
  // before it, and for a picture that starts after the sound (0.1 s in) the sound lost its first 64 ms.
  const span = (window: TimeRange) =>
    argv(window.start > 0 && ['-ss', String(window.start)], ['-to', String(window.end)], opened);
  const joined = windows && windows.length > 1;
  return argv(
    windows ? windows.flatMap(span) : opened,
    joined
      ? ['-filter_complex', `${windows.map((_, i) => `[${i}:a:0]`).join('')}concat=n=${windows.length}:v=0:a=1[a]`]
      : null,
    joined ? ['-map', '[a]'] : ['-map', '0:a:0'],
    ['-vn', '-sn', '-dn'],
    audioArgs,
    [file],
  );
}
