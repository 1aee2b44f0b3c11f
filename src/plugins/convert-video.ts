import {
  argv,
  audioCodecFor,
  audioEncoder,
  CONTRACT_VERSION,
  definePlugin,
  evenPadFilter,
  evenSizeArgs,
  fanoutParam,
  frameByFrame,
  keptFrameTimes,
  muxerFor,
  Param,
  splitsInParts,
  Type,
  videoCodecFor,
  videoEncoder,
  qualityParam,
  type Quality,
  VIDEO_CONTAINERS,
  type MediaFacts,
  type VideoContainer,
} from '../sdk.js';

/**
 * What a conversion to mp4 or mov keeps as it is. Those containers can carry more (MPEG-4 Part 2,
 * MP3, PCM), but a converted mp4 is meant to play anywhere, browsers included, so the rest is
 * re-encoded to H.264 and AAC. Other containers copy what `videoCodecFor`/`audioCodecFor` allow.
 */
const KEEP: Partial<Record<VideoContainer, { video: readonly string[]; audio: readonly string[] }>> = {
  mp4: { video: ['h264', 'hevc', 'av1'], audio: ['aac'] },
  mov: { video: ['h264', 'hevc'], audio: ['aac'] },
};

function videoArgsFor(format: VideoContainer, facts: MediaFacts, quality: Quality): string[] {
  const keep = KEEP[format];
  if (!keep) return videoCodecFor(format, facts, quality);
  return facts.video && keep.video.includes(facts.video.codec) ? ['-c:v', 'copy'] : videoEncoder(format, { quality });
}

function audioArgsFor(format: VideoContainer, facts: MediaFacts): string[] {
  const keep = KEEP[format];
  if (!keep) return audioCodecFor(format, facts);
  return facts.audio && keep.audio.includes(facts.audio.codec) ? ['-c:a', 'copy'] : audioEncoder(format);
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'convert-video',
  path: '/convert-video/',
  summary: 'Convert a video to another format',
  description:
    'Streams are re-encoded to codecs the container suits (mp4/mov: H.264 and AAC; mkv: H.264 and AAC unless ' +
    'it already holds a codec Matroska takes; webm: VP9 and Opus; avi: MPEG-4 Part 2 and MP3), and copied when ' +
    'they already are such a codec.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video to convert'),
    format: Param.format(VIDEO_CONTAINERS, { default: 'mp4', description: 'Output video format' }),
    quality: qualityParam(),
    fanout: fanoutParam(),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_input_video.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const videoArgs = videoArgsFor(params.format, video.facts, params.quality);
    const audioArgs = video.facts.audio ? audioArgsFor(params.format, video.facts) : undefined;
    // Parts are joined by stream copy into mp4 files first: H.264 and HEVC only (docs/fanout.md).
    const splits = params.fanout && splitsInParts(videoArgs);
    const pad = evenPadFilter(videoArgs, video.facts.video);
    return {
      ...(video.facts.duration ? { expectedSeconds: video.facts.duration } : {}),
      ...(splits
        ? {
            fanout: frameByFrame({
              input: video,
              opened: input(video),
              ...(pad ? { filters: () => ['-map', '0:v:0', '-vf', pad] } : {}),
              videoArgs,
              ...(audioArgs ? { audioArgs } : {}),
              muxer: muxerFor(params.format),
              output,
            }),
          }
        : {}),
      commands: [
        argv(
          input(video),
          ['-map', '0:v:0', '-map', '0:a:0?'],
          videoArgs,
          evenSizeArgs(videoArgs, video.facts.video),
          keptFrameTimes(videoArgs),
          video.facts.audio ? audioArgsFor(params.format, video.facts) : null,
          muxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: (p) => `Conversion to .${p.format} successful`,
});
