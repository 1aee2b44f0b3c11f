/** The boxes of ISO media (MP4, MOV, M4A, 3GP), as the movie header's readers walk them. */

export interface Box {
  type: string;
  body: Buffer;
}

/** The boxes inside `buffer`, in order. A box running past its parent is malformed: it throws. */
export function boxes(buffer: Buffer): Box[] {
  const found: Box[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    let size = buffer.readUInt32BE(offset);
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buffer.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size === 0) {
      size = buffer.length - offset;
    }
    if (size < header || offset + size > buffer.length) throw new RangeError(`box '${type}' overruns its parent`);
    found.push({ type, body: buffer.subarray(offset + header, offset + size) });
    offset += size;
  }
  return found;
}

export const only = (list: Box[], type: string): Box | undefined => {
  const matching = list.filter((box) => box.type === type);
  return matching.length === 1 ? matching[0] : undefined;
};
