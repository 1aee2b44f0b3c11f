import { open } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { mediaError } from '../errors.js';
import { runFfprobe, type RunOptions } from '../exec/ffmpeg.js';
import { factsFromMovie, movieExtent, readTopLevel } from './iso-media.js';
import { mpegAudioFacts } from './mpeg-audio.js';
import { subtitleFacts } from './subtitle-format.js';
import { cappedTags } from './tag-limits.js';
import { waveFacts } from './wave-audio.js';
import { ffprobeSeconds } from './ffprobe-seconds.js';
import { DEFAULT_MAX_PIXELS } from '../config.js';
import { ALL_DEMUXERS, lockedInputOptions } from '../exec/input-policy.js';
import { audioStream, videoStream } from '../contract/media-facts.js';
import type { AudioFacts, MediaFacts, StreamFacts, VideoFacts } from '../contract/media-facts.js';

/** How one input is probed. */
export interface ProbeOptions extends RunOptions {
  /** Pixels of one picture the probe may decode (MEDIAFLOW_MAX_PIXELS); larger pictures are never decoded. */
  maxPixels?: number;
  /** The input as the user named it, for messages. */
  source?: string;
}

interface ProbeStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  pix_fmt?: string;
  profile?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  time_base?: string;
  nb_frames?: string;
  extradata_hash?: string;
  disposition?: { attached_pic?: number };
  side_data_list?: Array<{ rotation?: number }>;
}

interface ProbeOutput {
  format?: { format_name?: string; duration?: string; size?: string; bit_rate?: string; tags?: Record<string, string> };
  streams?: ProbeStream[];
  /** The packets of `TAIL_ARGS`' interval (Matroska only). */
  packets?: Array<{ pts_time?: string; duration_time?: string }>;
}

/**
 * What ffprobe is asked besides for a Matroska/WebM file, whose header's Duration is only a claim:
 * the packets from its last index entry (a seek far past any end lands on the last cue) to the
 * end, at most 10,000 of them, whose last timestamp tells how far the file really reaches. This
 * costs no extra process and reads only the file's tail; a file without cues is read through
 * without decoding, and the output caps bound whatever this does not see.
 */
const TAIL_ARGS = ['-show_entries', 'packet=pts_time,duration_time', '-read_intervals', '99999999%+#10000'];

/** Seconds up to the end of the last of ffprobe's packets, if it listed any. */
function packetsExtent(output: ProbeOutput): number | undefined {
  const ends = (output.packets ?? [])
    .map((packet) => Number(packet.pts_time) + (Number(packet.duration_time) || 0))
    .filter(Number.isFinite);
  return ends.length > 0 ? Math.max(...ends) : undefined;
}

/** `30000/1001` → 29.97; `0/0` → 0. */
function rate(text: string | undefined): number {
  const [num, den] = (text ?? '0/0').split('/').map(Number);
  return num && den ? num / den : 0;
}

/** Formats ffprobe names for single pictures. */
const IMAGE_FORMAT = /(^|,)(image2|[a-z0-9]+_pipe|gif|webp)(,|$)/;

function videoFacts(video: ProbeStream): VideoFacts {
  const rotation = video.side_data_list?.find((data) => data.rotation !== undefined)?.rotation;
  return {
    codec: video.codec_name ?? 'unknown',
    width: video.width ?? 0,
    height: video.height ?? 0,
    fps: rate(video.avg_frame_rate) || rate(video.r_frame_rate),
    pixFmt: video.pix_fmt ?? 'unknown',
    ...(video.profile ? { profile: video.profile } : {}),
    ...(video.time_base ? { timeBase: video.time_base } : {}),
    ...(video.extradata_hash ? { extradataHash: video.extradata_hash } : {}),
    ...(rotation ? { rotation } : {}),
  };
}

function audioFacts(audio: ProbeStream): AudioFacts {
  return {
    codec: audio.codec_name ?? 'unknown',
    sampleRate: Number(audio.sample_rate ?? 0),
    channels: audio.channels ?? 0,
    ...(audio.channel_layout ? { channelLayout: audio.channel_layout } : {}),
    ...(audio.profile ? { profile: audio.profile } : {}),
    ...(audio.time_base ? { timeBase: audio.time_base } : {}),
  };
}

