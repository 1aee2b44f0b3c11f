import path from 'node:path';

/**
 * Media types of output files by extension, the one table for every place that names them: the S3
 * store's Content-Type, the local `/uploads/` (whose @fastify/static gives the same, from the `mime`
 * table, except for ASS, which that table lacks), and the OpenAPI document.
 */
const MEDIA_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  aac: 'audio/x-aac',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/x-flac',
  mp4: 'video/mp4',
  m4v: 'video/x-m4v',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  webm: 'video/webm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  gif: 'image/gif',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
  // ASS has no registered type: `text/x-ssa` is the one players and editors use.
  ass: 'text/x-ssa',
  txt: 'text/plain',
  json: 'application/json',
};

/** Written as UTF-8 (generated subtitles, text): said so, or browsers guess another charset and garble accents. */
const UTF8 = new Set(['srt', 'vtt', 'ass', 'txt', 'json']);

const extensionOf = (file: string) => path.posix.extname(file).slice(1).toLowerCase();

/** The media type of a file, by its extension; `application/octet-stream` for one not in the table. */
export const mediaTypeOf = (file: string): string => MEDIA_TYPES[extensionOf(file)] ?? 'application/octet-stream';

/** The Content-Type a file is sent with: its media type, with `; charset=utf-8` for text. */
export const contentTypeOf = (file: string): string =>
  `${mediaTypeOf(file)}${UTF8.has(extensionOf(file)) ? '; charset=utf-8' : ''}`;

/**
 * The extension of a file a client names (`talk.MP4` → `.mp4`) when the table has it, else ''; an
 * uploaded file keeps only such an extension, so it is served with the table's type and never as a
 * page (`.html`, `.svg`) from the server's own origin.
 */
export const knownExtension = (file: string): string =>
  extensionOf(file) in MEDIA_TYPES ? `.${extensionOf(file)}` : '';

/** The table's extension for a media type (`video/mp4; codecs=...` → `.mp4`), else ''. */
export function extensionOfType(type: string): string {
  const bare = type.split(';')[0]!.trim().toLowerCase();
  const found = Object.entries(MEDIA_TYPES).find(([, known]) => known === bare);
  return found ? `.${found[0]}` : '';
}
