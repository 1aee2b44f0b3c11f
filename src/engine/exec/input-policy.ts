import { DEFAULT_MAX_PIXELS } from '../config.js';
import type { InputKind, LocalInput } from '../contract/plugin.js';
import type { MediaFacts } from '../contract/media-facts.js';

/**
 * Demuxers a user's file may be opened with: plain containers, picture and subtitle formats.
 * Playlists and indirections (hls, dash, concat, image sequences by pattern, tee, ...) are absent,
 * so a downloaded file can never make ffmpeg read another file or the network.
 */
const AUDIO_DEMUXERS = [
  'mp3',
  'wav',
  'aac',
  'mov',
  'ogg',
  'flac',
  'matroska',
  'aiff',
  'w64',
  'caf',
  'amr',
  'asf',
  'ac3',
  'eac3',
];
const VIDEO_DEMUXERS = [
  'mov',
  'matroska',
  'avi',
  'mpegts',
  'mpeg',
  'flv',
  'ogg',
  'asf',
  'm4v',
  'h264',
  'hevc',
  'ivf',
  'gif',
];
const IMAGE_DEMUXERS = [
  'image2',
  'png_pipe',
  'jpeg_pipe',
  'webp_pipe',
  'bmp_pipe',
  'tiff_pipe',
  'gif',
  'gif_pipe',
  'ppm_pipe',
  'pgm_pipe',
  'pam_pipe',
  'qoi_pipe',
  'jpegxl_pipe',
  'svg_pipe',
];
const SUBTITLE_DEMUXERS = ['srt', 'ass', 'webvtt'];

export const DEMUXERS: Record<InputKind, readonly string[]> = {
  audio: [...new Set([...AUDIO_DEMUXERS, ...VIDEO_DEMUXERS])],
  video: VIDEO_DEMUXERS,
  image: IMAGE_DEMUXERS,
  subtitle: SUBTITLE_DEMUXERS,
  media: [...new Set([...AUDIO_DEMUXERS, ...VIDEO_DEMUXERS, ...IMAGE_DEMUXERS])],
};

/** Every demuxer any operation accepts: what ffprobe may use on an input before its kind is known. */
export const ALL_DEMUXERS = [...new Set(Object.values(DEMUXERS).flat())];

/** The options that keep ffmpeg/ffprobe on one local file opened by an allowed demuxer. */
export function lockedInputOptions(demuxers: readonly string[]): string[] {
  return ['-protocol_whitelist', 'file,pipe', '-format_whitelist', demuxers.join(',')];
}

/** The demuxer ffprobe chose, by its first name (`mov,mp4,m4a,...` → `mov`). */
export const demuxerOf = (facts: MediaFacts): string => facts.formatName.split(',')[0]!;

/**
 * ffmpeg options that open one probed input: the demuxer forced to the one the probe saw, the
 * allowlists, for QuickTime/MP4 external data references refused, and a ceiling on the pixels of
 * any decoded picture, so a stream cannot switch to a huge size after the probe checked its first.
 */
export function inputArgs(input: LocalInput, kind: InputKind = 'media'): string[] {
  const demuxer = demuxerOf(input.facts);
  const probedPixels = (input.facts.video?.width ?? 0) * (input.facts.video?.height ?? 0);
  return [
    ...lockedInputOptions(DEMUXERS[kind]),
    ...(demuxer === 'mov' ? ['-enable_drefs', '0'] : []),
    '-max_pixels',
    String(Math.max(probedPixels, DEFAULT_MAX_PIXELS)),
    '-f',
    demuxer,
    '-i',
    input.file,
  ];
}

/**
 * Options that open a list mediaflow generated for the concat demuxer. Its entries are generated
 * relative names, so the demuxer's safe mode stays on; the allowlists reach the files it opens.
 */
export function concatListArgs(listFile: string, kind: InputKind): string[] {
  return [...lockedInputOptions(['concat', ...DEMUXERS[kind]]), '-f', 'concat', '-safe', '1', '-i', listFile];
}

/** A concat demuxer list of generated file names, each with an optional duration in seconds. */
export function concatList(entries: ReadonlyArray<{ file: string; duration?: number }>): string {
  return entries
    .map(({ file, duration }) => {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(file))
        throw new Error(`concat list entry '${file}' is not a generated name`);
      return `file '${file}'\n${duration !== undefined ? `duration ${duration}\n` : ''}`;
    })
    .join('');
}