/** ffprobe's video, audio and subtitle streams as entries; other kinds (data, attachments) are left out. */
function streamEntries(streams: ProbeStream[]): StreamFacts[] {
  return streams.flatMap((stream, position): StreamFacts[] => {
    const index = stream.index ?? position;
    if (stream.codec_type === 'video') return [videoStream(index, videoFacts(stream))];
    if (stream.codec_type === 'audio') return [audioStream(index, audioFacts(stream))];
    if (stream.codec_type === 'subtitle') return [{ index, type: 'subtitle', codec: stream.codec_name ?? 'unknown' }];
    return [];
  });
}

/**
 * The pictures of an animated GIF, which its demuxer counts as it opens the file, without decoding any: overlay-image
 * weighs a logo's decoding by them. Other formats' counts are left out, as the header readers give none.
 */
function animationFrames(formatName: string, video: ProbeStream): Pick<VideoFacts, 'frames'> {
  const frames = Number(video.nb_frames);
  return formatName === 'gif' && Number.isInteger(frames) && frames > 0 ? { frames } : {};
}

/** Turns ffprobe's JSON into facts. Cover art in audio files (attached pictures) is not a video stream. */
export function factsFromProbe(output: ProbeOutput): MediaFacts {
  const streams = output.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const subtitle = streams.find((s) => s.codec_type === 'subtitle');
  const formatName = output.format?.format_name ?? 'unknown';
  const duration = Number(output.format?.duration);
  const size = Number(output.format?.size);
  const bitRate = Number(output.format?.bit_rate);
  const facts: MediaFacts = {
    formatName,
    isImage: Boolean(video) && !audio && IMAGE_FORMAT.test(formatName),
    streamCount: streams.length,
    streams: streamEntries(streams),
    tags: { ...output.format?.tags },
  };
  if (Number.isFinite(duration) && duration > 0) facts.duration = duration;
  if (Number.isFinite(size)) facts.size = size;
  if (Number.isFinite(bitRate) && bitRate > 0) facts.bitRate = bitRate;
  if (video) facts.video = { ...videoFacts(video), ...animationFrames(formatName, video) };
  if (audio) facts.audio = audioFacts(audio);
  if (subtitle) facts.subtitle = { codec: subtitle.codec_name ?? 'unknown' };
  return facts;
}

/** The first four bytes of an EBML document: Matroska and WebM. */
const EBML_MAGIC = 0x1a45dfa3;

/** Bytes read from the start of a file to recognise it before any tool opens it. */
const HEAD_BYTES = 256 * 1024;

/**
 * Files that name other files or network addresses: ffmpeg would follow them if it were let.
 * The demuxer allowlist already keeps them closed; recognising them first gives a clear reason.
 */
function indirection(head: Buffer): string | undefined {
  const text = head
    .subarray(0, 4096)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart();
  if (text.startsWith('#EXTM3U')) return 'an HLS playlist';
  if (/^ffconcat\s+version/.test(text) || /^file\s+\S/.test(text)) return 'a concat list';
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<MPD[\s>]/.test(text)) return 'a DASH manifest';
  if (/<CompositionPlaylist[\s>]/.test(text)) return 'an IMF composition playlist';
  if (/^v=0\r?\n/.test(text)) return 'an SDP description';
  return undefined;
}

interface ImageHeader {
  format: string;
  codec: string;
  width: number;
  height: number;
}

