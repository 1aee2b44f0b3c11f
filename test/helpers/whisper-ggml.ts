/**
 * whisper.cpp's legacy ggml model file, written from TypeScript: no weights can be downloaded where the tests run,
 * and none are committed, so test/helpers/whisper-model.ts makes its models through this. The layout is what
 * whisper.cpp's whisper_model_load reads: the magic 0x67676d6c, eleven int32 hyper-parameters, the mel filters,
 * the vocabulary, then each tensor as (n_dims, name length, type, shape with the fastest dimension first, name,
 * data), with no padding anywhere.
 */
import { open } from 'node:fs/promises';

/** The hyper-parameters, in the file's order (ftype is always 1: mostly f16, as the published models). */
export interface WhisperDims {
  nVocab: number;
  nAudioCtx: number;
  nAudioState: number;
  nAudioHead: number;
  nAudioLayer: number;
  nTextCtx: number;
  nTextState: number;
  nTextHead: number;
  nTextLayer: number;
  nMels: number;
}

/** tiny.en's dimensions: a model with them costs what the real one does, whatever its weights. */
export const TINY_EN: WhisperDims = {
  nVocab: 51864,
  nAudioCtx: 1500,
  nAudioState: 384,
  nAudioHead: 6,
  nAudioLayer: 4,
  nTextCtx: 448,
  nTextState: 384,
  nTextHead: 6,
  nTextLayer: 4,
  nMels: 80,
};

/** base.en's, for the benchmark beside tiny.en's. */
export const BASE_EN: WhisperDims = {
  ...TINY_EN,
  nAudioState: 512,
  nAudioHead: 8,
  nAudioLayer: 6,
  nTextState: 512,
  nTextHead: 8,
  nTextLayer: 6,
};

/** Special token ids, which whisper.cpp derives from n_vocab (51865 and up is multilingual). */
export function specialTokens(nVocab: number) {
  const multilingual = nVocab >= 51865;
  // whisper.cpp moves the task and timestamp tokens by the number of languages beyond 98.
  const shift = multilingual ? nVocab - 51765 - 1 - 98 : 0;
  const eot = multilingual ? 50257 : 50256;
  return {
    multilingual,
    eot,
    sot: eot + 1,
    /** The first language token (English); the others follow in whisper.cpp's g_lang order. */
    firstLanguage: eot + 2,
    translate: 50357 + shift,
    transcribe: 50358 + shift,
    /** <|0.00|>; token beg + n is the time n × 20 ms into the 30 s window. */
    timestampBegin: 50363 + shift,
  };
}

export interface Tensor {
  name: string;
  /** The shape as ggml counts it: the fastest-moving dimension first. */
  shape: number[];
  /** Stored as f16 (the big matrices), else f32 (biases, norms, positional embeddings), as whisper.cpp expects. */
  half: boolean;
}

/** Every tensor whisper.cpp's loader asks for, named and shaped as it creates them. */
export function tensorsOf(d: WhisperDims): Tensor[] {
  const vector = (name: string, n: number): Tensor => ({ name, shape: [n], half: false });
  const matrix = (name: string, inputs: number, outputs: number): Tensor => ({
    name,
    shape: [inputs, outputs],
    half: true,
  });
  const attention = (prefix: string, n: number): Tensor[] => [
    vector(`${prefix}_ln.weight`, n),
    vector(`${prefix}_ln.bias`, n),
    matrix(`${prefix}.query.weight`, n, n),
    vector(`${prefix}.query.bias`, n),
    matrix(`${prefix}.key.weight`, n, n),
    matrix(`${prefix}.value.weight`, n, n),
    vector(`${prefix}.value.bias`, n),
    matrix(`${prefix}.out.weight`, n, n),
    vector(`${prefix}.out.bias`, n),
  ];
  const mlp = (prefix: string, n: number): Tensor[] => [
    vector(`${prefix}.mlp_ln.weight`, n),
    vector(`${prefix}.mlp_ln.bias`, n),
    matrix(`${prefix}.mlp.0.weight`, n, 4 * n),
    vector(`${prefix}.mlp.0.bias`, 4 * n),
    matrix(`${prefix}.mlp.2.weight`, 4 * n, n),
    vector(`${prefix}.mlp.2.bias`, n),
  ];
  const a = d.nAudioState;
  const t = d.nTextState;
  const layers = (n: number, block: (i: number) => Tensor[]) => Array.from({ length: n }, (_, i) => block(i)).flat();
  return [
    { name: 'encoder.positional_embedding', shape: [a, d.nAudioCtx], half: false },
    { name: 'encoder.conv1.weight', shape: [3, d.nMels, a], half: true },
    // The converter stores the conv biases as [n_state, 1] matrices, and the loader checks that shape.
    { name: 'encoder.conv1.bias', shape: [1, a], half: false },
    { name: 'encoder.conv2.weight', shape: [3, a, a], half: true },
    { name: 'encoder.conv2.bias', shape: [1, a], half: false },
    vector('encoder.ln_post.weight', a),
    vector('encoder.ln_post.bias', a),
    ...layers(d.nAudioLayer, (i) => [...attention(`encoder.blocks.${i}.attn`, a), ...mlp(`encoder.blocks.${i}`, a)]),
    { name: 'decoder.positional_embedding', shape: [t, d.nTextCtx], half: false },
    matrix('decoder.token_embedding.weight', t, d.nVocab),
    vector('decoder.ln.weight', t),
    vector('decoder.ln.bias', t),
    ...layers(d.nTextLayer, (i) => [
      ...attention(`decoder.blocks.${i}.attn`, t),
      ...attention(`decoder.blocks.${i}.cross_attn`, t),
      ...mlp(`decoder.blocks.${i}`, t),
    ]),
  ];
}

