/**
 * Whisper models generated at test time, for the real whisper.cpp to run (test/helpers/whisper-ggml.ts writes them):
 *
 * - a random-weight model of real dimensions (tiny.en's by default): it costs the compute a real model of those
 *   dimensions does, so it stands in for timing and for runs long enough to cancel;
 * - a scripted model: whatever the audio, greedy decoding replays a fixed text with fixed segment times, through
 *   the real mel, encoder, decoder and timestamp code.
 *
 * How the scripted model does it: the decoder has one layer of width 64. Its attention (self and cross) writes
 * zeros and its positional embedding is zero, so what it predicts depends on the current token alone, never on the
 * audio. Each token of the script (the start token, the timestamps, the words, end-of-text) owns one dimension: its
 * embedding is A times that unit vector, every other token's is zero. The MLP is a lookup table: hidden unit s fires
 * only when the current token is the one owning dimension s, and writes (next - current) into the residual, which
 * then holds A times the next token's unit vector. The final norm and the product with the embeddings give the next
 * token a logit near 8A = 40 and every other one 0 or below, so it wins with a probability of 1 - 1e-12, above the
 * mass of all timestamps together as whisper.cpp's timestamp rule requires. Because the next token is a function of
 * the current one, every token appears once in the chain: each word occurrence gets a token of its own (several ids
 * may carry the same string), and a segment must end strictly before the next one starts.
 *
 * Word times: whisper.cpp's token timestamps (tokenTimestamps with maxLen 1) place a word where the most likely
 * timestamp was when the word was chosen, if that timestamp had a probability above 0.01, and share the time out by
 * the words' lengths otherwise. So beside each word after a segment's first, the MLP also writes a little of the
 * timestamp at which the word is to start (HINT): it gets a probability near 0.08 and the word the rest, and the words
 * start where the script says: a segment's time split evenly between its words, on the 20 ms grid. whisper.cpp
 * counts those times from the start of the window only when the window's first segment starts at 0.
 */
import { type BindingName, bindingProblem } from '../../src/engine/speech/bindings/choice.js';
import { optionalCases, type OptionalCases } from './optional-cases.js';
import { seeded } from './seeded.js';
import { specialTokens, TINY_EN, writeModel, type Tensor, type WhisperDims } from './whisper-ggml.js';

export { BASE_EN, TINY_EN } from './whisper-ggml.js';

/**
 * Settings that pin the recogniser to @fugood's whisper.cpp (1.7.6 or later), for cases that assert the scripted
 * model's exact times as it gives them: @napi-rs/whisper's (1.7.2), which `auto` takes where it can, runs the scripted
 * model differently: it moves the window on to the script's last timestamp and replays the script there, and starts
 * a segment after a pause where the previous one ended.
 */
export const FUGOOD = { MEDIAFLOW_WHISPER_BINDING: 'fugood' };

/**
 * For a file whose cases need the default binding: `missing` (why they cannot run here, said once on the console),
 * and `skipped(context)`, which skips a case saying why and answers whether it did.
 */
export const whisperCases = (what: string): OptionalCases => optionalCases(what, bindingMissing());

/**
 * Why the cases that load whisper.cpp with a binding cannot run here, if they cannot: @fugood's is an optional
 * dependency, @napi-rs's a dev dependency that needs AVX2.
 */
export function bindingMissing(binding: BindingName = 'fugood'): string | undefined {
  return bindingProblem(binding) ?? undefined;
}

/** The script most cases replay: two segments, the second starting after a pause. */
export const HELLO_SCRIPT: ScriptSegment[] = [
  { start: 0, end: 2, text: 'Hello world.' },
  { start: 2.5, end: 5, text: 'This is mediaflow.' },
];

const isNormWeight = (tensor: Tensor) => /ln(_post)?\.weight$/.test(tensor.name);

/** Norms' gains 1, everything else uniform in ±0.05: small enough that no activation overflows f16. */
function randomFill(seed: number) {
  const next = seeded(seed);
  return (tensor: Tensor, data: Float32Array) => {
    if (isNormWeight(tensor)) data.fill(1);
    else for (let i = 0; i < data.length; i++) data[i] = (next() * 2 - 1) * 0.05;
  };
}

/** The text vocabulary: token 220 is " " (whisper.cpp looks it up by that string), the others unique fillers. */
function vocabularyOf(dims: WhisperDims, words: Map<number, string> = new Map()): string[] {
  return Array.from({ length: specialTokens(dims.nVocab).eot }, (_, id) =>
    id === 220 ? ' ' : (words.get(id) ?? `[${id}]`),
  );
}

export async function writeRandomModel(file: string, options: { dims?: WhisperDims; seed?: number } = {}) {
  const dims = options.dims ?? TINY_EN;
  await writeModel(file, { dims, vocabulary: vocabularyOf(dims), fill: randomFill(options.seed ?? 1) });
}

/**
 * A segment of the script: times in seconds within each 30 s window (multiples of 0.02), words split on spaces, each
 * word starting at start + i × (end - start) / words (rounded to 20 ms).
 */
export interface ScriptSegment {
  start: number;
  end: number;
  text: string;
}

export interface ScriptOptions {
  segments: ScriptSegment[];
  /** n_vocab 51865 (prompt: start, language, task) instead of 51864 (prompt: start alone, English only). */
  multilingual?: boolean;
  /** Index in whisper.cpp's language list (0 English, 1 Chinese, 2 German, ...) that detection finds. */
  language?: number;
}

const WIDTH = 64;
/** Each script token's embedding: A times its unit vector. */
const A = 5;
/** The MLP's threshold: a normed one-hot vector has ~7.9 at its own dimension and ~-0.13 elsewhere. */
const THRESHOLD = 4;
/** How much of a word's start timestamp goes beside the word: a logit 2.4 below the word's (p ≈ 0.08 against 0.92). */
const HINT = 0.92 * A;

