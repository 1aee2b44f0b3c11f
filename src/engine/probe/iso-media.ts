import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { ffprobeSeconds } from './ffprobe-seconds.js';
import { readSequenceParameters } from './h264-sps.js';
import { boxBudget, boxes, only, type Box, type BoxBudget } from './iso-boxes.js';
import { movieTags } from './iso-tags.js';
import {
  audioStream,
  videoStream,
  type AudioFacts,
  type MediaFacts,
  type VideoFacts,
} from '../contract/media-facts.js';

/**
 * Facts of an MP4/MOV read from its boxes in process, the same facts ffprobe gives, for the common
 * case: at most one H.264 video track and one AAC-LC audio track, nothing else. That saves a
 * process start (about 65 ms) on every such input. Anything else (other codecs, more tracks, cover
 * art, fragmented files, a malformed or unusual box) returns undefined and ffprobe reads the file.
 */

/** How the mov demuxer names itself to ffprobe, whatever the brand. */
const MOV_FORMAT = 'mov,mp4,m4a,3gp,3g2,mj2';

/** The largest movie header read into memory; a longer one (hours of small samples) goes to ffprobe. */
const MAX_MOOV_BYTES = 16 * 1024 * 1024;

/** Timescale and duration of an `mvhd` or `mdhd` box (versions 0 and 1 lay them out alike). */
function timing(body: Buffer): { timescale: number; duration: number } {
  return body[0] === 1
    ? { timescale: body.readUInt32BE(20), duration: Number(body.readBigUInt64BE(24)) }
    : { timescale: body.readUInt32BE(12), duration: body.readUInt32BE(16) };
}

/** An MPEG-4 descriptor's tag, body start and length (the length is 1 to 4 bytes of 7 bits). */
function descriptor(buffer: Buffer, offset: number): { tag: number; start: number; length: number } {
  const tag = buffer.readUInt8(offset);
  let length = 0;
  let at = offset + 1;
  for (let i = 0; i < 4; i++) {
    const byte = buffer.readUInt8(at++);
    length = length * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) break;
  }
  return { tag, start: at, length };
}

/** The AudioSpecificConfig inside an `esds` box, when its object type is MPEG-4 audio (0x40). */
function audioSpecificConfig(esds: Buffer): Buffer | undefined {
  const es = descriptor(esds, 4);
  if (es.tag !== 0x03) return undefined;
  const flags = esds.readUInt8(es.start + 2);
  let at = es.start + 3;
  if (flags & 0x80) at += 2; // depends on another stream
  if (flags & 0x40) at += 1 + esds.readUInt8(at); // URL
  if (flags & 0x20) at += 2; // OCR stream
  const config = descriptor(esds, at);
  if (config.tag !== 0x04 || esds.readUInt8(config.start) !== 0x40) return undefined;
  const specific = descriptor(esds, config.start + 13);
  if (specific.tag !== 0x05) return undefined;
  return esds.subarray(specific.start, specific.start + specific.length);
}

const AAC_SAMPLE_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];
const CHANNEL_LAYOUTS: Record<number, string> = { 1: 'mono', 2: 'stereo' };

/** Codec facts of one H.264 sample entry (`avc1`/`avc3`), from its `avcC` box. */
function h264Facts(entry: Box, budget: BoxBudget): Omit<VideoFacts, 'fps' | 'timeBase'> | undefined {
  const avcC = only(boxes(entry.body.subarray(78), budget), 'avcC')?.body;
  if (!avcC || avcC[0] !== 1 || (avcC[5]! & 0x1f) !== 1) return undefined; // exactly one SPS
  const spsEnd = 8 + avcC.readUInt16BE(6);
  if (spsEnd > avcC.length) return undefined;
  const sps = readSequenceParameters(avcC.subarray(8, spsEnd));
  if (!sps) return undefined;
  const { width, height, pixFmt, profile } = sps;
  // ffprobe hashes the codec's setup data, which for MP4 is the avcC box's body.
  return {
    codec: 'h264',
    width,
    height,
    pixFmt,
    profile,
    extradataHash: `MD5:${createHash('md5').update(avcC).digest('hex')}`,
  };
}