export const sizeOf = (tensor: Tensor) => tensor.shape.reduce((product, n) => product * n, 1);

/** Triangular filters on the mel scale over 0-8 kHz: what whisper.cpp multiplies each frame's spectrum by. */
function melFilters(nMels: number, nFft = 201): Float32Array {
  const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const edges = Array.from({ length: nMels + 2 }, (_, i) => hz((mel(8000) * i) / (nMels + 1)));
  const filters = new Float32Array(nMels * nFft);
  for (let m = 0; m < nMels; m++) {
    const [low, centre, high] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    for (let k = 0; k < nFft; k++) {
      const f = (k * 8000) / (nFft - 1);
      filters[m * nFft + k] = Math.max(0, Math.min((f - low) / (centre - low), (high - f) / (high - centre)));
    }
  }
  return filters;
}

const float = new Float32Array(1);
const bits = new Uint32Array(float.buffer);

/** IEEE half-precision bits of a number, rounded to nearest even (Node 20 has no Float16Array). */
export function halfBits(value: number): number {
  float[0] = value;
  const x = bits[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = ((x >>> 23) & 0xff) - 112; // rebiased from 127 to 15
  let mantissa = x & 0x7fffff;
  if (exponent >= 31) return sign | 0x7c00;
  // Below the smallest normal half: a subnormal, its mantissa shifted by how far below it is.
  const shift = exponent <= 0 ? 14 - exponent : 13;
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa |= 0x800000;
  }
  let half = (exponent <= 0 ? 0 : exponent << 10) | (mantissa >>> shift);
  const rest = mantissa & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (rest > halfway || (rest === halfway && half & 1)) half++;
  return sign | half;
}

const int32s = (...values: number[]) => Buffer.from(Int32Array.from(values).buffer);

function vocabularyBytes(tokens: string[]): Buffer {
  const parts = [int32s(tokens.length)];
  for (const token of tokens) {
    const text = Buffer.from(token, 'utf8');
    parts.push(int32s(text.length), text);
  }
  return Buffer.concat(parts);
}

/** Chunks of at most a million values, so that a 20-million-value embedding never sits twice in memory as bytes. */
function* tensorBytes(tensor: Tensor, data: Float32Array): Generator<Buffer> {
  const chunk = 1 << 20;
  for (let start = 0; start < data.length; start += chunk) {
    const part = data.subarray(start, Math.min(data.length, start + chunk));
    if (!tensor.half) {
      yield Buffer.from(part.buffer, part.byteOffset, part.byteLength);
      continue;
    }
    const halves = new Uint16Array(part.length);
    for (let i = 0; i < part.length; i++) halves[i] = halfBits(part[i]!);
    yield Buffer.from(halves.buffer);
  }
}

export interface ModelFile {
  dims: WhisperDims;
  /** The text tokens' strings, ids 0 up to (not including) end-of-text; whisper.cpp names the special ones. */
  vocabulary: string[];
  /** Fills a tensor's values (given zeroed, in ggml order) and may keep them zero. */
  fill: (tensor: Tensor, data: Float32Array) => void;
}

/** Writes the model to a file, tensor by tensor. */
export async function writeModel(file: string, model: ModelFile): Promise<void> {
  const d = model.dims;
  const handle = await open(file, 'w');
  try {
    await handle.write(
      int32s(
        0x67676d6c,
        d.nVocab,
        d.nAudioCtx,
        d.nAudioState,
        d.nAudioHead,
        d.nAudioLayer,
        d.nTextCtx,
        d.nTextState,
        d.nTextHead,
        d.nTextLayer,
        d.nMels,
        1,
      ),
    );
    await handle.write(int32s(d.nMels, 201));
    const filters = melFilters(d.nMels);
    await handle.write(Buffer.from(filters.buffer));
    await handle.write(vocabularyBytes(model.vocabulary));
    for (const tensor of tensorsOf(d)) {
      const data = new Float32Array(sizeOf(tensor));
      model.fill(tensor, data);
      const name = Buffer.from(tensor.name);
      await handle.write(int32s(tensor.shape.length, name.length, tensor.half ? 1 : 0, ...tensor.shape));
      await handle.write(name);
      for (const bytes of tensorBytes(tensor, data)) await handle.write(bytes);
    }
  } finally {
    await handle.close();
  }
}
