import {
  argv,
  audioEncoder,
  audioFileEncoder,
  audioFileSampleRate,
  audioMuxerFor,
  type AudioContainer,
  containerOf,
  isVideoContainer,
  type MediaFacts,
  muxerFor,
  Optional,
  Param,
  type Quality,
  VIDEO_CONTAINERS,
  type VideoContainer,
  videoEncoder,
} from '../../sdk.js';

/**
 * Outputs that keep their input's container (`containerOf`: an MP4 stays MP4, an MP3 stays MP3) unless
 * `format` names a video container, as the operations that change a recording's time or sound do.
 */

export type KeptContainer = VideoContainer | AudioContainer;

/** The optional `format` of such an operation: a video container, else the input's own (`keptContainer`). */
export const keptFormatParam = () =>
  Optional(Param.format(VIDEO_CONTAINERS, { description: "Output container (default: the input's own container)" }));

/**
 * The output's container: `format` when given, else the input's own. Asked before any input exists (the API
 * docs, a pipeline's check), an MP4, the commonest input.
 */
export const keptContainer = (format: VideoContainer | undefined, facts: MediaFacts | undefined): KeptContainer =>
  format ?? (facts ? containerOf(facts) : 'mp4');

/**
 * `keptContainer` for an operation whose input is a video: a video's own container is a video container
 * (`containerOf`), so the output is one too.
 */
export const keptVideoContainer = (format: VideoContainer | undefined, facts: MediaFacts | undefined): VideoContainer =>
  keptContainer(format, facts) as VideoContainer;

/**
 * Encoder options for sound written anew into `container`: a video container's audio codec, or an audio file's
 * own, at the input's sample rate where the encoder takes it.
 */
export function soundEncoder(container: KeptContainer, facts: MediaFacts): string[] {
  if (isVideoContainer(container)) return audioEncoder(container);
  return argv(audioFileEncoder(container), ['-ar', String(audioFileSampleRate(container, facts.audio?.sampleRate))]);
}

/** The muxer options of a video or audio container. */
export const containerMuxer = (container: KeptContainer): string[] =>
  isVideoContainer(container) ? muxerFor(container) : audioMuxerFor(container);

/**
 * How a plan that filters its input's picture and sound (retimed, cut, joined) encodes them for the
 * output's container: `videoArgs`, the picture's encoder (empty without a picture, or for an audio
 * container), `codecs`, every codec and sample-rate option after the maps, and `muxer`, the muxer's
 * options and name.
 */
export function encodedOutput(
  facts: MediaFacts,
  container: KeptContainer,
  quality: Quality,
): { videoArgs: string[]; codecs: string[]; muxer: string[] } {
  const videoArgs = facts.video && isVideoContainer(container) ? videoEncoder(container, { quality }) : [];
  const codecs = argv(videoArgs, facts.audio || !isVideoContainer(container) ? soundEncoder(container, facts) : null);
  return { videoArgs, codecs, muxer: containerMuxer(container) };
}
