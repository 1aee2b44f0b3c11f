import type { Sharp, SharpOptions } from 'sharp';
import { MediaflowError, mediaError } from '../errors.js';
import type { MediaFacts } from '../contract/media-facts.js';
import { shortMessage } from './short-message.js';

/**
 * libvips (through sharp) for pictures: in process, so no ffmpeg start and no filter graph per
 * image. sharp loads on first use, so commands that never touch a picture do not pay for it.
 */

/**
 * The demuxers (as the probe names them) of the pictures libvips reads here. Everything else an
 * image input may be (BMP, QOI, PPM, JPEG XL, SVG) stays with ffmpeg, as before.
 */
const LIBVIPS_DEMUXERS = ['jpeg_pipe', 'png_pipe', 'webp_pipe', 'gif', 'tiff_pipe'];

/**
 * libvips' loaders for those formats, from files: every other loader is blocked for the whole
 * process, so SVG (which may name other files), PDF, HEIF, raw pixel dumps and the rest never
 * reach a decoder, whatever a file's first bytes claim.
 */
const ALLOWED_LOADERS = [
  'VipsForeignLoadJpegFile',
  'VipsForeignLoadPngFile',
  'VipsForeignLoadWebpFile',
  'VipsForeignLoadGifFile',
  'VipsForeignLoadTiffFile',
];

/** Whether libvips reads this probed input here (`imageStep`); otherwise build an ffmpeg command for it. */
export const libvipsReads = (facts: MediaFacts): boolean =>
  facts.isImage && LIBVIPS_DEMUXERS.includes(facts.formatName.split(',')[0]!);

let loading: Promise<typeof import('sharp')> | undefined;

/** sharp, configured for a server on first use. */
function loadSharp(): Promise<typeof import('sharp')> {
  loading ??= import('sharp').then((module) => {
    const sharp = module.default;
    sharp.block({ operation: ['VipsForeignLoad'] });
    sharp.unblock({ operation: ALLOWED_LOADERS });
    // No operation cache: every job reads other files, and a cached one keeps a deleted workspace
    // file open and its pixels in memory.
    sharp.cache(false);
    return module;
  });
  return loading;
}

/** How one picture is read. */
export interface ImageLimits {
  maxPixels: number;
  /** Whole seconds libvips may work before it stops (at least 1). */
  timeoutSeconds: number;
  /**
   * Threads for the picture: the job slot's share of the cores (`coresEach`), so that all slots together use each
   * core once; more threads than cores only trade places.
   */
  threads: number;
  /** The input as the user named it, for messages. */
  source?: string;
}

/**
 * Reads `inputPath`, applies `transform`, writes `outputPath`. A picture over `maxPixels` is
 * refused from its header, before any pixel is decoded; libvips' own failures are 422s.
 */
export async function transformImage(
  inputPath: string,
  outputPath: string,
  transform: (image: Sharp) => Sharp,
  limits: ImageLimits,
): Promise<void> {
  const { default: sharp } = await loadSharp();
  // libvips has one thread count per process, read as each picture's work starts: set to this engine's, it holds for
  // this picture, unless another engine's picture starts at the same moment.
  sharp.concurrency(limits.threads);
  const options: SharpOptions = { limitInputPixels: limits.maxPixels, autoOrient: true, failOn: 'error' };
  const input = limits.source ? `Input ${limits.source}` : 'Input';
  try {
    await transform(
      sharp(inputPath, options).timeout({ seconds: Math.max(1, Math.ceil(limits.timeoutSeconds)) }),
    ).toFile(outputPath);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/^timeout:/.test(message))
      throw new MediaflowError('MF_ERR_TIMEOUT', 'libvips ran past its time limit and was stopped', { cause: error });
    if (/pixel limit/.test(message))
      throw mediaError(`${input} is larger than the limit of ${limits.maxPixels} pixels (MEDIAFLOW_MAX_PIXELS)`, error);
    throw mediaError(`libvips failed: ${shortMessage(error)}`, error);
  }
}
