import { cString, setTag } from './tag-text.js';

/**
 * The text tags of an ID3v2.3 or v2.4 tag (the ones ffmpeg's mp3 muxer, LAME and most taggers
 * write), read as ffmpeg reads them, under the names it gives them. Anything it would read
 * differently or more of (pictures, private frames, lyrics, numbered genres, the v2.3 date frames
 * it merges, unsynchronised or compressed tags) makes the reading give up: ffprobe reads those.
 */

/** Frame ids ffmpeg renames, matched whatever their case (its ID3v2.3/2.4, 2.2 and 2.4 tables, in that order). */
const NAMES: Record<string, string> = {
  talb: 'album',
  tcom: 'composer',
  tcon: 'genre',
  tcop: 'copyright',
  tenc: 'encoded_by',
  tit2: 'title',
  tlan: 'language',
  tpe1: 'artist',
  tpe2: 'album_artist',
  tpe3: 'performer',
  tpos: 'disc',
  tpub: 'publisher',
  trck: 'track',
  tsse: 'encoder',
  uslt: 'lyrics',
  tal: 'album',
  tco: 'genre',
  tcp: 'compilation',
  tt2: 'title',
  ten: 'encoded_by',
  tp1: 'artist',
  tp2: 'album_artist',
  tp3: 'performer',
  trk: 'track',
  tcmp: 'compilation',
  tdrc: 'date',
  tdrl: 'date',
  tden: 'creation_time',
  tsoa: 'album-sort',
  tsop: 'artist-sort',
  tsot: 'title-sort',
  tit1: 'grouping',
};

/** ID3v2.3 date frames ffmpeg merges into one `date`. */
const MERGED_DATES = new Set(['TYER', 'TDAT', 'TIME']);

/** A genre given by number (`(13)`, `13`), which ffmpeg replaces with its name. */
const NUMBERED_GENRE = /^\s*[+-]?\d|^\(\s*[+-]?\d+\)/;

/** An unpaired UTF-16 surrogate: ffmpeg would stop its conversion there. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The strings of a frame's text (after its encoding byte), each as ffmpeg decodes it; undefined if it would not. */
function strings(encoding: number, bytes: Buffer): string[] | undefined {
  if (encoding === 0 || encoding === 3) {
    const parts: string[] = [];
    for (let at = 0; at <= bytes.length;) {
      const end = bytes.indexOf(0, at) === -1 ? bytes.length : bytes.indexOf(0, at);
      const part = encoding === 0 ? bytes.toString('latin1', at, end) : cString(bytes.subarray(at, end));
      if (part === undefined) return undefined;
      parts.push(part);
      at = end + 1;
    }
    return parts;
  }
  if (encoding !== 1 && encoding !== 2) return undefined;
  const parts: string[] = [];
  let at = 0;
  while (at + 1 < bytes.length || parts.length === 0) {
    let bigEndian = encoding === 2;
    if (encoding === 1) {
      // Each string of UTF-16 with a byte order mark starts with one.
      const mark = at + 1 < bytes.length ? bytes.readUInt16BE(at) : 0;
      if (mark !== 0xfeff && mark !== 0xfffe) return undefined;
      bigEndian = mark === 0xfeff;
      at += 2;
    }
    let end = at;
    while (end + 1 < bytes.length && (bytes[end] !== 0 || bytes[end + 1] !== 0)) end += 2;
    const units = Buffer.from(bytes.subarray(at, end));
    if (bigEndian) units.swap16();
    const part = units.toString('utf16le');
    if (LONE_SURROGATE.test(part)) return undefined;
    parts.push(part);
    at = end + 2;
  }
  return parts;
}

/** An ID3v2 size: four bytes of seven bits. */
const syncsafe = (bytes: Buffer, at: number): number =>
  ((bytes[at]! & 0x7f) << 21) |
  ((bytes[at + 1]! & 0x7f) << 14) |
  ((bytes[at + 2]! & 0x7f) << 7) |
  (bytes[at + 3]! & 0x7f);

/** The whole ID3v2 tag's length at the start of `head` (0 when there is none), and its tags. */
export function id3Tags(head: Buffer): { length: number; tags: Record<string, string> } | undefined {
  if (head.toString('latin1', 0, 3) !== 'ID3') return { length: 0, tags: {} };
  if (head.length < 10) return undefined;
  const version = head[3]!;
  const flags = head[5]!;
  const length = 10 + syncsafe(head, 6) + (flags & 0x10 ? 10 : 0);
  // Unsynchronised or extended headers, v2.2, and a second tag after this one (ffmpeg reads on) are left to ffprobe.
  if ((version !== 3 && version !== 4) || flags & 0xc0 || length > head.length) return undefined;
  if (head.toString('latin1', length, length + 3) === 'ID3') return undefined;
  const raw: Record<string, string> = {};
  const end = 10 + syncsafe(head, 6);
  let at = 10;
  while (at + 10 <= end && head[at] !== 0) {
    const id = head.toString('latin1', at, at + 4);
    const size = version === 4 ? syncsafe(head, at + 4) : head.readUInt32BE(at + 4);
    const body = head.subarray(at + 10, at + 10 + size);
    // Compressed, encrypted, grouped or unsynchronised frames, and frames past the tag.
    if (!/^[A-Z0-9]{4}$/.test(id) || head.readUInt16BE(at + 8) & 0xff || at + 10 + size > end || size < 1)
      return undefined;
    const text = strings(body[0]!, body.subarray(1 + (id === 'COMM' ? 3 : 0)));
    if (!text || MERGED_DATES.has(id)) return undefined;
    if (id === 'COMM' || id === 'TXXX') {
      // Keyed by their description; a comment without one is `comment`.
      if (text.length < 2 || (id === 'TXXX' && !text[0])) return undefined;
      setTag(raw, text[0] || (id === 'COMM' ? 'comment' : ''), text[1]!, true);
    } else if (id.startsWith('T')) {
      if (id === 'TCON' && NUMBERED_GENRE.test(text[0]!)) return undefined;
      if (text[0]) setTag(raw, id, text[0], true);
    } else {
      return undefined;
    }
    at += 10 + size;
  }
  const tags: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) setTag(tags, NAMES[key.toLowerCase()] ?? key, value);
  return { length, tags };
}
