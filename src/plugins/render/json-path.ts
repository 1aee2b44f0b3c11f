/**
 * Where a value is inside a document, as errors name it: `tracks[1].clips[0].src`, `merge.TITLE`. The merge fields,
 * the schema's checks and the timeline's all speak of places this one way.
 */

/** The path of a member of the value at `path`: a key (`output.width`) or an index (`tracks[1]`). */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const member = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key);
  if (path === '') return member;
  return member.startsWith('"') ? `${path}[${member}]` : `${path}.${member}`;
}

/** The path of clip `index` of track `track`. */
export const clipPath = (track: number, index: number): string => `tracks[${track}].clips[${index}]`;
