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

/**
 * How a plan that filters its input's picture and sound (retimed, cut, joined) encodes them for the
 * output's container: `videoArgs`, the picture's encoder (empty without a picture, or for an audio
 * container), and `codecs`, every codec, sample-rate and muxer option after the maps.
 */
export function encodedOutput(
  facts: MediaFacts,
  container: VideoContainer | AudioContainer,
  quality: Quality,
): { videoArgs: string[]; codecs: string[] } {
  if (!isVideoContainer(container)) {
    const rate = ['-ar', String(audioFileSampleRate(container, facts.audio?.sampleRate))];
    return { videoArgs: [], codecs: argv(audioFileEncoder(container), rate, audioMuxerFor(container)) };
  }
  const videoArgs = facts.video ? videoEncoder(container, { quality }) : [];
  return { videoArgs, codecs: argv(videoArgs, facts.audio ? audioEncoder(container) : null, muxerFor(container)) };
}
