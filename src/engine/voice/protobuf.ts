/**
 * The little of Protocol Buffers' wire format that an ONNX model file needs read and extended here (onnx-file.ts):
 * varints, and fields that carry a varint, a 32-bit value or bytes. A model is one `ModelProto` message; its fields
 * follow each other, each a tag (field number and wire type) and a value.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** A varint's bytes: seven bits a byte, the lowest first; a negative int64 takes ten bytes (two's complement). */
export function varint(value: number | bigint): Buffer {
  let rest = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Buffer.from(bytes);
}

const tag = (field: number, wire: number) => varint((field << 3) | wire);

/** A field holding an integer (int32, int64, an enum). */
export const intField = (field: number, value: number | bigint): Buffer =>
  Buffer.concat([tag(field, WIRE_VARINT), varint(value)]);

/** A field holding bytes: a string, a nested message, or a packed array. */
export const bytesField = (field: number, value: Buffer | string): Buffer => {
  const body = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([tag(field, WIRE_BYTES), varint(body.length), body]);
};

/** A nested message: its fields, one after the other. */
export const message = (field: number, ...fields: Buffer[]): Buffer => bytesField(field, Buffer.concat(fields));

/** One field as read: where its value lies in the message, and the value of a varint. */
export interface FieldAt {
  field: number;
  wire: number;
  /** The value's first byte (for bytes: after the length) and the byte after it. */
  start: number;
  end: number;
  /** A varint field's value. */
  value?: bigint;
}

/** Why a message cannot be read: a field runs past its end, or it holds a tag protobuf does not have. */
export class WireError extends Error {
  constructor(
    message: string,
    /** The message ends inside a field: cut short. */
    readonly pastTheEnd = false,
  ) {
    super(message);
  }
}

/** Reads a varint at `at` of `bytes`; undefined when `bytes` ends inside it. */
export function readVarint(bytes: Uint8Array, at: number): { value: bigint; next: number } | undefined {
  let value = 0n;
  for (let shift = 0n, i = at; i < bytes.length && shift < 70n; i++, shift += 7n) {
    value |= BigInt(bytes[i]! & 0x7f) << shift;
    if ((bytes[i]! & 0x80) === 0) return { value, next: i + 1 };
  }
  return undefined;
}

/** One field's tag at `at`: its number, wire type and where its value lies (for bytes: after the length). */
export function fieldAt(bytes: Uint8Array, at: number, size = bytes.length): FieldAt | undefined {
  const key = readVarint(bytes, at);
  if (!key) return undefined;
  const field = Number(key.value >> 3n);
  const wire = Number(key.value & 7n);
  if (field === 0) throw new WireError(`field number 0 at byte ${at}`);
  let start = key.next;
  let end: number;
  let value: bigint | undefined;
  if (wire === WIRE_VARINT) {
    const read = readVarint(bytes, start);
    if (!read) return undefined;
    value = read.value;
    end = read.next;
  } else if (wire === WIRE_BYTES) {
    const length = readVarint(bytes, start);
    if (!length) return undefined;
    start = length.next;
    end = start + Number(length.value);
  } else if (wire === WIRE_FIXED64) end = start + 8;
  else if (wire === WIRE_FIXED32) end = start + 4;
  else throw new WireError(`wire type ${wire} at byte ${at}`);
  if (end > size) throw new WireError(`a field runs ${end - size} bytes past the end`, true);
  return { field, wire, start, end, ...(value !== undefined ? { value } : {}) };
}

/** Every field of a whole message. */
export function fieldsOf(bytes: Uint8Array): FieldAt[] {
  const fields: FieldAt[] = [];
  for (let at = 0; at < bytes.length;) {
    const found = fieldAt(bytes, at);
    if (!found) throw new WireError(`the message ends inside a field at byte ${at}`);
    fields.push(found);
    at = found.end;
  }
  return fields;
}
