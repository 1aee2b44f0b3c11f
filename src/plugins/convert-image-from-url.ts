import { argv, CONTRACT_VERSION, definePlugin, Param, Type } from '../sdk.js';
import { flattenOntoBlack, JPEG_OUTPUT } from './shared/still-image.js';

const FORMATS = ['png', 'jpg', 'jpeg', 'webp', 'bmp', 'tiff', 'gif'] as const;
type ImageFormat = (typeof FORMATS)[number];

/** Encoder options per target; each writes exactly one picture. */
const ENCODE: Record<Exclude<ImageFormat, 'jpg' | 'jpeg'>, string[]> = {
  png: ['-c:v', 'png'],
  webp: ['-c:v', 'libwebp', '-quality', '90'],
  bmp: ['-c:v', 'bmp'],
  tiff: ['-c:v', 'tiff', '-compression_algo', 'deflate'],
  gif: ['-c:v', 'gif'],
};

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'convert_image_from_url',
  path: '/convert_image_from_url/',
  summary: 'Convert an image to another format',
  description: 'The first frame of the image is written in the target format; transparency is kept where the target has it (PNG, WebP, TIFF, GIF).',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image'),
    target_format: Param.format(FORMATS, { description: 'Target image format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_converted.${p.target_format}` }),
  build: ({ params, inputs, output, input }) => {
    const image = inputs.image_url![0]!;
    const { width, height } = image.facts.video!;
    const format = params.target_format;
    if (format === 'jpg' || format === 'jpeg') {
      return argv(input(image), ['-filter_complex', flattenOntoBlack('setsar=1', width, height)], JPEG_OUTPUT, [output]);
    }
    // GIF has 256 colours: a palette made from the picture itself keeps it faithful.
    const gifPalette = format === 'gif' ? ['-filter_complex', '[0:v]split[a][b];[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse'] : null;
    return argv(input(image), gifPalette, ['-frames:v', '1', '-update', '1'], ENCODE[format], ['-f', 'image2', output]);
  },
  message: (p) => `Image converted to ${p.target_format} successfully.`,
});
