/**
 * ID3v2.4 tags written as bytes, for files whose tags are larger than ffmpeg's command line can carry
 * (one argument holds at most 128 KiB): the big-tag cases of issue 33.
 */

/** A size as ID3v2.4 writes it: four bytes of seven bits. */
function syncsafe(size: number): Buffer {
  return Buffer.from([(size >>> 21) & 0x7f, (size >>> 14) & 0x7f, (size >>> 7) & 0x7f, size & 0x7f]);
}

/** One text frame in UTF-8 (encoding 3): `TIT2`, `TALB`, ..., or `TXXX:<description>`. */
function frame(id: string, value: string): Buffer {
  const [type, description] = id.split(':') as [string, string | undefined];
  const text = Buffer.from(description === undefined ? value : `${description}\0${value}`, 'utf8');
  const header = Buffer.concat([Buffer.from(type, 'latin1'), syncsafe(1 + text.length), Buffer.alloc(2)]);
  return Buffer.concat([header, Buffer.from([3]), text]);
}

/** An ID3v2.4 tag of `frames` (by id, in order), to put before an MP3's first frame. */
export function id3Tag(frames: Array<[string, string]>): Buffer {
  const body = Buffer.concat(frames.map(([id, value]) => frame(id, value)));
  return Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), syncsafe(body.length), body]);
}
