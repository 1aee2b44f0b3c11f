import {
  argv,
  CONTRACT_VERSION,
  definePlugin,
  evenPadFilter,
  mediaError,
  type MediaFacts,
  Param,
  qualityParam,
  Type,
} from '../sdk.js';
import { tempoFilters } from './shared/atempo.js';
import { encodedOutput, keptContainer, keptFormatParam } from './shared/kept-container.js';

/**
 * The filter graph: the picture's timestamps divided by the speed (padded to even sizes when its
 * encoder, `videoArgs`, needs them) and the sound through the atempo chain. Only numbers from the
 * parsed fields reach it.
 */
function speedGraph(facts: MediaFacts, speed: number, videoArgs: readonly string[]): string {
  const chains: string[] = [];
  if (facts.video) {
    // Back to the input's frame rate: frames dropped (faster) or repeated (slower) evenly, not at the end.
    const rate = facts.video.fps > 0 ? `,fps=${facts.video.fps}` : '';
    const pad = evenPadFilter(videoArgs, facts.video);
    chains.push(`[0:v:0]setpts=PTS/${speed}${rate}${pad ? `,${pad}` : ''}[v]`);
  }
  if (facts.audio) {
    chains.push(`[0:a:0]${tempoFilters(speed, facts.audio.sampleRate).join(',')}[a]`);
  }
  return chains.join(';');
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'change-speed',
  path: '/change-speed/',
  summary: 'Speed audio or video up or down, keeping the pitch',
  description:
    'Picture and sound change together and stay in sync; the sound keeps its pitch. An audio-only input ' +
    "stays audio-only. The output keeps the input's container (MP4 and MOV as mp4, Matroska as mkv or " +
    'webm, mp3, m4a, wav, ...) unless `format` names a video container.',
  params: Type.Object({
    media_url: Param.url('media', 'URL of the audio or video'),
    speed: Param.number({
      minimum: 0.25,
      maximum: 4,
      examples: [1.5],
      description: 'How many times faster: 2 plays in half the time, 0.5 in twice the time (0.25 to 4)',
    }),
    format: keptFormatParam(),
    quality: qualityParam(),
  }),
  output: (p, inputs) => ({
    field: 'output_file',
    path: `{id}/speed.${keptContainer(p.format, inputs?.media_url?.[0])}`,
  }),
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (media.facts.isImage) throw mediaError(`${media.source} is a picture: its speed cannot change`);
  },
  build: ({ params, inputs, output, input }) => {
    const media = inputs.media_url![0]!;
    const { facts } = media;
    // The picture is retimed and the sound filtered: both are encoded, for the container they go into.
    const { videoArgs, codecs, muxer } = encodedOutput(facts, keptContainer(params.format, facts), params.quality);
    return {
      ...(facts.duration ? { expectedSeconds: facts.duration / params.speed } : {}),
      commands: [
        argv(
          input(media),
          ['-filter_complex', speedGraph(facts, params.speed, videoArgs)],
          facts.video ? ['-map', '[v]'] : null,
          facts.audio ? ['-map', '[a]'] : null,
          codecs,
          muxer,
          [output],
        ),
      ],
    };
  },
  message: () => 'Speed changed successfully',
});
