import { argv, concatList, concatListArgs, CONTRACT_VERSION, definePlugin, Param, Type, type LocalInput } from '../sdk.js';

const FORMATS = ['mp3', 'wav', 'aac', 'm4a', 'ogg', 'flac', 'opus'] as const;
type AudioFormat = (typeof FORMATS)[number];

/** Per output format: the muxer, the codec ffprobe reports for it, the demuxer that reads it back, and how to encode. */
const TARGETS: Record<AudioFormat, { muxer: string; codec: string; demuxer: string; encode: string[] }> = {
  mp3: { muxer: 'mp3', codec: 'mp3', demuxer: 'mp3', encode: ['-c:a', 'libmp3lame', '-q:a', '2'] },
  wav: { muxer: 'wav', codec: 'pcm_s16le', demuxer: 'wav', encode: ['-c:a', 'pcm_s16le'] },
  aac: { muxer: 'adts', codec: 'aac', demuxer: 'aac', encode: ['-c:a', 'aac', '-b:a', '192k'] },
  m4a: { muxer: 'ipod', codec: 'aac', demuxer: 'mov', encode: ['-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart'] },
  ogg: { muxer: 'ogg', codec: 'vorbis', demuxer: 'ogg', encode: ['-c:a', 'libvorbis', '-q:a', '5'] },
  flac: { muxer: 'flac', codec: 'flac', demuxer: 'flac', encode: ['-c:a', 'flac'] },
  opus: { muxer: 'ogg', codec: 'opus', demuxer: 'ogg', encode: ['-c:a', 'libopus', '-b:a', '128k'] },
};

/** Inputs that already are the target's codec, container, rate and channels can be joined by copying packets. */
function canCopy(inputs: LocalInput[], format: AudioFormat): boolean {
  const target = TARGETS[format];
  const first = inputs[0]!.facts.audio!;
  return inputs.every(({ facts }) => {
    const audio = facts.audio!;
    return (
      !facts.video &&
      audio.codec === target.codec &&
      facts.formatName.split(',')[0] === target.demuxer &&
      audio.sampleRate === first.sampleRate &&
      audio.channels === first.channels
    );
  });
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'merge-audios',
  path: '/merge-audios/',
  summary: 'Join several audio files into one track',
  description:
    'Inputs of any format, sample rate and channel count are decoded, resampled and joined in order. Inputs that already match the output format are joined without re-encoding.',
  params: Type.Object({
    audio_urls: Param.urlList('audio', 'Comma-separated audio URLs, joined in this order (at least 2)', {
      min: 2,
      tooFew: 'At least two audio URLs are required',
    }),
    format: Param.format(FORMATS, { default: 'mp3', description: 'Output audio format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}/merged_output.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const audios = inputs.audio_urls!;
    const target = TARGETS[params.format];
    const expectedSeconds = audios.reduce((sum, a) => sum + (a.facts.duration ?? 0), 0);
    if (canCopy(audios, params.format)) {
      const files = { 'inputs.txt': concatList(audios.map((a) => ({ file: a.file }))) };
      return { files, expectedSeconds, commands: [argv(concatListArgs('inputs.txt', 'audio'), ['-map', '0:a', '-c', 'copy', '-f', target.muxer, output])] };
    }
    // Decode everything to one rate and layout, then concatenate: stereo if any input has two or more channels.
    const sampleRate = params.format === 'opus' ? 48000 : audios[0]!.facts.audio!.sampleRate || 44100;
    const layout = audios.some((a) => a.facts.audio!.channels >= 2) ? 'stereo' : 'mono';
    const chains = audios.map((_, i) => `[${i}:a:0]aresample=${sampleRate},aformat=sample_fmts=fltp:channel_layouts=${layout}[a${i}]`);
    const graph = `${chains.join(';')};${audios.map((_, i) => `[a${i}]`).join('')}concat=n=${audios.length}:v=0:a=1[out]`;
    return {
      expectedSeconds,
      commands: [argv(...audios.map((a) => input(a)), ['-filter_complex', graph, '-map', '[out]', '-vn'], target.encode, ['-f', target.muxer, output])],
    };
  },
  message: () => 'Audios merged successfully',
});