/** ggml's GELU (the tanh form). */
const gelu = (x: number) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

/** What ggml_norm (eps 1e-5) gives a one-hot vector A·e at its own dimension. */
function normedPeak(): number {
  const mean = A / WIDTH;
  const variance = (A * A) / WIDTH - mean * mean;
  return (A - mean) / Math.sqrt(variance + 1e-5);
}

interface Chain {
  /** The tokens to replay, from the one that ends the prompt to end-of-text. */
  tokens: number[];
  /** The timestamp token to hint beside a word token: the word's start. */
  hints: Map<number, number>;
  /** The words' strings by token id. */
  words: Map<number, string>;
}

function chainOf(options: ScriptOptions): Chain {
  const special = specialTokens(options.multilingual ? 51865 : 51864);
  const steps = (seconds: number) => Math.round(seconds / 0.02);
  const timestamp = (seconds: number) => {
    if (Math.abs(steps(seconds) * 0.02 - seconds) > 1e-9 || steps(seconds) < 0 || steps(seconds) > 1500) {
      throw new Error(`script time ${seconds} s is not a multiple of 0.02 s within 0-30 s`);
    }
    return special.timestampBegin + steps(seconds);
  };
  // whisper.cpp lets the first timestamp be 1 s at most (max_initial_ts).
  if (options.segments[0] && options.segments[0].start > 1) throw new Error('the first segment must start by 1 s');
  const chain: Chain = {
    tokens: [options.multilingual ? special.transcribe : special.sot],
    hints: new Map(),
    words: new Map(),
  };
  let last = -1;
  for (const segment of options.segments) {
    if (!(segment.start > last && segment.end > segment.start)) {
      throw new Error(`script segments must increase strictly (a timestamp token can appear once): ${segment.start}`);
    }
    last = segment.end;
    chain.tokens.push(timestamp(segment.start));
    const words = segment.text.split(' ').filter(Boolean);
    const startStep = steps(segment.start);
    const stepsEach = (steps(segment.end) - startStep) / words.length;
    const starts = words.map((_, i) => startStep + Math.round(i * stepsEach));
    if (starts.some((start, i) => i > 0 && start <= starts[i - 1]!)) throw new Error(`too many words: ${segment.text}`);
    words.forEach((word, i) => {
      const id = 1000 + chain.words.size;
      chain.words.set(id, ` ${word}`);
      chain.tokens.push(id);
      if (i > 0) chain.hints.set(id, special.timestampBegin + starts[i]!);
    });
    chain.tokens.push(timestamp(segment.end));
  }
  chain.tokens.push(special.eot);
  return chain;
}

export async function writeScriptedModel(file: string, options: ScriptOptions): Promise<void> {
  const dims: WhisperDims = {
    ...TINY_EN,
    nVocab: options.multilingual ? 51865 : 51864,
    nAudioState: WIDTH,
    nAudioHead: 1,
    nAudioLayer: 1,
    nTextState: WIDTH,
    nTextHead: 1,
    nTextLayer: 1,
  };
  const special = specialTokens(dims.nVocab);
  const chain = chainOf(options);
  // Each token's next one; a multilingual model's start token leads to the language that detection is to find (it
  // reads the logits after the start token alone).
  const transitions: Array<[number, number]> = chain.tokens.slice(1).map((token, i) => [chain.tokens[i]!, token]);
  if (special.multilingual) transitions.push([special.sot, special.firstLanguage + (options.language ?? 0)]);
  const dimensionOf = new Map<number, number>();
  for (const token of [...transitions.flat(), ...chain.hints.values()]) {
    if (!dimensionOf.has(token)) dimensionOf.set(token, dimensionOf.size);
  }
  if (dimensionOf.size > WIDTH) throw new Error(`a script of more than ${WIDTH} tokens and word times`);
  // The translate task starts the same chain as transcribe.
  if (special.multilingual) dimensionOf.set(special.translate, dimensionOf.get(special.transcribe)!);

  const fired = gelu(normedPeak() - THRESHOLD);
  const hidden = 4 * WIDTH;
  const encoderFill = randomFill(2);
  const fill = (tensor: Tensor, data: Float32Array) => {
    // The encoder runs for real on the audio, but the decoder's cross attention reads none of it.
    if (tensor.name.startsWith('encoder.')) return encoderFill(tensor, data);
    if (isNormWeight(tensor)) return data.fill(1);
    if (tensor.name === 'decoder.token_embedding.weight') {
      for (const [token, dimension] of dimensionOf) data[token * WIDTH + dimension] = A;
    } else if (tensor.name.endsWith('mlp.0.weight')) {
      for (let dimension = 0; dimension < WIDTH; dimension++) data[dimension * WIDTH + dimension] = 1;
    } else if (tensor.name.endsWith('mlp.0.bias')) {
      data.fill(-THRESHOLD);
    } else if (tensor.name.endsWith('mlp.2.weight')) {
      // Hidden unit `source` turns A·e(source) into A·e(target), plus the hinted start timestamp of a word.
      for (const [from, to] of transitions) {
        const source = dimensionOf.get(from)!;
        const add = (token: number, value: number) => {
          const at = dimensionOf.get(token)! * hidden + source;
          data[at] = data[at]! + value / fired;
        };
        add(from, -A);
        add(to, A);
        const hint = chain.hints.get(to);
        if (hint !== undefined) add(hint, HINT);
      }
    }
    // Everything else stays zero: attention outputs, biases, the positional embedding.
  };
  await writeModel(file, { dims, vocabulary: vocabularyOf(dims, chain.words), fill });
}
