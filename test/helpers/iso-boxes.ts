/**
 * ISO media (MP4) boxes built as bytes, for the hostile files that the in-process MP4 reader must
 * bound (src/engine/probe/iso-media.ts): empty boxes by the million at the top level or inside a
 * movie header.
 */

/** One box: its 32-bit size, its type and its body. */
export function box(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** `count` empty boxes of `type` in a row, 8 bytes each. */
export function emptyBoxes(count: number, type = 'free'): Buffer {
  const bytes = Buffer.alloc(8 * count);
  for (let i = 0; i < count; i++) {
    bytes.writeUInt32BE(8, i * 8);
    bytes.write(type, i * 8 + 4, 'latin1');
  }
  return bytes;
}

/** A file type box of an ordinary MP4 (`isom`, as ffmpeg writes it). */
export const FTYP = box('ftyp', Buffer.from('isom\0\0\x02\0isomiso2avc1mp41', 'latin1'));

/** A file type box, then `count` empty boxes and nothing else: one read each for a reader that reads box by box. */
export const emptyBoxesFile = (count: number): Buffer => Buffer.concat([FTYP, emptyBoxes(count)]);

/**
 * `mp4` (an MP4 as ffmpeg writes it without faststart: its `moov` last, with a 32-bit size) with `count`
 * empty boxes added at the end of its movie header. Nothing else moves: ffprobe still reads it as it was.
 */
export function paddedMovie(mp4: Buffer, count: number): Buffer {
  const at = mp4.indexOf('moov', 0, 'latin1') - 4;
  if (at + mp4.readUInt32BE(at) !== mp4.length) throw new Error('the movie header is not the last box');
  return Buffer.concat([mp4.subarray(0, at), box('moov', Buffer.concat([mp4.subarray(at + 8), emptyBoxes(count)]))]);
}
