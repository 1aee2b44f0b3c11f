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
  type Sharp,
} from '../sdk.js';
import { BLACK, flattenOntoBlack, JPEG_LIBVIPS, JPEG_OUTPUT } from './shared/still-image.js';

const FORMATS = ['png', 'jpg', 'jpeg', 'webp', 'bmp', 'tiff', 'gif'] as const;
type ImageFormat = (typeof FORMATS)[number];

/** Pixel formats that can carry transparency (palettes may, through a transparent entry). */
const ALPHA = /^(rgba|bgra|argb|abgr|ya|yuva|gbrap|pal8)/;

/**
 * Targets without transparency: the picture is flattened onto black, so transparent areas do not
 * show the colour hidden under them.
 */
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

/**
 * What libvips writes for each target it has: the same encodings as the ffmpeg commands. BMP has
 * no libvips writer and stays with ffmpeg.
 */
const LIBVIPS_WRITE: Partial<Record<ImageFormat, (picture: Sharp) => Sharp>> = {
  jpg: (picture) => picture.flatten({ background: BLACK }).jpeg(JPEG_LIBVIPS),
  jpeg: (picture) => picture.flatten({ background: BLACK }).jpeg(JPEG_LIBVIPS),
  // Adaptive row filters, as ffmpeg's PNG encoder chooses them: without them the file is 1.2 times larger.
  png: (picture) => picture.png({ adaptiveFiltering: true }),
  // Effort 2 of 6 takes half the time of libwebp's default (4) for 3% more bytes, still 0.94 times
  // ffmpeg's (`npm run bench`).
  webp: (picture) => picture.webp({ quality: 90, effort: 2 }),
  tiff: (picture) => picture.tiff({ compression: 'deflate' }),
  // libvips makes the palette from the picture itself, as palettegen does.
  gif: (picture) => picture.gif(),
};

/** The ffmpeg command, for BMP and for pictures libvips does not read here; `npm run bench` compares against it. */
export function convertWithFfmpeg({
  params,
  inputs,
  output,
  input,
}: BuildContext<{ target_format: ImageFormat }>): string[] {
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
  const gifPalette =
    format === 'gif'
      ? ['-filter_complex', '[0:v]split[a][b];[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse']
      : null;
  const encode = ENCODE[format as keyof typeof ENCODE](alpha);
  return argv(input(image), gifPalette, ['-frames:v', '1', '-update', '1'], encode, ['-f', 'image2', output]);
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'convert_image_from_url',
  path: '/convert_image_from_url/',
  summary: 'Convert an image to another format',
  description:
    'The first frame of the image is written in the target format; transparency is kept where the target has ' +
    'it (PNG, WebP, TIFF, GIF) and becomes black where it has not (JPEG, BMP).',
  params: Type.Object({
    image_url: Param.url('image', 'Direct URL of the image'),
    target_format: Param.format(FORMATS, { description: 'Target image format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_converted.${p.target_format}` }),
  build: (context): Plan | string[] => {
    const { params, inputs, output } = context;
    const image = inputs.image_url![0]!;
    const write = LIBVIPS_WRITE[params.target_format];
    if (!write || !libvipsReads(image.facts)) return convertWithFfmpeg(context);
    return {
      commands: [],
      steps: [
        imageStep(
          `libvips: ${image.file} (first frame) written as ${params.target_format} -> ${output}`,
          image.file,
          output,
          write,
        ),
      ],
    };
  },
  message: (p) => `Image converted to ${p.target_format} successfully.`,
});