/** Codec facts of one AAC-LC sample entry (`mp4a`), from its `esds` box (inside `wave` in QuickTime files). */
function aacFacts(entry: Box, timescale: number, budget: BoxBudget): Omit<AudioFacts, 'timeBase'> | undefined {
  const version = entry.body.readUInt16BE(8);
  if (version > 1) return undefined;
  const inner = boxes(entry.body.subarray(version === 1 ? 44 : 28), budget);
  const esds = only(inner, 'esds') ?? only(boxes(only(inner, 'wave')?.body ?? Buffer.alloc(0), budget), 'esds');
  const config = esds && audioSpecificConfig(esds.body);
  if (!config || config.length < 2) return undefined;
  const objectType = config[0]! >> 3;
  const sampleRate = AAC_SAMPLE_RATES[((config[0]! & 7) << 1) | (config[1]! >> 7)];
  const channels = (config[1]! >> 3) & 0x0f;
  const layout = CHANNEL_LAYOUTS[channels];
  // Only plain LC. A track whose timescale or entry says another rate than its config may carry
  // SBR (HE-AAC) signalled in the stream, where the decoder, and so ffprobe, reports double.
  if (
    objectType !== 2 ||
    !sampleRate ||
    !layout ||
    timescale !== sampleRate ||
    entry.body.readUInt16BE(24) !== sampleRate
  )
    return undefined;
  return { codec: 'aac', sampleRate, channels, channelLayout: layout, profile: 'LC' };
}

/** Frames per second as the mov demuxer averages them: samples over the sum of their durations (`stts`). */
function averageFps(stts: Buffer, timescale: number): number {
  const entries = stts.readUInt32BE(4);
  let frames = 0;
  let duration = 0;
  for (let i = 0; i < entries; i++) {
    const count = stts.readUInt32BE(8 + i * 8);
    let delta = stts.readUInt32BE(12 + i * 8);
    // As ffmpeg does: a long last sample after many frames is counted at the average length.
    if (i + 1 === entries && i > 0 && count === 1 && frames > 100 && delta / 10 > duration / frames)
      delta = Math.floor(duration / frames);
    duration += delta * count;
    frames += count;
  }
  return frames > 0 && duration > 0 ? (timescale * frames) / duration : 0;
}

interface Track {
  handler: string;
  timescale: number;
  entry: Box;
  stts: Buffer;
  /** The rotation ffprobe reports for the track (0 when upright). */
  rotation: number;
}

/** A 16.16 fixed-point 1, and the matrices' last element (2.30 fixed point). */
const ONE = 0x10000;
const W_ONE = 0x40000000;

/** The nine numbers of the transformation matrix in an `mvhd` or `tkhd` box (`a b u c d v x y w`). */
function matrixAt(body: Buffer, offset: number): number[] {
  return Array.from({ length: 9 }, (_, i) => body.readInt32BE(offset + i * 4));
}

/**
 * The rotation ffprobe reports for a track's matrix (av_display_rotation_get, truncated as ffprobe
 * prints it), when the matrix turns the picture by a quarter turn or none; undefined for a flip, a
 * scale or any other matrix, whose effect on the stream ffprobe judges better.
 */
function rotationOf(tkhd: Buffer): number | undefined {
  const [a, b, u, c, d, v, , , w] = matrixAt(tkhd, tkhd[0] === 1 ? 52 : 40);
  const turns = [
    [ONE, 0, 0, ONE],
    [0, ONE, -ONE, 0],
    [-ONE, 0, 0, -ONE],
    [0, -ONE, ONE, 0],
  ];
  if (
    u !== 0 ||
    v !== 0 ||
    w !== W_ONE ||
    !turns.some(([ta, tb, tc, td]) => ta === a && tb === b && tc === c && td === d)
  )
    return undefined;
  const [fa, fb, fc, fd] = [a!, b!, c!, d!].map((x) => x / ONE) as [number, number, number, number];
  const degrees = -((Math.atan2(fb / Math.hypot(fb, fd), fa / Math.hypot(fa, fc)) * 180) / Math.PI);
  return Math.trunc(degrees) || 0;
}