/** The size a picture's header declares, read without decoding it (PNG, JPEG, GIF, WebP, BMP, QOI). */
export function imageHeader(head: Buffer): ImageHeader | undefined {
  const at = (format: string, codec: string, width: number, height: number) => ({ format, codec, width, height });
  if (head.length >= 24 && head.readUInt32BE(0) === 0x89504e47 && head.toString('latin1', 12, 16) === 'IHDR') {
    return at('png_pipe', 'png', head.readUInt32BE(16), head.readUInt32BE(20));
  }
  if (head.length >= 10 && /^GIF8[79]a/.test(head.toString('latin1', 0, 6))) {
    return at('gif', 'gif', head.readUInt16LE(6), head.readUInt16LE(8));
  }
  if (head.length >= 14 && head.toString('latin1', 0, 4) === 'qoif') {
    return at('qoi_pipe', 'qoi', head.readUInt32BE(4), head.readUInt32BE(8));
  }
  if (head.length >= 26 && head.toString('latin1', 0, 2) === 'BM' && head.readUInt32LE(14) >= 40) {
    return at('bmp_pipe', 'bmp', Math.abs(head.readInt32LE(18)), Math.abs(head.readInt32LE(22)));
  }
  if (head.length >= 30 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = head.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return at('webp_pipe', 'webp', head.readUIntLE(24, 3) + 1, head.readUIntLE(27, 3) + 1);
    if (chunk === 'VP8L' && head[20] === 0x2f) {
      const bits = head.readUInt32LE(21);
      return at('webp_pipe', 'webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
    }
    if (chunk === 'VP8 ' && head[23] === 0x9d && head[24] === 0x01 && head[25] === 0x2a) {
      return at('webp_pipe', 'webp', head.readUInt16LE(26) & 0x3fff, head.readUInt16LE(28) & 0x3fff);
    }
    return undefined;
  }
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xd8) {
    const frame = jpegStartOfFrame(head);
    if (frame !== undefined) {
      return at('jpeg_pipe', 'mjpeg', head.readUInt16BE(frame + 7), head.readUInt16BE(frame + 5));
    }
  }
  return undefined;
}

/**
 * Where a JPEG's first start-of-frame segment begins (its 0xff), walking the segments from the start
 * of image; undefined when the head ends first or is not a sequence of segments. Markers without a
 * length (SOI, TEM, RST0-7) and fill bytes are stepped over. Both the size (imageHeader) and the
 * precision and components (headerFacts) are read from it.
 */
function jpegStartOfFrame(head: Buffer): number | undefined {
  let offset = 2;
  while (offset + 9 <= head.length) {
    if (head[offset] !== 0xff) return undefined;
    const marker = head[offset + 1]!;
    if (marker === 0xff) {
      offset++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return offset;
    offset += 2 + head.readUInt16BE(offset + 2);
  }
  return undefined;
}

/** PNG colour types (IHDR) as ffmpeg names the pixel formats they decode to, 8-bit and 16-bit. */
const PNG_PIXEL_FORMATS: Record<number, [string, string]> = {
  0: ['gray', 'gray16be'],
  2: ['rgb24', 'rgb48be'],
  3: ['pal8', 'pal8'],
  4: ['ya8', 'ya16be'],
  6: ['rgba', 'rgba64be'],
};

/** Whether a PNG's chunks before its image data include transparency (tRNS). */
function pngHasTransparencyChunk(head: Buffer): boolean {
  let offset = 8;
  while (offset + 8 <= head.length) {
    const type = head.toString('latin1', offset + 4, offset + 8);
    if (type === 'tRNS') return true;
    if (type === 'IDAT') return false;
    offset += 12 + head.readUInt32BE(offset);
  }
  return false;
}

/**
 * Facts for the two commonest pictures, PNG and baseline or progressive JPEG, from their headers
 * alone: an image operation then starts no ffprobe (about 70 ms saved). Anything unusual (16-bit
 * JPEG, CMYK, arithmetic coding, a size of 0) returns undefined and is probed by ffprobe.
 */
export function headerFacts(head: Buffer): MediaFacts | undefined {
  const header = imageHeader(head);
  if (!header || header.width <= 0 || header.height <= 0) return undefined;
  const picture = (pixFmt: string): MediaFacts => {
    const video = { codec: header.codec, width: header.width, height: header.height, fps: 25, pixFmt };
    return { formatName: header.format, isImage: true, video, streams: [videoStream(0, video)], tags: {} };
  };
  if (header.codec === 'png') {
    const depth = head[24]!;
    const formats = PNG_PIXEL_FORMATS[head[25]!];
    if (!formats || (depth !== 8 && depth !== 16 && head[25] !== 3)) return undefined;
    const pixFmt = formats[depth === 16 ? 1 : 0];
    // Colour-keyed transparency (tRNS) decodes with an alpha channel.
    if (pngHasTransparencyChunk(head) && (head[25] === 0 || head[25] === 2))
      return picture(head[25] === 0 ? 'ya8' : 'rgba');
    return picture(pixFmt);
  }
  if (header.codec === 'mjpeg') {
    // The start-of-frame's precision and component count; only SOF0-SOF2 qualify.
    const frame = jpegStartOfFrame(head)!;
    const marker = head[frame + 1]!;
    const precision = head[frame + 4];
    const components = head[frame + 9];
    if (marker > 0xc2 || precision !== 8 || (components !== 1 && components !== 3)) return undefined;
    return picture(components === 1 ? 'gray' : 'yuvj420p');
  }
  return undefined;
}

/** Bytes read from the end of a file: where MP3 files keep their ID3v1 and APE tags. */
const TAIL_BYTES = 160;

/** A file's first bytes (HEAD_BYTES at most), its last ones (TAIL_BYTES at most) and its size. */
async function readEnds(file: string): Promise<{ head: Buffer; tail: Buffer; size: number }> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    const tail = Buffer.alloc(Math.min(TAIL_BYTES, size));
    await handle.read(tail, 0, tail.length, size - tail.length);
    return { head: buffer.subarray(0, bytesRead), tail, size };
  } finally {
    await handle.close();
  }
}

