/**
 * Lossless gain on MP3 (MPEG-1, 2 and 2.5 Layer III), as mp3gain does it: every granule of every channel
 * carries an 8-bit `global_gain`, the quantizer's step, and the decoder scales that granule's samples by
 * 2^((global_gain − 210) / 4). Adding n to every one of them scales the decoded sound by exactly 2^(n/4)
 * (1.50515 dB a step) without decoding or encoding anything. Pure functions on Buffers.
 */

/** One step of `global_gain`, in dB: 20·log10(2^(1/4)). */
export const GAIN_STEP_DB = 5 * Math.log10(2);

/** Bitrates of Layer III by index, kbit/s: MPEG-1, then MPEG-2 and 2.5 (index 0 is free format, 15 invalid). */
const BITRATES = {
  mpeg1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  mpeg2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};

/** Sample rates of MPEG-1 by index; MPEG-2 has half of each, MPEG-2.5 a quarter. */
const MPEG1_RATES = [44100, 48000, 32000];

/** A Layer III frame found in a file. */
export interface Mp3Frame {
  /** Byte offset of its header in the file, and its length in bytes (header to the next header). */
  offset: number;
  length: number;
  mpeg1: boolean;
  channels: 1 | 2;
  /** Byte offset of its side info in the file (after the header, and after the CRC when there is one). */
  sideInfo: number;
  /** The LAME/Xing `Info` or `Xing` frame, or Fraunhofer's `VBRI`: no sound, left as it is. */
  tag: boolean;
}

/** Why a file cannot take the gain in place, or its frames. */
export type Mp3Layout = { frames: Mp3Frame[] } | { refused: string };

