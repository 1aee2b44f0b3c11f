import {
  qualityParam,
  argv,
  audioCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  evenSizeArgs,
  muxerFor,
  Param,
  Type,
  videoCodecFor,
  VIDEO_CONTAINERS,
} from '../sdk.js';

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'merge-audio-video',
  path: '/merge-audio-video/',
  summary: "Replace a video's audio track with another audio",
  description:
    "The video's own audio is dropped, never mixed. The video stream is copied when the container takes its " +
    'codec. The output lasts as long as the shorter input.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the input video'),
    audio_url: Param.url('audio', "URL of the audio that replaces the video's sound (MP3 recommended)"),
    format: Param.format(VIDEO_CONTAINERS, { default: 'mp4', description: 'Output video format' }),
    quality: qualityParam(),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_merged.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const audio = inputs.audio_url![0]!;
    const durations = [video.facts.duration, audio.facts.duration].filter((d): d is number => d !== undefined);
    const shorter = durations.length > 0 ? Math.min(...durations) : undefined;
    const videoArgs = videoCodecFor(params.format, video.facts, params.quality);
    return {
      ...(shorter ? { expectedSeconds: shorter } : {}),
      commands: [
        argv(
          input(video),
          input(audio),
          ['-map', '0:v:0', '-map', '1:a:0'],
          videoArgs,
          evenSizeArgs(videoArgs, video.facts.video),
          audioCodecFor(params.format, audio.facts),
          // -t cuts at the shorter input exactly; -shortest alone overshoots with copied streams.
          // -shortest as well, because a container's duration is its longest stream's: a video
          // whose own (dropped) sound outlasts its picture must still end with its picture.
          shorter ? ['-t', shorter.toFixed(3)] : null,
          ['-shortest'],
          muxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: () => 'Audio successfully merged into the video',
});
