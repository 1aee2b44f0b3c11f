/**
 * A filter graph that flattens a picture onto black before it is written as a format without
 * alpha, so transparent areas become black rather than whatever colour hides under them.
 */
export function flattenOntoBlack(chain: string, width: number, height: number): string {
  return `color=c=black:s=${width}x${height}[bg];[0:v]${chain},format=rgba[fg];[bg][fg]overlay=shortest=1:format=auto`;
}

/** Options that write exactly one picture as a JPEG of good quality. */
export const JPEG_OUTPUT = [
  '-frames:v',
  '1',
  '-update',
  '1',
  '-c:v',
  'mjpeg',
  '-q:v',
  '2',
  '-pix_fmt',
  'yuvj420p',
  '-f',
  'image2',
];

/**
 * libvips' JPEG of the same pictures as JPEG_OUTPUT: quality 90 with 4:2:0 chroma measures SSIM
 * 0.995 against ffmpeg's `-q:v 2` at 0.93 times its size (`npm run bench`).
 */
export const JPEG_LIBVIPS = { quality: 90, chromaSubsampling: '4:2:0' } as const;

/** Black, for libvips' `flatten` (transparency made black) and padding. */
export const BLACK = { r: 0, g: 0, b: 0 } as const;
