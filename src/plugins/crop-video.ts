import {
  argv,
  audioCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  muxerFor,
  Param,
  paramError,
  qualityParam,
  Type,
  videoEncoder,
} from '../sdk.js';
import { coverCrop } from './shared/cover-crop.js';
import { keptFormatParam, keptVideoContainer } from './shared/kept-container.js';

/** The frame's sides: even (4:2:0 encoders halve them), from a thumbnail's 16 to 4K's 4096. */
const side = (what: string, fallback: number) =>
  Param.integer({
    minimum: 16,
    maximum: 4096,
    default: fallback,
    description: `The output's ${what} in pixels, an even number from 16 to 4096`,
  });

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'crop-video',
  path: '/crop-video/',
  summary: 'Crop a video to a frame size, 720x1280 (Shorts, Reels, TikTok) by default',
  description:
    'The picture is scaled to cover width x height, keeping its aspect ratio, and cropped around its centre, as ' +
    'crop_image_to_short does for images, with square pixels. The length and the audio are kept; the audio is ' +
    "copied when the container takes it. The output keeps the input's container unless `format` names another.",
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video'),
    width: side('width', 720),
    height: side('height', 1280),
    format: keptFormatParam(),
    quality: qualityParam(),
  }),
  output: (p, inputs) => ({
    field: 'output_file',
    path: `{id}/cropped.${keptVideoContainer(p.format, inputs?.video_url?.[0])}`,
  }),
  outputSize: ({ width, height }) => ({ width, height }),
  // An odd side is refused before anything is downloaded: H.264 and VP9 in 4:2:0 cannot encode it.
  checkParams: ({ width, height }) => {
    for (const [key, value] of [
      ['width', width],
      ['height', height],
    ] as const)
      if (value % 2 !== 0) throw paramError(`Expected \`${key}\` to be an even number from 16 to 4096, got ${value}`);
  },
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const { facts } = video;
    const container = keptVideoContainer(params.format, facts);
    return {
      ...(facts.duration ? { expectedSeconds: facts.duration } : {}),
      commands: [
        argv(
          input(video),
          ['-map', '0:v:0', '-map', '0:a:0?', '-vf', coverCrop(params.width, params.height)],
          videoEncoder(container, { quality: params.quality }),
          facts.audio ? audioCodecFor(container, facts) : null,
          muxerFor(container),
          [output],
        ),
      ],
    };
  },
  message: () => 'Video cropped successfully',
});
