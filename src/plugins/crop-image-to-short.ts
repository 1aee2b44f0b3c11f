import {
  argv,
  CONTRACT_VERSION,
  definePlugin,
  imageStep,
  libvipsReads,
  Param,
  Type,
  type BuildContext,
  type LocalInput,
  type Plan,
} from '../sdk.js';
import { coverCrop } from './shared/cover-crop.js';
import { BLACK, flattenOntoBlack, JPEG_LIBVIPS, JPEG_OUTPUT } from './shared/still-image.js';

const WIDTH = 720;
const HEIGHT = 1280;

/**
 * Large enough in either orientation: a 1920x1080 landscape has the pixels of a 720x1280 frame
 * and is cropped around its centre, not shrunk into a strip between black bars.
 */
function largeEnough(image: LocalInput): boolean {
  const { width, height } = image.facts.video!;
  return Math.min(width, height) >= WIDTH && Math.max(width, height) >= HEIGHT;
}

/**
 * The ffmpeg command, for pictures libvips does not read here (BMP, QOI, SVG, ...); `npm run bench`
 * compares against it.
 */
export function cropWithFfmpeg({ inputs, output, input }: BuildContext<unknown>): string[] {
  const image = inputs.image_url![0]!;
  const chain = largeEnough(image)
    ? coverCrop(WIDTH, HEIGHT)
    : `scale=${WIDTH}:${HEIGHT}:force_original_aspect_ratio=decrease,` +
      `pad=${WIDTH}:${HEIGHT}:(ow-iw)/2:(oh-ih)/2:color=black@0,setsar=1`;
  return argv(input(image), ['-filter_complex', `${flattenOntoBlack(chain, WIDTH, HEIGHT)}`], JPEG_OUTPUT, [output]);
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'crop_image_to_short',
  path: '/crop_image_to_short/',
  summary: 'Fit an image to 720x1280 (Shorts, Reels, TikTok)',
  description:
    'An image at least 720x1280 in either orientation (1080x1920, 1920x1080, ...) is scaled to cover the ' +
    'frame and cropped around its centre; a smaller one is scaled to fit and padded with black. Transparency ' +
    'becomes black.',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image (JPG, PNG, WebP, ...)'),
  }),
  output: () => ({ field: 'output_file', path: '{id}_cropped.jpg' }),
  build: (context): Plan | string[] => {
    const { inputs, output } = context;
    const image = inputs.image_url![0]!;
    if (!libvipsReads(image.facts)) return cropWithFfmpeg(context);
    // cover: scaled to fill the frame, cropped around the centre; contain: scaled to fit, centred on black.
    const fit = largeEnough(image) ? 'cover' : 'contain';
    return {
      commands: [],
      steps: [
        imageStep(
          `libvips: ${image.file} fitted to ${WIDTH}x${HEIGHT} (${fit}, centred), flattened onto black, JPEG ` +
            `q${JPEG_LIBVIPS.quality} -> ${output}`,
          image.file,
          output,
          (picture) =>
            picture
              .resize(WIDTH, HEIGHT, {
                fit,
                position: 'centre',
                background: { ...BLACK, alpha: 0 },
                kernel: 'lanczos3',
              })
              .flatten({ background: BLACK })
              .jpeg(JPEG_LIBVIPS),
        ),
      ],
    };
  },
  message: () => 'Image processed for Shorts format successfully',
});
