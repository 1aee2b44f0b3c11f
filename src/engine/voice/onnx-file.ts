import { open } from 'node:fs/promises';
import { bytesField, fieldAt, fieldsOf, message, WIRE_BYTES, WireError } from './protobuf.js';

/**
 * What mediaflow reads of an ONNX model file before sherpa-onnx loads it: that it is a whole ModelProto (every
 * top-level field within the file, a graph among them), and its metadata, the key-value pairs sherpa-onnx takes a
 * voice's facts from (sample_rate, n_speakers, comment, ...). Only the fields' tags and lengths are read, so a model
 * of hundreds of megabytes costs a few reads. sherpa-onnx ends its whole process on a model without the metadata it
 * needs, so a model is checked here first, and what is wrong with it said in words.
 */

/** ModelProto's fields (onnx.proto). */
const IR_VERSION = 1;
const GRAPH = 7;
const METADATA_PROPS = 14;
/** StringStringEntryProto's fields. */
const KEY = 1;
const VALUE = 2;

/** Longest tag and length: a field number's varint and a length's. */
const TAG_BYTES = 20;
/** A metadata entry longer than this is not a voice's (sherpa-onnx's are a few hundred bytes at most). */
const LONGEST_ENTRY = 1024 * 1024;

/** Why a file is not a usable ONNX model. */
export class ModelFileError extends Error {}

/** The metadata of the ONNX model at `file`, after checking that the file is a whole model. */
export async function onnxMetadata(file: string): Promise<Map<string, string>> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const metadata = new Map<string, string>();
    const seen = new Set<number>();
    const window = Buffer.alloc(TAG_BYTES);
    for (let at = 0; at < size;) {
      const { bytesRead } = await handle.read(window, 0, TAG_BYTES, at);
      let found;
      try {
        found = fieldAt(window.subarray(0, bytesRead), 0, size - at);
      } catch (error) {
        if (error instanceof WireError)
          throw new ModelFileError(
            at === 0
              ? 'the file is not an ONNX model'
              : error.pastTheEnd
                ? `the file is cut short (a field at byte ${at} runs past its ${size} bytes)`
                : `the file is damaged at byte ${at}`,
          );
        throw error;
      }
      if (!found) throw new ModelFileError(`the file is cut short at byte ${at} of ${size}`);
      seen.add(found.field);
      if (found.field === METADATA_PROPS && found.wire === WIRE_BYTES) {
        const length = found.end - found.start;
        if (length > LONGEST_ENTRY) throw new ModelFileError('a metadata entry is too long to be one');
        const entry = Buffer.alloc(length);
        await handle.read(entry, 0, length, at + found.start);
        const fields = fieldsOf(entry);
        const text = (field: number) => {
          const value = fields.find((candidate) => candidate.field === field);
          return value ? entry.toString('utf8', value.start, value.end) : '';
        };
        metadata.set(text(KEY), text(VALUE));
      }
      at += found.end;
    }
    if (!seen.has(IR_VERSION) || !seen.has(GRAPH)) throw new ModelFileError('the file is not an ONNX model (no graph)');
    return metadata;
  } finally {
    await handle.close();
  }
}

/**
 * Metadata entries as bytes to append to a model file: a protobuf message's repeated field may come in any number of
 * pieces, and onnxruntime reads the last value of a key, so the file with these after it is the same model with
 * this metadata, its own bytes unchanged.
 */
export const metadataEntries = (entries: Record<string, string | number>): Buffer =>
  Buffer.concat(
    Object.entries(entries).map(([key, value]) =>
      message(METADATA_PROPS, bytesField(KEY, key), bytesField(VALUE, String(value))),
    ),
  );
