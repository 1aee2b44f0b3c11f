import {
  argv,
  AUDIO_CONTAINERS,
  audioFileCodecFor,
  audioMuxerFor,
  CONTRACT_VERSION,
  definePlugin,
  mediaError,
  Param,
  Type,
} from '../sdk.js';

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'extract-audio',
  path: '/extract-audio/',
  summary: "Extract a video's sound as an audio file",
  description:
    "The video's first audio track becomes an audio file, with no picture, subtitles or data tracks. Its " +
    'packets are copied when the format takes its codec as it is (AAC into m4a or aac, MP3 into mp3, Opus ' +
    'into opus or ogg, Vorbis into ogg, FLAC into flac, PCM into wav); otherwise it is encoded.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video whose sound to extract'),
    format: Param.format(AUDIO_CONTAINERS, { default: 'mp3', description: 'Output audio format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}/audio.${p.format}` }),
  check: ({ inputs }) => {
    const video = inputs.video_url![0]!;
    if (!video.facts.audio)
      throw mediaError(`Input ${video.source} has no audio stream: \`video_url\` must be a video with sound`);
  },
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    return {
      ...(video.facts.duration ? { expectedSeconds: video.facts.duration } : {}),
      commands: [
        argv(
          input(video),
          // The first audio track alone: chapters too are left out, as the m4a muxer would write them as a text track.
          ['-map', '0:a:0', '-vn', '-sn', '-dn', '-map_chapters', '-1'],
          audioFileCodecFor(params.format, video.facts),
          audioMuxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: () => 'Audio extracted successfully',
});