function track(trak: Box, budget: BoxBudget): Track | undefined {
  const inTrak = boxes(trak.body, budget);
  const mdia = only(inTrak, 'mdia');
  const tkhd = only(inTrak, 'tkhd');
  // A track's own tags (udta, meta) are ffprobe's to read.
  if (!mdia || !tkhd || inTrak.some((box) => box.type === 'udta' || box.type === 'meta')) return undefined;
  const rotation = rotationOf(tkhd.body);
  if (rotation === undefined) return undefined;
  const parts = boxes(mdia.body, budget);
  const mdhd = only(parts, 'mdhd');
  const hdlr = only(parts, 'hdlr');
  const minf = only(parts, 'minf');
  const tables = minf && only(boxes(minf.body, budget), 'stbl');
  if (!mdhd || !hdlr || !tables) return undefined;
  const inTable = boxes(tables.body, budget);
  const stsd = only(inTable, 'stsd');
  const stts = only(inTable, 'stts');
  if (!stsd || !stts || stsd.body.readUInt32BE(4) !== 1) return undefined;
  const entry = boxes(stsd.body.subarray(8), budget)[0];
  const { timescale } = timing(mdhd.body);
  if (!entry || timescale <= 0) return undefined;
  return { handler: hdlr.body.toString('latin1', 8, 12), timescale, entry, stts: stts.body, rotation };
}

/** Whether the movie header's own matrix (`mvhd`) leaves the tracks' as they are, as it does but in odd files. */
function identityMovieMatrix(mvhd: Buffer): boolean {
  const [a, b, u, c, d, v, x, y, w] = matrixAt(mvhd, mvhd[0] === 1 ? 48 : 36);
  return a === ONE && d === ONE && w === W_ONE && !b && !u && !c && !v && !x && !y;
}

/**
 * Facts from a movie header (`moov` body) and the file type box (`ftyp` body, whose brands are
 * tags), or undefined for anything but the common case (or more than MAX_BOXES boxes).
 */
