import { argv, CONTRACT_VERSION, definePlugin, Param, Type } from '../sdk.js';
import { flattenOntoBlack, JPEG_OUTPUT } from './shared/still-image.js';

const FORMATS = ['png', 'jpg', 'jpeg', 'webp', 'bmp', 'tiff', 'gif'] as const;
type ImageFormat = (typeof FORMATS)[number];

/** Pixel formats that can carry transparency (palettes may, through a transparent entry). */
const ALPHA = /^(rgba|bgra|argb|abgr|ya|yuva|gbrap|pal8)/;

/** Targets without transparency: the picture is flattened onto black, so transparent areas do not show the colour hidden under them. */
const FLATTENED: Partial<Record<ImageFormat, string[]>> = {
  jpg: JPEG_OUTPUT,
  jpeg: JPEG_OUTPUT,
  bmp: ['-frames:v', '1', '-update', '1', '-c:v', 'bmp', '-pix_fmt', 'bgr24', '-f', 'image2'],
};

/** Encoder options per target that keeps transparency; each writes exactly one picture. */
const ENCODE = {
  png: () => ['-c:v', 'png'],
  webp: () => ['-c:v', 'libwebp', '-quality', '90'],
  // RGB, not the YCbCr ffmpeg would otherwise pick for a JPEG or WebP source: few readers take
  // subsampled YCbCr TIFFs (ffmpeg's own decoder refuses them at odd heights).
  tiff: (alpha: boolean) => ['-c:v', 'tiff', '-compression_algo', 'deflate', '-pix_fmt', alpha ? 'rgba' : 'rgb24'],
  gif: () => ['-c:v', 'gif'],
} satisfies Record<Exclude<ImageFormat, 'jpg' | 'jpeg' | 'bmp'>, (alpha: boolean) => string[]>;

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'convert_image_from_url',
  path: '/convert_image_from_url/',
  summary: 'Convert an image to another format',
  description: 'The first frame of the image is written in the target format; transparency is kept where the target has it (PNG, WebP, TIFF, GIF) and becomes black where it has not (JPEG, BMP).',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image'),
    target_format: Param.format(FORMATS, { description: 'Target image format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_converted.${p.target_format}` }),
  build: ({ params, inputs, output, input }) => {
    const image = inputs.image_url![0]!;
    const { width, height } = image.facts.video!;
    const format = params.target_format;
    const alpha = ALPHA.test(image.facts.video!.pixFmt);
    const flattened = FLATTENED[format];
    if (flattened) {
      // Only a picture that may hold transparency is flattened: the detour through RGBA costs a
      // generation of colour at odd-sized edges, which a JPEG going to JPEG need not pay.
      const filter = alpha ? ['-filter_complex', flattenOntoBlack('setsar=1', width, height)] : ['-vf', 'setsar=1'];
      return argv(input(image), filter, flattened, [output]);
    }
    // GIF has 256 colours: a palette made from the picture itself keeps it faithful.
    const gifPalette = format === 'gif' ? ['-filter_complex', '[0:v]split[a][b];[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse'] : null;
    const encode = ENCODE[format as keyof typeof ENCODE](alpha);
    return argv(input(image), gifPalette, ['-frames:v', '1', '-update', '1'], encode, ['-f', 'image2', output]);
  },
  message: (p) => `Image converted to ${p.target_format} successfully.`,
});
