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
  type VideoContainer,
} from '../../sdk.js';

/**
 * Outputs that keep their input's container (`containerOf`: an MP4 stays MP4, an MP3 stays MP3) unless
 * `format` names a video container, as the operations that change a recording's time or sound do.
 */

export type KeptContainer = VideoContainer | AudioContainer;

/**
 * The output's container: `format` when given, else the input's own. Asked before any input exists (the API
 * docs, a pipeline's check), an MP4, the commonest input.
 */
export const keptContainer = (format: VideoContainer | undefined, facts: MediaFacts | undefined): KeptContainer =>
  format ?? (facts ? containerOf(facts) : 'mp4');

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
