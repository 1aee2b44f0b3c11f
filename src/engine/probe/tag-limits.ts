/**
 * Limits on the tags a probe keeps, whoever read them (ffprobe or a header reader): a file's tags are
 * the uploader's text, and an ID3 frame may hold 60 MB. Tags are answered (`/media-metadata/`) and so
 * kept in the job's record; uncapped, each read of such a file kept 60 MB in memory and on disk.
 */

/** UTF-8 bytes one tag's value keeps: lyrics and long descriptions run to a few KB. */
export const TAG_VALUE_BYTES = 16 * 1024;

/** UTF-8 bytes all tags keep together, names and values. */
export const TAG_TOTAL_BYTES = 64 * 1024;

/**
 * `text` when its UTF-8 fits in `bytes`, else a new string of as much of it as fits, cut between
 * characters. New, not a slice: V8 keeps the whole of a string that a slice of it is taken from, so a
 * 16 KiB slice of a 16 MB tag kept the 16 MB in every record that held it.
 */
function utf8Head(text: string, bytes: number): string {
  if (text.length <= bytes / 3 || Buffer.byteLength(text) <= bytes) return text;
  // At most 3 bytes a UTF-16 unit: the head of the string is enough to cut from, however long it is.
  let head = text.slice(0, bytes);
  // A pair of surrogates cut in two would be encoded as a replacement character.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  const encoded = Buffer.from(head, 'utf8');
  let end = Math.min(bytes, encoded.length);
  while (end > 0 && end < encoded.length && (encoded[end]! & 0xc0) === 0x80) end--;
  return encoded.toString('utf8', 0, end);
}

/**
 * The tags within the limits, in their order: a value past TAG_VALUE_BYTES is cut to it, and once
 * TAG_TOTAL_BYTES are taken, a tag that no longer fits is cut to what is left or, its name not
 * fitting, left out. `truncated` says whether anything was cut or left out.
 */
export function cappedTags(tags: Record<string, string>): { tags: Record<string, string>; truncated: boolean } {
  const kept: Record<string, string> = {};
  let left = TAG_TOTAL_BYTES;
  let truncated = false;
  for (const [name, value] of Object.entries(tags)) {
    const nameBytes = Buffer.byteLength(name);
    if (nameBytes > Math.min(TAG_VALUE_BYTES, left)) {
      truncated = true;
      continue;
    }
    const room = Math.min(TAG_VALUE_BYTES, left - nameBytes);
    const text = utf8Head(value, room);
    if (text !== value) truncated = true;
    kept[name] = text;
    left -= nameBytes + Buffer.byteLength(text);
  }
  return { tags: kept, truncated };
}
