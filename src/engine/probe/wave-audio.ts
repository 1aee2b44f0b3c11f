import { ffprobeSeconds } from './ffprobe-seconds.js';
import { audioStream, type MediaFacts } from '../contract/media-facts.js';
import { cString, setTag } from './tag-text.js';

/**
 * Facts of a plain WAV file (integer PCM or 32-bit float, the `fmt ` chunk's basic form) read in
 * process, the same facts ffprobe gives, its INFO tags included. Extensible headers (channel masks),
 * compressed formats, RF64, files whose data chunk runs past their end or is followed by more chunks,
 * and chunks that carry other tags (bext, ID3) go to ffprobe.
 */

/** ffmpeg's decoder names by format tag and bits per sample. */
const CODECS: Record<string, string> = {
  '1:8': 'pcm_u8',
  '1:16': 'pcm_s16le',
  '1:24': 'pcm_s24le',
  '1:32': 'pcm_s32le',
  '3:32': 'pcm_f32le',
  '3:64': 'pcm_f64le',
};

/** Chunks ffmpeg reads nothing from that the answer shows; any other but `LIST` sends the file to ffprobe. */
const SILENT_CHUNKS = new Set(['fact', 'JUNK', 'junk', 'PAD ']);

/** The INFO keys ffmpeg renames (matched whatever their case); others keep their four letters. */
const INFO_NAMES: Record<string, string> = {
  IART: 'artist',
  ICMT: 'comment',
  ICOP: 'copyright',
  ICRD: 'date',
  IGNR: 'genre',
  ILNG: 'language',
  INAM: 'title',
  IPRD: 'album',
  IPRT: 'track',
  ITRK: 'track',
  ISFT: 'encoder',
  ISMP: 'timecode',
  ITCH: 'encoded_by',
};

/** Adds the tags of a `LIST` chunk's body to `tags`; false unless it is an INFO list of well-formed entries. */
function infoTags(list: Buffer, tags: Record<string, string>): boolean {
  if (list.toString('latin1', 0, 4) !== 'INFO') return false;
  let offset = 4;
  while (offset + 8 <= list.length) {
    const id = list.toString('latin1', offset, offset + 4);
    const size = list.readUInt32LE(offset + 4);
    const end = offset + 8 + size + (size % 2);
    if (!/^[\x21-\x7e]{4}$/.test(id) || end > list.length) return false;
    const value = cString(list.subarray(offset + 8, end));
    if (value === undefined) return false;
    setTag(tags, INFO_NAMES[id.toUpperCase()] ?? id, value);
    offset = end;
  }
  return offset === list.length;
}

/** Facts of a WAV whose first bytes are `head`, of `fileSize` bytes in all; undefined when ffprobe should read it. */
export function waveFacts(head: Buffer, fileSize: number): MediaFacts | undefined {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE')
    return undefined;
  let format: { codec: string; channels: number; sampleRate: number; bits: number } | undefined;
  const tags: Record<string, string> = {};
  let offset = 12;
  while (offset + 8 <= head.length) {
    const id = head.toString('latin1', offset, offset + 4);
    const size = head.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (format || size < 16 || body + 16 > head.length) return undefined;
      const tag = head.readUInt16LE(body);
      const bits = head.readUInt16LE(body + 14);
      const codec = CODECS[`${tag}:${bits}`];
      const channels = head.readUInt16LE(body + 2);
      const sampleRate = head.readUInt32LE(body + 4);
      if (!codec || channels === 0 || sampleRate === 0 || head.readUInt16LE(body + 12) !== (channels * bits) / 8)
        return undefined;
      format = { codec, channels, sampleRate, bits };
    } else if (id === 'data') {
      // The sample count ffmpeg derives from the chunk's size, when the chunk is all there. ffmpeg reads
      // chunks after it too, which are past what was read here.
      const end = body + size + (size % 2);
      if (!format || size === 0 || body + size > fileSize || fileSize - end >= 8) return undefined;
      const samples = Math.floor((size * 8) / (format.channels * format.bits));
      if (samples === 0) return undefined;
      // A plain fmt chunk names no channel layout, and ffprobe reports none.
      const audio = {
        codec: format.codec,
        sampleRate: format.sampleRate,
        channels: format.channels,
        timeBase: `1/${format.sampleRate}`,
      };
      return {
        formatName: 'wav',
        isImage: false,
        streamCount: 1,
        duration: ffprobeSeconds(samples, format.sampleRate),
        audio,
        streams: [audioStream(0, audio)],
        tags,
      };
    } else if (id === 'LIST') {
      if (body + size > head.length || !infoTags(head.subarray(body, body + size), tags)) return undefined;
    } else if (!SILENT_CHUNKS.has(id)) {
      return undefined;
    }
    offset = body + size + (size % 2); // chunks are padded to an even length
  }
  return undefined;
}