/**
 * Facts read from headers, with the file's size and bit rate as ffprobe gives them: ffmpeg divides
 * the size in bits by the duration in whole microseconds, and truncates.
 */
function withSize(facts: MediaFacts, size: number): MediaFacts {
  const micros = Math.round((facts.duration ?? 0) * 1e6);
  return { ...facts, size, ...(micros > 0 ? { bitRate: Math.trunc((size * 8 * 1e6) / micros) } : {}) };
}

/** ffprobe's complaint without our own file name, which means nothing to the user. */
const withoutFileName = (text: string, file: string) => text.split(`${file}: `).join('').trim();

/**
 * Probes one local file (named relative to `options.cwd`). Unreadable media is a 422. Nothing the
 * file names is followed; a picture larger than `maxPixels` is judged by its header, not decoded.
 * Its tags are kept within the limits of tag-limits.ts, whichever way they were read.
 */
export async function probeFile(ffprobe: string, file: string, options: ProbeOptions): Promise<MediaFacts> {
  const facts = await readFacts(ffprobe, file, options);
  if (!facts.tags) return facts;
  const { tags, truncated } = cappedTags(facts.tags);
  return { ...facts, tags, ...(truncated ? { tagsTruncated: true } : {}) };
}

/** The facts of one file as ffprobe, or a header reader, gives them. */
async function readFacts(ffprobe: string, file: string, options: ProbeOptions): Promise<MediaFacts> {
  const input = options.source ? `Input ${options.source}` : 'Input';
  const absolute = path.resolve(options.cwd, file);
  const { head, tail, size } = await readEnds(absolute);
  if (head.length === 0) throw mediaError(`${input} is empty`);
  const refers = indirection(head);
  if (refers)
    throw mediaError(
      `${input} is ${refers}, which refers to other files; only self-contained media files are accepted`,
    );
  const maxPixels = options.maxPixels ?? DEFAULT_MAX_PIXELS;
  const declared = imageHeader(head);
  if (declared && declared.width * declared.height > maxPixels) {
    // A decompression bomb: what its header declares is enough to refuse it (checkKind says so).
    return {
      formatName: declared.format,
      isImage: true,
      video: { codec: declared.codec, width: declared.width, height: declared.height, fps: 0, pixFmt: 'unknown' },
    };
  }
  const quick = headerFacts(head) ?? mpegAudioFacts(head, size, tail) ?? waveFacts(head, size) ?? subtitleFacts(head);
  if (quick) return withSize(quick, size);
  // ISO media (MP4, MOV, M4A, 3GP) names its boxes' sizes: a file cut short is told as such, not
  // as ffprobe's confusion. Its common case (H.264 and AAC) is read from its header here.
  const isoMedia = head.length >= 8 && head.toString('latin1', 4, 8) === 'ftyp';
  const movie = isoMedia ? await isoMediaFacts(input, absolute) : undefined;
  if (movie?.facts) return withSize(movie.facts, size);
  let stdout: string;
  try {
    // -max_pixels makes every decoder refuse a larger picture before allocating it (SVG, TIFF, video).
    // Below the default the probe still sizes the input, so checkKind can refuse it by name.
    const tail = head.length >= 4 && head.readUInt32BE(0) === EBML_MAGIC ? TAIL_ARGS : [];
    const args = [
      '-max_pixels',
      String(Math.max(maxPixels, DEFAULT_MAX_PIXELS)),
      '-show_format',
      '-show_streams',
      '-show_data_hash',
      'md5',
      ...tail,
      '-of',
      'json',
      ...lockedInputOptions(ALL_DEMUXERS),
      file,
    ];
    stdout = await runFfprobe(ffprobe, args, options);
  } catch (error) {
    if (error instanceof Error && 'stderrTail' in error) {
      const reason = withoutFileName((error as { stderrTail: string }).stderrTail, file);
      const format = /Format not on whitelist/.test(reason) ? 'a format that is not accepted' : '';
      throw mediaError(`${input} is not readable media (${format || reason || 'unknown format'})`, error);
    }
    throw error;
  }
  const output = JSON.parse(stdout) as ProbeOutput;
  const facts = withExtent(factsFromProbe(output), packetsExtent(output));
  // A picture ffprobe could not size: broken, or over -max_pixels (video beside audio may still serve the audio).
  if (facts.video && !facts.audio && (facts.video.width <= 0 || facts.video.height <= 0)) {
    throw mediaError(
      `${input} has pictures that could not be decoded: their size is invalid or larger than the limit ` +
        `of ${Math.max(maxPixels, DEFAULT_MAX_PIXELS)} pixels (MEDIAFLOW_MAX_PIXELS)`,
    );
  }
  if (!facts.formatName.startsWith('mov,')) return facts;
  return withExtent(facts, (movie ?? (await isoMediaFacts(input, absolute))).extent);
}

