import {
  argv,
  audioCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  evenPadFilter,
  fanoutParam,
  frameByFrame,
  keptFrameTimes,
  mediaError,
  muxerFor,
  Param,
  qualityParam,
  splitsInParts,
  timeWithin,
  Type,
  videoEncoder,
  type LocalInput,
} from '../sdk.js';
import { keptFormatParam, keptVideoContainer } from './shared/kept-container.js';
import { corner, OVERLAY_POSITIONS, type OverlayPosition } from './shared/overlay-corner.js';
import { shownSize } from './shared/shown-size.js';
import { checkLayerTimes, layerTimeFields } from './shared/layer-times.js';

/**
 * Pixels an animated logo may decode: every frame of a GIF is a whole canvas, so a file of a few kilobytes (a
 * 9900x9900 canvas of 400 one-pixel frames) decodes to 39 gigapixels, minutes of work on a short video. A thousand
 * megapixels (a 1920x1080 logo of 480 frames) take about ten seconds on a busy two-core machine.
 */
const ANIMATION_MAX_PIXELS = 1_000_000_000;

/** Refuses (422), before anything is decoded, a logo whose frames times its canvas pass ANIMATION_MAX_PIXELS. */
function checkAnimation(logo: LocalInput): void {
  const picture = logo.facts.video;
  if (!picture?.frames || picture.frames < 2) return;
  const pixels = picture.width * picture.height * picture.frames;
  if (pixels <= ANIMATION_MAX_PIXELS) return;
  throw mediaError(
    `Input ${logo.source} is an animation of ${picture.frames} frames of ${picture.width}x${picture.height} ` +
      `pixels, ${pixels} pixels to decode: an overlay may decode at most ${ANIMATION_MAX_PIXELS}`,
  );
}

/** `corner` as overlay's options. */
function placement(position: OverlayPosition, margin: number): string {
  const [x, y] = corner(position, margin);
  return `x=${x}:y=${y}`;
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'overlay-image',
  path: '/overlay-image/',
  summary: 'Put a logo or watermark over a video',
  description:
    'The image is placed at a corner or the centre, scaled to a share of the width the video is shown at ' +
    '(after its rotation), at an opacity, from `start` to `end`. A PNG keeps its transparency. The audio is ' +
    "copied when the container takes it. The output keeps the input's container unless `format` names another.",
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video'),
    image_url: Param.url('image', 'URL of the logo or watermark (PNG keeps its transparency)'),
    position: Param.choice(OVERLAY_POSITIONS, { default: 'top-right', description: 'Where the image goes' }),
    width: Param.number({
      minimum: 0.01,
      maximum: 1,
      default: 0.15,
      description: "The image's width as a share of the video's width (0.01 to 1); its height follows",
    }),
    opacity: Param.number({
      minimum: 0,
      maximum: 1,
      default: 1,
      description: "The image's opacity, 0 (invisible) to 1 (as it is)",
    }),
    margin: Param.number({
      minimum: 0,
      maximum: 0.5,
      default: 0.03,
      description: "Space between the image and the video's edges, as a share of the video's width (0 to 0.5)",
    }),
    ...layerTimeFields('the image'),
    format: keptFormatParam(),
    quality: qualityParam(),
    fanout: fanoutParam(),
  }),
  output: (p, inputs) => ({
    field: 'output_file',
    path: `{id}/overlaid.${keptVideoContainer(p.format, inputs?.video_url?.[0])}`,
  }),
  // What the fields alone say is wrong is refused before anything is downloaded.
  checkParams: checkLayerTimes,
  check: ({ inputs }) => checkAnimation(inputs.image_url![0]!),
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const logo = inputs.image_url![0]!;
    const { facts } = video;
    const start = timeWithin('start', params.start, facts);
    const end = params.end !== undefined ? timeWithin('end', params.end, facts) : undefined;
    const container = keptVideoContainer(params.format, facts);
    const encoder = videoEncoder(container, { quality: params.quality });
    const size = shownSize(facts.video!);
    // Pixel sizes computed from the probed facts: only numbers reach the graph.
    const logoWidth = Math.max(1, Math.round(params.width * size.width));
    // The logo's height follows its shape: a narrow, tall picture scaled to a share of the width may be the largest
    // picture the command makes.
    const logoHeight = Math.max(1, Math.round((logoWidth * logo.facts.video!.height) / logo.facts.video!.width));
    const margin = Math.round(params.margin * size.width);
    // Whole video: no `enable`, so the overlay is never switched off by a rounding of the end.
    const span = end !== undefined ? `between(t,${start},${end})` : `gte(t,${start})`;
    const timed = start > 0 || end !== undefined ? `:enable='${span}'` : '';
    const pad = evenPadFilter(encoder, { ...facts.video!, ...size });
    const logoChain = `[1:v:0]scale=${logoWidth}:-1,format=rgba,colorchannelmixer=aa=${params.opacity}[logo]`;
    const padded = pad ? `,${pad}` : '';
    const graph = `${logoChain};[0:v:0][logo]overlay=${placement(params.position, margin)}${timed}${padded}[v]`;
    // In a part, `enable` would be judged on the logo's frame too, whose time is 0 where the part's first frame's is
    // its start: that frame would go without the logo. The span moves the logo out of the picture instead (x at
    // minus its width), judged on the video's frames alone (overlay's `t`, evaluated per frame).
    const [x, y] = corner(params.position, margin);
    const partOverlay = timed ? `overlay=x='if(${span},${x},-overlay_w)':y=${y}` : `overlay=x=${x}:y=${y}`;
    const audio = facts.audio ? audioCodecFor(container, facts) : undefined;
    return {
      ...(facts.duration ? { expectedSeconds: facts.duration } : {}),
      frameSize: logoWidth * logoHeight > size.width * size.height ? { width: logoWidth, height: logoHeight } : size,
      // A long video to H.264 in parts (docs/fanout.md): every part reads the whole logo, and its frames are put on
      // the whole input's clock before the overlay reads `t`, so the logo shows on the frames it does in one pass,
      // across a join too.
      ...(params.fanout && splitsInParts(encoder)
        ? {
            fanout: frameByFrame({
              input: video,
              opened: input(video),
              others: input(logo),
              filters: (shift, reset) => [
                ...[
                  '-filter_complex',
                  `[0:v:0]${shift}[main];${logoChain};[main][logo]${partOverlay}${padded},${reset}[v]`,
                ],
                ...['-map', '[v]'],
              ],
              videoArgs: encoder,
              ...(audio ? { audioArgs: audio } : {}),
              muxer: muxerFor(container),
              output,
            }),
          }
        : {}),
      commands: [
        argv(
          input(video),
          input(logo),
          ['-filter_complex', graph, '-map', '[v]', '-map', '0:a:0?'],
          encoder,
          keptFrameTimes(encoder),
          audio ?? null,
          muxerFor(container),
          [output],
        ),
      ],
    };
  },
  message: () => 'Image overlaid successfully',
});
