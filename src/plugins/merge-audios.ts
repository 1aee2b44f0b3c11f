import {
  argv,
  AUDIO_CONTAINERS,
  audioFileEncoder,
  audioFileSampleRate,
  audioMuxerFor,
  concatList,
  concatListArgs,
  CONTRACT_VERSION,
  definePlugin,
  isAudioFileOf,
  Param,
  Type,
  type AudioContainer,
  type LocalInput,
} from '../sdk.js';

/** Inputs that already are the target's codec, container, rate and channels can be joined by copying packets. */
function canCopy(inputs: LocalInput[], format: AudioContainer): boolean {
  const first = inputs[0]!.facts.audio!;
  return inputs.every(
    ({ facts }) =>
      isAudioFileOf(format, facts) &&
      facts.audio!.sampleRate === first.sampleRate &&
      facts.audio!.channels === first.channels,
  );
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'merge-audios',
  path: '/merge-audios/',
  summary: 'Join several audio files into one track',
  description:
    'Inputs of any format, sample rate and channel count are decoded, resampled and joined in order. Inputs ' +
    'that already match the output format are joined without re-encoding.',
  params: Type.Object({
    audio_urls: Param.urlList('audio', 'Audio files, joined in this order', {
      min: 2,
      tooFew: 'At least two audio URLs are required',
    }),
    format: Param.format(AUDIO_CONTAINERS, { default: 'mp3', description: 'Output audio format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}/merged_output.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const audios = inputs.audio_urls!;
    const expectedSeconds = audios.reduce((sum, a) => sum + (a.facts.duration ?? 0), 0);
    if (canCopy(audios, params.format)) {
      const files = { 'inputs.txt': concatList(audios.map((a) => ({ file: a.file }))) };
      return {
        files,
        expectedSeconds,
        commands: [
          argv(concatListArgs('inputs.txt', 'audio'), ['-map', '0:a', '-c', 'copy'], audioMuxerFor(params.format), [
            output,
          ]),
        ],
      };
    }
    // Decode everything to one rate and layout, then concatenate: stereo if any input has two or more channels.
    const sampleRate = audioFileSampleRate(params.format, audios[0]!.facts.audio!.sampleRate);
    const layout = audios.some((a) => a.facts.audio!.channels >= 2) ? 'stereo' : 'mono';
    const chains = audios.map(
      (_, i) => `[${i}:a:0]aresample=${sampleRate},aformat=sample_fmts=fltp:channel_layouts=${layout}[a${i}]`,
    );
    const labels = audios.map((_, i) => `[a${i}]`).join('');
    const graph = `${chains.join(';')};${labels}concat=n=${audios.length}:v=0:a=1[out]`;
    return {
      expectedSeconds,
      commands: [
        argv(
          ...audios.map((a) => input(a)),
          ['-filter_complex', graph, '-map', '[out]', '-vn'],
          audioFileEncoder(params.format),
          audioMuxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: () => 'Audios merged successfully',
});
