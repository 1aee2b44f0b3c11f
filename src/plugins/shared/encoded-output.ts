import {
  argv,
  audioEncoder,
  audioFileEncoder,
  audioFileSampleRate,
  audioMuxerFor,
  type AudioContainer,
  isVideoContainer,
  type MediaFacts,
  muxerFor,
  type Quality,
  type VideoContainer,
  videoEncoder,
} from '../../sdk.js';

/** The muxer's options and name for a container, audio-only or video. */
export const outputMuxer = (container: VideoContainer | AudioContainer): string[] =>
  isVideoContainer(container) ? muxerFor(container) : audioMuxerFor(container);

/**
 * How a plan that filters its input's picture and sound (retimed, cut, joined) encodes them for the
 * output's container: `videoArgs`, the picture's encoder (empty without a picture, or for an audio
 * container), `codecs`, every codec and sample-rate option after the maps, and `muxer`, the muxer's
 * options and name.
 */
export function encodedOutput(
  facts: MediaFacts,
  container: VideoContainer | AudioContainer,
  quality: Quality,
): { videoArgs: string[]; codecs: string[]; muxer: string[] } {
  if (!isVideoContainer(container)) {
    const rate = ['-ar', String(audioFileSampleRate(container, facts.audio?.sampleRate))];
    return { videoArgs: [], codecs: argv(audioFileEncoder(container), rate), muxer: outputMuxer(container) };
  }
  const videoArgs = facts.video ? videoEncoder(container, { quality }) : [];
  const codecs = argv(videoArgs, facts.audio ? audioEncoder(container) : null);
  return { videoArgs, codecs, muxer: outputMuxer(container) };
}
