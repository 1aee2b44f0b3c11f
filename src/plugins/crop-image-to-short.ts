import { argv, CONTRACT_VERSION, definePlugin, Param, Type } from '../sdk.js';
import { flattenOntoBlack, JPEG_OUTPUT } from './shared/still-image.js';

const WIDTH = 720;
const HEIGHT = 1280;

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'crop_image_to_short',
  path: '/crop_image_to_short/',
  summary: 'Fit an image to 720x1280 (Shorts, Reels, TikTok)',
  description:
    'An image at least 720x1280 in either orientation (1080x1920, 1920x1080, ...) is scaled to cover the frame and cropped around its centre; a smaller one is scaled to fit and padded with black. Transparency becomes black.',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image (JPG, PNG, WebP, ...)'),
  }),
  output: () => ({ field: 'output_file', path: '{id}_cropped.jpg' }),
  build: ({ inputs, output, input }) => {
    const image = inputs.image_url![0]!;
    const { width, height } = image.facts.video!;
    // Large enough in either orientation: a 1920x1080 landscape has the pixels of a 720x1280 frame
    // and is cropped around its centre, not shrunk into a strip between black bars.
    const largeEnough = Math.min(width, height) >= WIDTH && Math.max(width, height) >= HEIGHT;
    const chain = largeEnough
      ? `scale=${WIDTH}:${HEIGHT}:force_original_aspect_ratio=increase,crop=${WIDTH}:${HEIGHT}`
      : `scale=${WIDTH}:${HEIGHT}:force_original_aspect_ratio=decrease,pad=${WIDTH}:${HEIGHT}:(ow-iw)/2:(oh-ih)/2:color=black@0`;
    return argv(input(image), ['-filter_complex', `${flattenOntoBlack(`${chain},setsar=1`, WIDTH, HEIGHT)}`], JPEG_OUTPUT, [output]);
  },
  message: () => 'Image processed for Shorts format successfully',
});
