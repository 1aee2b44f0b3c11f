/**
 * Tags as ffmpeg keeps them, for the header readers that read them in process: text values as C
 * strings, and a dictionary whose keys match whatever their case (AVDictionary's default).
 */

/**
 * Bytes as ffmpeg keeps a text value: up to the first NUL, printed by ffprobe as UTF-8. Undefined
 * when they are not UTF-8, which ffprobe would print in its own way.
 */
export function cString(bytes: Buffer): string | undefined {
  const end = bytes.indexOf(0);
  const text = bytes.subarray(0, end === -1 ? bytes.length : end);
  const decoded = text.toString('utf8');
  return Buffer.from(decoded, 'utf8').equals(text) ? decoded : undefined;
}

/**
 * Sets `key` as `av_dict_set` does: an existing key of any case is replaced (the new spelling
 * kept), or left as it is with `keepFirst` (AV_DICT_DONT_OVERWRITE).
 */
export function setTag(tags: Record<string, string>, key: string, value: string, keepFirst = false): void {
  const existing = Object.keys(tags).find((name) => name.toLowerCase() === key.toLowerCase());
  if (existing !== undefined) {
    if (keepFirst) return;
    delete tags[existing];
  }
  tags[key] = value;
}
