import { qualityParam, argv, audioCodecFor, CONTRACT_VERSION, definePlugin, escapeFilterValue, even, muxerFor, Param, Type, videoEncoder, VIDEO_CONTAINERS } from '../sdk.js';

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'add-subtitles',
  path: '/add-subtitles/',
  summary: 'Burn a subtitle file into a video',
  description:
    'SRT, ASS/SSA and WebVTT subtitles are drawn into the picture with libass. The audio is copied when the container takes it.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video'),
    subtitle_url: Param.url('subtitle', 'URL of the subtitle file (.srt, .ass, .ssa, .vtt)'),
    format: Param.format(VIDEO_CONTAINERS, { default: 'mp4', description: 'Output video format' }),
    quality: qualityParam(),
  }),
  output: (p) => ({ field: 'output_video', path: `{id}/video_with_subtitles.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const subtitles = inputs.subtitle_url![0]!;
    // The subtitle file has a generated name in the workspace; it is escaped all the same, so the
    // graph stays intact whatever a future naming scheme produces.
    const burn = `subtitles=filename=${escapeFilterValue(subtitles.file)}`;
    // x264 in 4:2:0 refuses odd sizes: a picture of odd width or height gets one black column or row.
    const encoder = videoEncoder(params.format, { quality: params.quality });
    const size = video.facts.video;
    const odd = encoder.includes('libx264') && size && (size.width % 2 !== 0 || size.height % 2 !== 0);
    const filter = odd ? `${burn},pad=${even(size.width)}:${even(size.height)}:0:0:color=black` : burn;
    return {
      ...(video.facts.duration ? { expectedSeconds: video.facts.duration } : {}),
      commands: [
        argv(
          input(video),
          ['-map', '0:v:0', '-map', '0:a:0?', '-vf', filter],
          encoder,
          video.facts.audio ? audioCodecFor(params.format, video.facts) : null,
          muxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: () => 'Subtitles added successfully',
});