/**
 * How much longer than its header's claim a file's samples may reach before the claim is not
 * believed (AAC priming, a last frame).
 */
const EXTENT_TOLERANCE_SECONDS = 1;

/**
 * Facts whose duration is the samples' real extent where that is clearly longer than the header's
 * claim (a lying header), so the duration limit and the output caps see the real length. A normal
 * file's claim stays as it is, equal to ffprobe's.
 */
function withExtent(facts: MediaFacts, extent: number | undefined): MediaFacts {
  if (extent === undefined || extent <= (facts.duration ?? 0) + EXTENT_TOLERANCE_SECONDS) return facts;
  return { ...facts, duration: ffprobeSeconds(extent * 1e6, 1e6) };
}

/**
 * An ISO media file's movie header read: its facts when it is the common case, and how far its
 * samples reach (`movieExtent`); a truncated file is a 422.
 */
async function isoMediaFacts(input: string, file: string): Promise<{ facts?: MediaFacts; extent?: number }> {
  const top = await readTopLevel(file);
  if ('truncatedIn' in top)
    throw mediaError(`${input} is truncated: the file ends inside its '${top.truncatedIn}' box`);
  if (!top.moov) return {};
  // Each reading walks at most MAX_BOXES boxes, synchronously; other requests get the loop in between.
  await yieldToLoop();
  const extent = movieExtent(top.moov);
  await yieldToLoop();
  const facts = factsFromMovie(top.moov, top.ftyp);
  return { ...(facts ? { facts: withExtent(facts, extent) } : {}), ...(extent !== undefined ? { extent } : {}) };
}
