import { argv, CONTRACT_VERSION, definePlugin, Param, Type } from '../sdk.js';
import { flattenOntoBlack, JPEG_OUTPUT } from './shared/still-image.js';

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'resize_image',
  path: '/resize_image/',
  summary: 'Resize an image to given width and height',
  description: 'The output is a JPEG of exactly width x height pixels: the image is stretched to that size (the aspect ratio follows the request, not the image).',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image'),
    width: Param.integer({ minimum: 1, maximum: 8192, examples: [640], description: 'Width in pixels' }),
    height: Param.integer({ minimum: 1, maximum: 8192, examples: [480], description: 'Height in pixels' }),
  }),
  output: () => ({ field: 'output_file', path: '{id}_resized.jpg' }),
  build: ({ params, inputs, output, input }) => {
    const image = inputs.image_url![0]!;
    const chain = `scale=${params.width}:${params.height}:flags=lanczos,setsar=1`;
    return argv(input(image), ['-filter_complex', flattenOntoBlack(chain, params.width, params.height)], JPEG_OUTPUT, [output]);
  },
  message: () => 'Image resized successfully',
});
