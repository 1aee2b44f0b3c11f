import { ffprobeSeconds } from './ffprobe-seconds.js';
import type { MediaFacts } from './media-facts.js';

/**
 * Facts of a plain WAV file (integer PCM or 32-bit float, the `fmt ` chunk's basic form) read in
 * process, the same facts ffprobe gives. Extensible headers (channel masks), compressed formats,
 * RF64 and files whose data chunk runs past their end go to ffprobe.
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

/** Facts of a WAV whose first bytes are `head`, of `fileSize` bytes in all; undefined when ffprobe should read it. */
export function waveFacts(head: Buffer, fileSize: number): MediaFacts | undefined {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE')
    return undefined;
  let format: { codec: string; channels: number; sampleRate: number; bits: number } | undefined;
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
      // The sample count ffmpeg derives from the chunk's size, when the chunk is all there.
      if (!format || size === 0 || body + size > fileSize) return undefined;
      const samples = Math.floor((size * 8) / (format.channels * format.bits));
      if (samples === 0) return undefined;
      return {
        formatName: 'wav',
        isImage: false,
        streamCount: 1,
        duration: ffprobeSeconds(samples, format.sampleRate),
        // A plain fmt chunk names no channel layout, and ffprobe reports none.
        audio: {
          codec: format.codec,
          sampleRate: format.sampleRate,
          channels: format.channels,
          timeBase: `1/${format.sampleRate}`,
        },
      };
    }
    offset = body + size + (size % 2); // chunks are padded to an even length
  }
  return undefined;
}
