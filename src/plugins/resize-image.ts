import {
  argv,
  CONTRACT_VERSION,
  definePlugin,
  imageStep,
  libvipsReads,
  Param,
  Type,
  type BuildContext,
  type Plan,
} from '../sdk.js';
import { BLACK, flattenOntoBlack, JPEG_LIBVIPS, JPEG_OUTPUT } from './shared/still-image.js';

interface Size {
  width: number;
  height: number;
}

/**
 * The ffmpeg command, for pictures libvips does not read here (BMP, QOI, SVG, ...); `npm run bench`
 * compares against it.
 */
export function resizeWithFfmpeg({ params, inputs, output, input }: BuildContext<Size>): string[] {
  const image = inputs.image_url![0]!;
  const chain = `scale=${params.width}:${params.height}:flags=lanczos,setsar=1`;
  return argv(input(image), ['-filter_complex', flattenOntoBlack(chain, params.width, params.height)], JPEG_OUTPUT, [
    output,
  ]);
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'resize_image',
  path: '/resize_image/',
  summary: 'Resize an image to given width and height',
  description:
    'The output is a JPEG of exactly width x height pixels: the image is stretched to that size (the aspect ' +
    'ratio follows the request, not the image).',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image'),
    width: Param.integer({ minimum: 1, maximum: 8192, examples: [640], description: 'Width in pixels' }),
    height: Param.integer({ minimum: 1, maximum: 8192, examples: [480], description: 'Height in pixels' }),
  }),
  output: () => ({ field: 'output_file', path: '{id}_resized.jpg' }),
  outputSize: ({ width, height }) => ({ width, height }),
  build: (context): Plan | string[] => {
    const { params, inputs, output } = context;
    const image = inputs.image_url![0]!;
    if (!libvipsReads(image.facts)) return resizeWithFfmpeg(context);
    const { width, height } = params;
    return {
      commands: [],
      steps: [
        imageStep(
          `libvips: ${image.file} resized to ${width}x${height} (lanczos3, stretched), flattened onto black, ` +
            `JPEG q${JPEG_LIBVIPS.quality} -> ${output}`,
          image.file,
          output,
          (picture) =>
            picture
              .resize(width, height, { fit: 'fill', kernel: 'lanczos3' })
              .flatten({ background: BLACK })
              .jpeg(JPEG_LIBVIPS),
        ),
      ],
    };
  },
  message: () => 'Image resized successfully',
});
