import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { mediaError } from '../errors.js';

/** `ggml` as whisper.cpp writes it: the first four bytes of a model, little-endian. */
const GGML_MAGIC = 0x67676d6c;
/** English-only models have 51864 tokens; the multilingual ones 51865 and more (language tokens). */
export const MULTILINGUAL_VOCABULARY = 51865;

/** Bytes per block and values per block of the tensor types whisper.cpp's models use (ggml's type numbers). */
const TENSOR_TYPES: Record<number, { name: string; block: number; bytes: number }> = {
  0: { name: 'f32', block: 1, bytes: 4 },
  1: { name: 'f16', block: 1, bytes: 2 },
  2: { name: 'q4_0', block: 32, bytes: 18 },
  3: { name: 'q4_1', block: 32, bytes: 20 },
  6: { name: 'q5_0', block: 32, bytes: 22 },
  7: { name: 'q5_1', block: 32, bytes: 24 },
  8: { name: 'q8_0', block: 32, bytes: 34 },
};

class Truncated extends Error {}

/** Why a file is no whole ggml model: cut short (`cut`), or not laid out as one. `detail` is a clause about "it". */
export class ModelProblem extends Error {
  constructor(
    readonly detail: string,
    readonly cut = false,
  ) {
    super(detail);
  }
}

/** Bytes read ahead through the header: the mel filters and the vocabulary's ~50,000 small entries in a few reads. */
const HEADER_AHEAD = 1 << 20;
/** A tensor's header whole (three numbers, at most four dimensions): one small read per tensor, its data skipped. */
const TENSOR_AHEAD = 28;

/** Reads a file forward through a window, synchronously: the per-request check cannot wait on a promise. */
class Reader {
  private window = Buffer.alloc(0);
  private start = 0;
  position = 0;
  /** Bytes a read takes at least, past what it needs: the next small reads come from the window. */
  ahead = HEADER_AHEAD;
  constructor(
    private readonly fd: number,
    readonly size: number,
  ) {}

  bytes(n: number): Buffer {
    if (this.position + n > this.size) throw new Truncated();
    const offset = this.position - this.start;
    if (offset < 0 || offset + n > this.window.length) {
      this.window = Buffer.alloc(Math.min(Math.max(n, this.ahead), this.size - this.position));
      readSync(this.fd, this.window, 0, this.window.length, this.position);
      this.start = this.position;
    }
    const at = this.position - this.start;
    this.position += n;
    return this.window.subarray(at, at + n);
  }

  int32s(n: number): number[] {
    const buffer = this.bytes(4 * n);
    return Array.from({ length: n }, (_, i) => buffer.readInt32LE(4 * i));
  }

  skip(n: number): void {
    if (this.position + n > this.size) throw new Truncated();
    this.position += n;
  }
}

/** The tensors whisper.cpp's loader asks for: 7 + 15 per encoder layer, 4 + 24 per decoder layer. */
const expectedTensors = (audioLayers: number, textLayers: number) => 7 + 15 * audioLayers + 4 + 24 * textLayers;

/** What a model's header says: its vocabulary, 51864 for English-only models, 51865 and up for multilingual ones. */
export interface ModelFacts {
  vocabulary: number;
  multilingual: boolean;
}

/**
 * Walks the layout of the whisper.cpp model open at `fd` (`size` bytes) without reading the weights: the magic, the
 * hyper-parameters, the mel filters, the vocabulary, then every tensor's header and the size of its data, up to the
 * last byte, which must be the last tensor's. A model cut short matters: cut before its first tensor, whisper.cpp
 * loads it as an "empty model for testing" that recognises nothing, with success; cut inside them, it fails only
 * once an input has been fetched and decoded. Synchronous, with one small read per tensor (1,259 for large-v3).
 * Throws a ModelProblem.
 */
export function walkModel(fd: number, size: number): ModelFacts & { tensors: number } {
  if (size < 4) throw new ModelProblem(`it is ${size} bytes long`);
  const reader = new Reader(fd, size);
  // The part being read, for the message when the file ends inside it.
  let part = 'header';
  try {
    const [magic] = reader.int32s(1);
    if (magic !== GGML_MAGIC) throw new ModelProblem('it does not start with the ggml magic number 0x67676d6c');
    const [nVocab, , , , audioLayers, , , , textLayers, nMels] = reader.int32s(11) as number[];
    if (!(nVocab! > 0 && audioLayers! > 0 && audioLayers! <= 256 && textLayers! > 0 && textLayers! <= 256))
      throw new ModelProblem('its hyper-parameters are out of range');
    const [melCount, fftCount] = reader.int32s(2) as [number, number];
    if (melCount !== nMels || fftCount <= 0 || fftCount > 4096) throw new ModelProblem('its mel filters are malformed');
    part = 'mel filters';
    reader.skip(4 * melCount * fftCount);
    part = 'vocabulary';
    const [words] = reader.int32s(1) as [number];
    if (words < 0 || words > nVocab!) throw new ModelProblem(`its vocabulary has ${words} entries`);
    for (let i = 0; i < words; i++) {
      const [length] = reader.int32s(1) as [number];
      if (length < 0 || length > 1024) throw new ModelProblem(`vocabulary entry ${i} is ${length} bytes long`);
      reader.skip(length);
    }
    const expected = expectedTensors(audioLayers!, textLayers!);
    reader.ahead = TENSOR_AHEAD;
    let tensors = 0;
    while (reader.position < size) {
      part = `tensor ${tensors + 1} of ${expected}`;
      const [dims, nameLength, type] = reader.int32s(3) as [number, number, number];
      const kind = TENSOR_TYPES[type];
      if (dims < 1 || dims > 4 || nameLength < 1 || nameLength > 256 || !kind)
        throw new ModelProblem(`tensor ${tensors + 1}'s header is malformed`);
      const shape = reader.int32s(dims);
      if (shape.some((n) => n < 1) || shape[0]! % kind.block !== 0)
        throw new ModelProblem(`tensor ${tensors + 1} has an impossible shape`);
      reader.skip(nameLength);
      reader.skip((shape.reduce((product, n) => product * n, 1) / kind.block) * kind.bytes);
      tensors++;
    }
    if (tensors !== expected)
      throw new ModelProblem(`it holds ${tensors} of the ${expected} tensors its hyper-parameters call for`, true);
    return { vocabulary: nVocab!, multilingual: nVocab! >= MULTILINGUAL_VOCABULARY, tensors };
  } catch (error) {
    if (error instanceof Truncated) throw new ModelProblem(`it ends at byte ${size}, inside its ${part}`, true);
    throw error;
  }
}

/**
 * Checks that a file is a whole whisper.cpp model in the legacy ggml format (walkModel), for downloads and `mediaflow
 * models verify`. Throws a 422 naming `source` and the reason.
 */
export async function checkModelFile(file: string, source = file): Promise<ModelFacts & { tensors: number }> {
  const refuse = (reason: string) => mediaError(`${source} is not a whisper.cpp ggml model: ${reason}`);
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw refuse(code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : String(code));
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw refuse('it is not a regular file');
    return walkModel(handle.fd, stats.size);
  } catch (error) {
    if (!(error instanceof ModelProblem)) throw error;
    throw error.cut ? mediaError(`${source} is cut short: ${error.detail}`) : refuse(error.detail);
  } finally {
    await handle.close();
  }
}