/** The frame header at `at`, or undefined when there is none there (or one this module does not handle). */
function frameAt(data: Buffer, at: number): Mp3Frame | { protectedFrame: true } | undefined {
  if (at + 4 > data.length || data[at] !== 0xff || (data[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const b1 = data[at + 1]!;
  const b2 = data[at + 2]!;
  const b3 = data[at + 3]!;
  const version = (b1 >> 3) & 3; // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1 (1 is reserved)
  const layer = (b1 >> 1) & 3; // 1: Layer III
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  // protection_bit 0: a CRC-16 follows the header, over the header's last 2 bytes and the side info.
  if ((b1 & 1) === 0) return { protectedFrame: true };
  const mpeg1 = version === 3;
  const rate = MPEG1_RATES[rateIndex]! / (mpeg1 ? 1 : version === 2 ? 2 : 4);
  const bitrate = (mpeg1 ? BITRATES.mpeg1 : BITRATES.mpeg2)[bitrateIndex]! * 1000;
  const padding = (b2 >> 1) & 1;
  const length = Math.floor(((mpeg1 ? 144 : 72) * bitrate) / rate) + padding;
  const channels = b3 >> 6 === 3 ? 1 : 2;
  return { offset: at, length, mpeg1, channels, sideInfo: at + 4, tag: false };
}

/** Bytes of side info: MPEG-1 17 (mono) or 32, MPEG-2 and 2.5 9 (mono) or 17. */
const sideInfoBytes = (frame: Pick<Mp3Frame, 'mpeg1' | 'channels'>): number =>
  frame.mpeg1 ? (frame.channels === 1 ? 17 : 32) : frame.channels === 1 ? 9 : 17;

/**
 * Whether the frame is an encoder's tag frame (Xing/Info after the side info, VBRI 32 bytes after the header),
 * which only a file's first frame is.
 */
function isTagFrame(data: Buffer, frame: Mp3Frame): boolean {
  const at = frame.sideInfo + sideInfoBytes(frame);
  const name = data.toString('latin1', at, at + 4);
  return name === 'Xing' || name === 'Info' || data.toString('latin1', frame.offset + 36, frame.offset + 40) === 'VBRI';
}

/** Bytes of an ID3v2 tag at the start (its header says its size, syncsafe, plus a footer when flagged). */
function id3v2Length(data: Buffer): number {
  if (data.length < 10 || data.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((data[6]! & 0x7f) << 21) | ((data[7]! & 0x7f) << 14) | ((data[8]! & 0x7f) << 7) | (data[9]! & 0x7f);
  return 10 + size + (data[5]! & 0x10 ? 10 : 0);
}

/** Bytes of the tags at the end that come after the last frame: ID3v1 (`TAG`, 128 bytes) and an APEv2 tag. */
function tailLength(data: Buffer): number {
  let end = data.length;
  if (end >= 128 && data.toString('latin1', end - 128, end - 125) === 'TAG') end -= 128;
  if (end >= 32 && data.toString('latin1', end - 32, end - 24) === 'APETAGEX') {
    // The footer's size counts the items and the footer; a header (flag bit 31) adds 32 more.
    const size = data.readUInt32LE(end - 20);
    const hasHeader = (data.readUInt32LE(end - 12) & 0x80000000) !== 0;
    end -= size + (hasHeader ? 32 : 0);
  }
  return data.length - Math.max(0, end);
}

/**
 * The Layer III frames of an MP3 file, back to back from its ID3v2 tag (if any) to its ID3v1/APE tags (if
 * any), or why the file is refused: anything else between them (a free-format or Layer II frame, a cut
 * last frame, junk), or frames protected by a CRC (ffmpeg's encoders write none to test against).
 */
export function mp3Frames(data: Buffer): Mp3Layout {
  const start = id3v2Length(data);
  const end = data.length - tailLength(data);
  const frames: Mp3Frame[] = [];
  for (let at = start; at < end;) {
    const frame = frameAt(data, at);
    if (!frame) return { refused: `no Layer III frame at byte ${at}` };
    if ('protectedFrame' in frame) return { refused: `a frame protected by a CRC at byte ${at}` };
    if (at + frame.length > end) return { refused: `the frame at byte ${at} is cut short` };
    frame.tag = frames.length === 0 && isTagFrame(data, frame);
    frames.push(frame);
    at += frame.length;
  }
  if (frames.every((frame) => frame.tag)) return { refused: 'no audio frame' };
  return { frames };
}

/**
 * Bit offsets of each granule's side info block (MSB first) in a frame's side info, by MPEG-1 or not, then
 * mono or not: MPEG-1 has main_data_begin (9), private bits (5 mono, 3 stereo), scfsi (4 a channel), then
 * 2 granules of 59-bit blocks; MPEG-2 and 2.5 main_data_begin (8), private bits (1 mono, 2 stereo), then
 * 1 granule of 63-bit blocks. Granule by granule, channel by channel.
 */
const BLOCKS = {
  mpeg1: { mono: [18, 77], stereo: [20, 79, 138, 197] },
  mpeg2: { mono: [9], stereo: [10, 73] },
};

/** Where `global_gain` sits in a block: after part2_3_length (12) and big_values (9). */
const GAIN_BIT = 21;

/**
 * Calls `visit` with the bit offset (in the side info) of every `global_gain` that matters in the sound
 * frames. A granule without Huffman bits (part2_3_length 0) decodes to silence whatever its gain, which
 * encoders often set to 255 there (LAME on its last frame): it is left as it is, out of the range too.
 */
function eachGain(data: Buffer, frames: Mp3Frame[], visit: (frame: Mp3Frame, bit: number) => void): void {
  for (const frame of frames) {
    if (frame.tag) continue;
    const blocks = frame.mpeg1 ? BLOCKS.mpeg1 : BLOCKS.mpeg2;
    for (const start of frame.channels === 1 ? blocks.mono : blocks.stereo) {
      const silent =
        readByteAt(data, frame.sideInfo, start) === 0 && readByteAt(data, frame.sideInfo, start + 8) >> 4 === 0;
      if (!silent) visit(frame, start + GAIN_BIT);
    }
  }
}

/** The 8 bits at bit `bit` of the buffer from byte `at`. */
function readByteAt(data: Buffer, at: number, bit: number): number {
  const byte = at + (bit >> 3);
  const shift = bit & 7;
  return ((data[byte]! << shift) | (data[byte + 1]! >> (8 - shift))) & 0xff;
}

function writeByteAt(data: Buffer, at: number, bit: number, value: number): void {
  const byte = at + (bit >> 3);
  const shift = bit & 7;
  const word = ((data[byte]! << 8) | data[byte + 1]!) & ~(0xff00 >> shift);
  const next = word | ((value << 8) >> shift);
  data[byte] = next >> 8;
  data[byte + 1] = next & 0xff;
}

/** The lowest and highest `global_gain` of the sound frames. */
export function gainRange(data: Buffer, frames: Mp3Frame[]): { min: number; max: number } {
  let min = 255;
  let max = 0;
  eachGain(data, frames, (frame, bit) => {
    const gain = readByteAt(data, frame.sideInfo, bit);
    if (gain < min) min = gain;
    if (gain > max) max = gain;
  });
  return { min, max };
}

/**
 * A copy of the file with `steps` added to every `global_gain` of its sound frames (the tags and the tag
 * frame unchanged). The caller checks with `gainRange` that every gain stays within 0..255.
 */
export function withGain(data: Buffer, frames: Mp3Frame[], steps: number): Buffer {
  const out = Buffer.from(data);
  eachGain(data, frames, (frame, bit) => {
    const gain = readByteAt(out, frame.sideInfo, bit) + steps;
    if (gain < 0 || gain > 255) throw new RangeError(`global_gain ${gain} out of 0..255`);
    writeByteAt(out, frame.sideInfo, bit, gain);
  });
  return out;
}
