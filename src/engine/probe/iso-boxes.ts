/** The boxes of ISO media (MP4, MOV, M4A, 3GP), as the movie header's readers walk them. */

export interface Box {
  type: string;
  body: Buffer;
}

/**
 * The most boxes one reading of a movie header walks, in all. A real one has a few dozen per track
 * (tens to hundreds in all); 16 MiB of empty boxes are two million, which took seconds of the event
 * loop. Past it the reading stops, as at a box that does not add up, and ffprobe reads the file.
 */
export const MAX_BOXES = 10_000;

/** What is left of a reading's allowance of boxes: `boxes` takes from it and throws when it runs out. */
export interface BoxBudget {
  left: number;
}

/** A new allowance for one reading of a movie header. */
export const boxBudget = (): BoxBudget => ({ left: MAX_BOXES });

/**
 * The boxes inside `buffer`, in order, each taken from `budget`. A box running past its parent is
 * malformed, and more boxes than the budget holds are too many: both throw a RangeError.
 */
export function boxes(buffer: Buffer, budget: BoxBudget): Box[] {
  const found: Box[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    if (--budget.left < 0) throw new RangeError(`more than ${MAX_BOXES} boxes`);
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
