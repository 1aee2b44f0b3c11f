import { ffprobeSeconds } from './ffprobe-seconds.js';
import { id3Tags } from './id3-tags.js';
import { audioStream, type MediaFacts } from '../contract/media-facts.js';

/**
 * Facts of an MP3 file read in process, the same facts ffprobe gives, when its first frame carries
 * a Xing or Info header with the frame count (LAME, ffmpeg and most encoders write one): that count
 * is the duration ffprobe reports; its ID3v2 text tags are read too (id3-tags.ts). Anything else (no
 * such header, an ID3 tag with more than text, such as a picture, which ffprobe lists as a stream,
 * other layers) returns undefined and ffprobe reads the file.
 */

/** The mp3 demuxer's time base, the same for every file. */
const MP3_TIME_BASE = '1/14112000';

/** Sample rates of MPEG-1, by index; MPEG-2 halves them and MPEG-2.5 quarters them. */
const MPEG1_RATES = [44100, 48000, 32000];

/** Whether the file ends with an ID3v1 or APE tag, whose tags ffmpeg reads too: ffprobe then reads the file. */
const tailTagged = (tail: Buffer): boolean =>
  (tail.length >= 128 && tail.toString('latin1', tail.length - 128, tail.length - 125) === 'TAG') ||
  tail.includes('APETAGEX', 0, 'latin1');

/**
 * Facts of an MP3 whose first bytes are `head` and last ones `tail` (the last 160 at most), of
 * `fileSize` bytes in all; undefined when ffprobe should read it.
 */
export function mpegAudioFacts(head: Buffer, fileSize: number, tail: Buffer): MediaFacts | undefined {
  const id3 = id3Tags(head);
  if (!id3 || id3.length + 4 > head.length || tailTagged(tail)) return undefined;
  const start = id3.length;
  const header = head.readUInt32BE(start);
  const version = (header >>> 19) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const layer = (header >>> 17) & 3; // 1: Layer III
  const crc = ((header >>> 16) & 1) === 0;
  const bitrateIndex = (header >>> 12) & 0xf;
  const rateIndex = (header >>> 10) & 3;
  const mono = ((header >>> 6) & 3) === 3;
  if (
    header >>> 21 !== 0x7ff ||
    version === 1 ||
    layer !== 1 ||
    crc ||
    bitrateIndex === 0 ||
    bitrateIndex === 15 ||
    rateIndex === 3
  )
    return undefined;
  const sampleRate = MPEG1_RATES[rateIndex]! / (version === 3 ? 1 : version === 2 ? 2 : 4);
  const samplesPerFrame = version === 3 ? 1152 : 576;
  const sideInfo = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
  const at = start + 4 + sideInfo;
  if (at + 16 > head.length) return undefined;
  const tag = head.toString('latin1', at, at + 4);
  const flags = head.readUInt32BE(at + 4);
  // The frame count, and the byte count to check it by.
  if ((tag !== 'Xing' && tag !== 'Info') || (flags & 3) !== 3) return undefined;
  const frames = head.readUInt32BE(at + 8);
  const declaredBytes = head.readUInt32BE(at + 12);
  const actualBytes = fileSize - start;
  // ffmpeg distrusts the count when the sizes differ by more than a sixteenth, and so does this.
  if (frames === 0 || Math.abs(actualBytes - declaredBytes) > Math.min(actualBytes, declaredBytes) / 16)
    return undefined;
  const audio = {
    codec: 'mp3',
    sampleRate,
    channels: mono ? 1 : 2,
    channelLayout: mono ? 'mono' : 'stereo',
    timeBase: MP3_TIME_BASE,
  };
  return {
    formatName: 'mp3',
    isImage: false,
    streamCount: 1,
    duration: ffprobeSeconds(frames * samplesPerFrame, sampleRate),
    audio,
    streams: [audioStream(0, audio)],
    tags: id3.tags,
  };
}
