import { boxes, only, type Box, type BoxBudget } from './iso-boxes.js';
import { cString, setTag } from './tag-text.js';

/**
 * An MP4/MOV's tags as ffmpeg's mov demuxer reads them, under the names it gives them: the brands of
 * its `ftyp` box, the movie's creation time, and the text items of its `udta` box, either iTunes
 * style (`meta` > `ilst`, which ffmpeg's mp4 muxer writes) or QuickTime style (the `©xxx` strings
 * of its mov muxer). Anything else there (numbers, pictures, other languages, keyed `mdta` tags,
 * chapters, unknown items) makes the reading give up: ffprobe reads those.
 */

/** Items read as plain text, by box type (latin1, so `©` is 0xa9), and the names ffmpeg gives them. */
const TEXT_ITEMS: Record<string, string> = {
  aART: 'album_artist',
  apID: 'account_id',
  catg: 'category',
  cprt: 'copyright',
  desc: 'description',
  keyw: 'keywords',
  ldes: 'synopsis',
  manu: 'make',
  modl: 'model',
  purd: 'purchase_date',
  soaa: 'sort_album_artist',
  soal: 'sort_album',
  soar: 'sort_artist',
  soco: 'sort_composer',
  sonm: 'sort_name',
  sosn: 'sort_show',
  tven: 'episode_id',
  tvnn: 'network',
  tvsh: 'show',
  '©ART': 'artist',
  '©PRD': 'producer',
  '©alb': 'album',
  '©aut': 'artist',
  '©chp': 'chapter',
  '©cmt': 'comment',
  '©com': 'composer',
  '©cpy': 'copyright',
  '©day': 'date',
  '©dir': 'director',
  '©dis': 'disclaimer',
  '©ed1': 'edit_date',
  '©enc': 'encoder',
  '©fmt': 'original_format',
  '©gen': 'genre',
  '©grp': 'grouping',
  '©hst': 'host_computer',
  '©inf': 'comment',
  '©lyr': 'lyrics',
  '©mak': 'make',
  '©mod': 'model',
  '©nam': 'title',
  '©ope': 'original_artist',
  '©prd': 'producer',
  '©prf': 'performers',
  '©req': 'playback_requirements',
  '©src': 'original_source',
  '©st3': 'subtitle',
  '©swr': 'encoder',
  '©too': 'encoder',
  '©trk': 'track',
  '©url': 'URL',
  '©wrn': 'warning',
  '©wrt': 'composer',
};

/** The packed ISO 639-2 code `und` (undetermined), the only language whose strings ffmpeg names plainly. */
const UNDETERMINED = 0x55c4;

/** Seconds from 1904, the movie header's epoch, to 1970. */
const MAC_EPOCH = 2082844800;

/** `major_brand`, `minor_version` and `compatible_brands` from an `ftyp` box's body. */
function brandTags(ftyp: Buffer, tags: Record<string, string>): boolean {
  const major = ftyp.toString('latin1', 0, 4);
  const compatible = ftyp.toString('latin1', 8);
  // Brands are printable ASCII; ffmpeg would cut other text at a NUL.
  if (ftyp.length < 8 || !/^[\x20-\x7e]*$/.test(major + compatible)) return false;
  tags.major_brand = major;
  tags.minor_version = String(ftyp.readUInt32BE(4));
  tags.compatible_brands = compatible;
  return true;
}

/** The movie's `creation_time` from its `mvhd` box, as ffmpeg prints it (none when 0). */
function creationTag(mvhd: Buffer, tags: Record<string, string>): boolean {
  let time = mvhd[0] === 1 ? Number(mvhd.readBigInt64BE(4)) : mvhd.readUInt32BE(4);
  if (time < 0) return true;
  // ffmpeg takes a 32-bit time before 1904 + 70 years for a Unix one.
  if (mvhd[0] !== 1 && time > 0 && time < MAC_EPOCH) time += MAC_EPOCH;
  if (time === 0) return true;
  const iso = new Date((time - MAC_EPOCH) * 1000).toISOString();
  if (!/^\d{4}-/.test(iso)) return false;
  tags.creation_time = iso.replace(/\.000Z$/, '.000000Z');
  return true;
}

/** An iTunes-style item's text: its one `data` box, of the UTF-8 type (1). */
function itemText(item: Box, budget: BoxBudget): string | undefined {
  const [data, ...rest] = boxes(item.body, budget);
  if (!data || rest.length > 0 || data.type !== 'data' || data.body.length < 8 || data.body.readUInt32BE(0) !== 1)
    return undefined;
  return cString(data.body.subarray(8));
}

/** A QuickTime-style string: one record of its length, the `und` language and the text. */
function quickTimeText(item: Box): string | undefined {
  if (item.body.length < 4 || item.body.readUInt16BE(2) !== UNDETERMINED) return undefined;
  if (item.body.readUInt16BE(0) !== item.body.length - 4) return undefined;
  return cString(item.body.subarray(4));
}

/** Adds the text items of an iTunes-style `meta` box (`mdir` handler, then `ilst`); false if anything else is there. */
function metaTags(meta: Buffer, tags: Record<string, string>, budget: BoxBudget): boolean {
  if (meta.length < 4 || meta.readUInt32BE(0) !== 0) return false;
  const parts = boxes(meta.subarray(4), budget).filter((box) => box.type !== 'free');
  const [hdlr, ilst] = parts;
  if (parts.length !== 2 || hdlr?.type !== 'hdlr' || ilst?.type !== 'ilst') return false;
  if (hdlr.body.toString('latin1', 8, 12) !== 'mdir') return false;
  for (const item of boxes(ilst.body, budget)) {
    const name = TEXT_ITEMS[item.type];
    const text = name && itemText(item, budget);
    if (!name || text === undefined) return false;
    setTag(tags, name, text);
  }
  return true;
}

/**
 * The tags ffprobe gives an MP4/MOV, from its `ftyp` body and the boxes of its movie header; undefined
 * when there is anything this reading does not know. The boxes it walks are taken from `budget`.
 */
export function movieTags(
  ftyp: Buffer | undefined,
  movie: Box[],
  budget: BoxBudget,
): Record<string, string> | undefined {
  const tags: Record<string, string> = {};
  const mvhd = only(movie, 'mvhd');
  if (!ftyp || !mvhd || !brandTags(ftyp, tags) || !creationTag(mvhd.body, tags)) return undefined;
  if (movie.some((box) => box.type === 'meta')) return undefined;
  const udta = movie.filter((box) => box.type === 'udta');
  if (udta.length > 1) return undefined;
  for (const item of udta[0] ? boxes(udta[0].body, budget) : []) {
    if (item.type === 'free') continue;
    if (item.type === 'meta') {
      if (!metaTags(item.body, tags, budget)) return undefined;
      continue;
    }
    const name = item.type.startsWith('©') ? TEXT_ITEMS[item.type] : undefined;
    const text = name && quickTimeText(item);
    if (!name || text === undefined) return undefined;
    setTag(tags, name, text);
  }
  return tags;
}
