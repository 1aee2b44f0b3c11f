import { argv, audioCodecFor, CONTRACT_VERSION, definePlugin, muxerFor, Param, Type, videoCodecFor, VIDEO_CONTAINERS } from '../sdk.js';

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'convert-video',
  path: '/convert-video/',
  summary: 'Convert a video to another format',
  description:
    'Streams are re-encoded to codecs the container suits (mp4/mov/mkv: H.264 and AAC; webm: VP9 and Opus; avi: MPEG-4 Part 2 and MP3), and copied when they already are such a codec.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video to convert'),
    format: Param.format(VIDEO_CONTAINERS, { default: 'mp4', description: 'Output video format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_input_video.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    return {
      ...(video.facts.duration ? { expectedSeconds: video.facts.duration } : {}),
      commands: [
        argv(
          input(video),
          ['-map', '0:v:0', '-map', '0:a:0?'],
          videoCodecFor(params.format, video.facts),
          video.facts.audio ? audioCodecFor(params.format, video.facts) : null,
          muxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: (p) => `Conversion to .${p.format} successful`,
});