export function factsFromMovie(moov: Buffer, ftyp: Buffer | undefined): MediaFacts | undefined {
  try {
    const budget = boxBudget();
    const parts = boxes(moov, budget);
    const mvhd = only(parts, 'mvhd');
    // Fragmented files (mvex), compressed headers (cmov) and cover art (covr, an extra stream) go to ffprobe.
    if (!mvhd || parts.some((box) => box.type === 'mvex' || box.type === 'cmov') || moov.includes('covr', 0, 'latin1'))
      return undefined;
    const tags = movieTags(ftyp, parts, budget);
    if (!tags || !identityMovieMatrix(mvhd.body)) return undefined;
    const traks = parts.filter((box) => box.type === 'trak').map((trak) => track(trak, budget));
    const videoTracks = traks.filter((t) => t?.handler === 'vide');
    const audioTracks = traks.filter((t) => t?.handler === 'soun');
    if (
      traks.length === 0 ||
      videoTracks.length + audioTracks.length !== traks.length ||
      videoTracks.length > 1 ||
      audioTracks.length > 1
    )
      return undefined;
    const movie = timing(mvhd.body);
    if (movie.timescale <= 0 || movie.duration <= 0 || movie.duration === 0xffffffff) return undefined;
    const facts: MediaFacts = {
      formatName: MOV_FORMAT,
      isImage: false,
      streamCount: traks.length,
      duration: ffprobeSeconds(movie.duration, movie.timescale),
      streams: [],
      tags,
    };
    const [video] = videoTracks;
    if (video) {
      if (video.entry.type !== 'avc1' && video.entry.type !== 'avc3') return undefined;
      const codec = h264Facts(video.entry, budget);
      const fps = averageFps(video.stts, video.timescale);
      if (!codec || fps <= 0) return undefined;
      const { rotation } = video;
      facts.video = { ...codec, fps, timeBase: `1/${video.timescale}`, ...(rotation ? { rotation } : {}) };
    }
    const [audio] = audioTracks;
    if (audio) {
      const codec = audio.entry.type === 'mp4a' ? aacFacts(audio.entry, audio.timescale, budget) : undefined;
      if (!codec) return undefined;
      facts.audio = { ...codec, timeBase: `1/${audio.timescale}` };
    }
    // Streams are numbered in the order of their tracks.
    facts.streams = traks.map((t, index) =>
      t === video ? videoStream(index, facts.video!) : audioStream(index, facts.audio!),
    );
    return facts;
  } catch (error) {
    // A box or descriptor that does not add up: ffprobe, with its own judgement, reads the file.
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** The largest composition offset of a `ctts` box, in the track's timescale (version 1 offsets are signed). */
function largestOffset(ctts: Buffer): number {
  const entries = ctts.readUInt32BE(4);
  let largest = 0;
  for (let i = 0; i < entries; i++) {
    const offset = ctts[0] === 1 ? ctts.readInt32BE(12 + i * 8) : ctts.readUInt32BE(12 + i * 8);
    largest = Math.max(largest, offset);
  }
  return largest;
}

/** Seconds of empty edits (`media_time` -1) in an `elst` box: a wait before the track's samples begin. */
function emptyEdits(elst: Buffer, movieTimescale: number): number {
  const wide = elst[0] === 1;
  const entrySize = wide ? 20 : 12;
  let ticks = 0;
  for (let i = 0; i < elst.readUInt32BE(4); i++) {
    const at = 8 + i * entrySize;
    const mediaTime = wide ? Number(elst.readBigInt64BE(at + 8)) : elst.readInt32BE(at + 4);
    if (mediaTime === -1) ticks += wide ? Number(elst.readBigUInt64BE(at)) : elst.readUInt32BE(at);
  }
  return ticks / movieTimescale;
}

/**
 * How far a movie's samples really reach, in seconds, whatever its headers claim: per track, the
 * sample durations (`stts`) summed, plus the largest composition offset (`ctts`) and any empty
 * edits before the samples, in the track's own timescale; the longest track's. A header may claim
 * 1 s while its last frame is timed at 10 h, and ffmpeg writes what the timestamps say. Any codec
 * counts; undefined when there is no track with a sample table, a box does not add up, or there are
 * more than MAX_BOXES boxes.
 */
export function movieExtent(moov: Buffer): number | undefined {
  try {
    const budget = boxBudget();
    const parts = boxes(moov, budget);
    const mvhd = only(parts, 'mvhd');
    const movieTimescale = mvhd ? timing(mvhd.body).timescale : 0;
    let longest: number | undefined;
    for (const trak of parts.filter((box) => box.type === 'trak')) {
      const inTrak = boxes(trak.body, budget);
      const mdia = only(inTrak, 'mdia');
      const inMedia = mdia ? boxes(mdia.body, budget) : [];
      const mdhd = only(inMedia, 'mdhd');
      const minf = only(inMedia, 'minf');
      const stbl = minf && only(boxes(minf.body, budget), 'stbl');
      const inTable = stbl ? boxes(stbl.body, budget) : [];
      const stts = only(inTable, 'stts')?.body;
      const timescale = mdhd ? timing(mdhd.body).timescale : 0;
      if (!stts || timescale <= 0) continue;
      let ticks = 0;
      for (let i = 0; i < stts.readUInt32BE(4); i++)
        ticks += stts.readUInt32BE(8 + i * 8) * stts.readUInt32BE(12 + i * 8);
      const ctts = only(inTable, 'ctts')?.body;
      if (ctts) ticks += largestOffset(ctts);
      const edts = only(inTrak, 'edts');
      const elst = edts && only(boxes(edts.body, budget), 'elst')?.body;
      const wait = elst && movieTimescale > 0 ? emptyEdits(elst, movieTimescale) : 0;
      longest = Math.max(longest ?? 0, wait + ticks / timescale);
    }
    return longest;
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/**
 * What the top level of an ISO media file says: the box it ends inside of, or its movie header and
 * its file type box (their bodies); no movie header too when the walk passed one of its limits.
 */
export type TopLevel = { truncatedIn: string } | { moov: Buffer | undefined; ftyp?: Buffer };

/** The largest file type box read: a list of brands is a few dozen bytes. */
const MAX_FTYP_BYTES = 4096;

/** Bytes read at a time while walking the top level: small boxes in a row cost one read for many. */
const CHUNK_BYTES = 64 * 1024;

/** How far the walk of the top level goes before it leaves the file to ffprobe. */
export interface TopLevelLimits {
  /**
   * Top-level boxes: a fragmented file has two a fragment (a 4 h file of 1 s fragments, 28,800); a
   * file of 8-byte empty boxes has millions.
   */
  boxes: number;
  /** Reads of the file: one per chunk of small boxes, one per box larger than a chunk. */
  reads: number;
  /** Milliseconds, from the file's opening: the walk yields at every read and stops at this. */
  timeMs: number;
}

export const TOP_LEVEL_LIMITS: TopLevelLimits = { boxes: 100_000, reads: 50_000, timeMs: 2000 };

/** Nothing said: ffprobe reads the file, in a process of its own with its own time limit. */
const LEFT_TO_FFPROBE: TopLevel = { moov: undefined };

/**
 * Walks the top-level boxes of an ISO media (MP4, MOV, M4A, 3GP) file. A file cut short in transfer
 * or on purpose ends inside one of them, which is told by name. Otherwise the body of its one
 * `moov` box is read (none when there are several, or it is over 16 MiB). Box headers are read a
 * chunk at a time, and the walk gives up (LEFT_TO_FFPROBE) past `limits`: 64 MB of empty boxes took
 * one read each, 231 s.
 */
export async function readTopLevel(file: string, limits: TopLevelLimits = TOP_LEVEL_LIMITS): Promise<TopLevel> {
  const deadline = performance.now() + limits.timeMs;
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let chunkStart = 0;
    let chunkLength = 0;
    let reads = 0;
    let count = 0;
    const movies: Array<{ offset: number; size: number }> = [];
    const types: Array<{ offset: number; size: number }> = [];
    let offset = 0;
    while (offset + 8 <= size) {
      if (++count > limits.boxes) return LEFT_TO_FFPROBE;
      // A box header is 8 or 16 bytes: read on from it unless the chunk holds its 16 (or the file's end).
      const chunkEnd = chunkStart + chunkLength;
      if (offset < chunkStart || (offset + 16 > chunkEnd && chunkEnd < size)) {
        if (++reads > limits.reads || performance.now() > deadline) return LEFT_TO_FFPROBE;
        chunkStart = offset;
        chunkLength = (await handle.read(chunk, 0, CHUNK_BYTES, offset)).bytesRead;
      }
      const header = chunk.subarray(offset - chunkStart, Math.min(offset - chunkStart + 16, chunkLength));
      const type = header.toString('latin1', 4, 8);
      // Past the boxes (trailing junk is not a box): nothing more can be said.
      if (!/^[\x20-\x7e]{4}$/.test(type)) break;
      let boxSize = header.readUInt32BE(0);
      let headerSize = 8;
      if (boxSize === 1) {
        if (header.length < 16) return { truncatedIn: type };
        boxSize = Number(header.readBigUInt64BE(8));
        headerSize = 16;
      } else if (boxSize === 0) {
        boxSize = size - offset; // runs to the end of the file
      }
      if (boxSize < headerSize) break;
      if (offset + boxSize > size) return { truncatedIn: type };
      if (type === 'moov') movies.push({ offset: offset + headerSize, size: boxSize - headerSize });
      if (type === 'ftyp') types.push({ offset: offset + headerSize, size: boxSize - headerSize });
      offset += boxSize;
    }
    if (offset < size && offset + 8 > size) return { truncatedIn: 'box header' };
    const [movie] = movies;
    if (movies.length !== 1 || !movie || movie.size > MAX_MOOV_BYTES) return { moov: undefined };
    const body = Buffer.alloc(movie.size);
    const { bytesRead } = await handle.read(body, 0, movie.size, movie.offset);
    if (bytesRead !== movie.size) return { moov: undefined };
    const [brands] = types;
    if (types.length !== 1 || !brands || brands.size > MAX_FTYP_BYTES) return { moov: body };
    const ftyp = Buffer.alloc(brands.size);
    await handle.read(ftyp, 0, brands.size, brands.offset);
    return { moov: body, ftyp };
  } finally {
    await handle.close();
  }
}
