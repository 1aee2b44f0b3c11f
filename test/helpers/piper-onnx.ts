/**
 * A Piper voice written from TypeScript, as Piper publishes one: `<name>.onnx` (an ONNX model with no metadata) and
 * `<name>.onnx.json` (its config). No voice can be downloaded where the tests run, and none is committed, so the
 * neural path's tests run sherpa-onnx on these. The model has a Piper voice's inputs and output as sherpa-onnx's
 * VITS loader feeds them (offline-tts-vits-model.cc, RunVitsPiperOrCoqui):
 *
 *   input          int64 [1, N]  the phoneme ids of one sentence (bos, pad, phoneme, pad, ..., eos)
 *   input_lengths  int64 [1]
 *   scales         float [3]     noise, length (1 / speed) and noise_w scales
 *   output         float [1, 1, N × floor(samplesPerToken × length scale)]
 *
 * (Kokoro's model, writeToneKokoro, takes `input`, a `style` vector and the `speed` instead of the scales) and
 * speaks a known waveform: every token a tone of `baseHz + stepHz × id` for floor(samplesPerToken × length scale)
 * samples, starting at phase 0. Its length follows the input and the speed, and a token is told from its pitch.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bytesField, message } from '../../src/engine/voice/protobuf.js';
import { FLOAT, floats, INT64, int64s, intAttribute, modelOf, node, tensor, valueInfo } from './onnx-graph.js';

export interface ToneVoice {
  sampleRate: number;
  /** Samples each token speaks at length scale 1 (speed 1). */
  samplesPerToken: number;
  baseHz: number;
  stepHz: number;
  /** espeak-ng's voice that phonemizes its text (the config's `espeak.voice`). */
  espeakVoice: string;
  /** The config's `language.code` (`en_US`). */
  language: string;
}

export const TONE_VOICE: ToneVoice = {
  sampleRate: 16000,
  samplesPerToken: 1600,
  baseHz: 200,
  stepHz: 10,
  espeakVoice: 'en-us',
  language: 'en_US',
};

/**
 * The phonemes the voice knows, each its own id, after pad `_` (0), bos `^` (1), eos `$` (2) and the space (3), as
 * Piper's own map begins: punctuation, Latin letters, and the IPA letters and marks espeak-ng writes for English.
 */
const PHONEMES = [
  ..."_^$ !'(),-.:;?",
  ...'abcdefghijklmnopqrstuvwxyz',
  ...'æçðøħŋœǀǁǂǃɐɑɒɓɔɕɖɗɘəɚɛɜɞɟɠɡɢɣɤɥɦɧɨɪɫɬɭɮɯɰɱɲɳɴɵɶɸɹɺɻɽɾʀʁʂʃʄʈʉʊʋʌʍʎʏʐʑʒʔʕʘʙʛʜʝʟʡʢʲˈˌːˑ˞βθχᵻⱱ',
  '\u0303',
];

/** The voice's phoneme ids, as its config's `phoneme_id_map` gives them (each a list of one id). */
export const phonemeIds = (): Record<string, number[]> =>
  Object.fromEntries(PHONEMES.map((symbol, id) => [symbol, [id]]));

/** The id of a phoneme of the map. */
export const idOf = (symbol: string): number => PHONEMES.indexOf(symbol);

/** The pitch a token speaks at. */
export const toneOf = (voice: ToneVoice, id: number): number => voice.baseHz + voice.stepHz * id;

/**
 * How many samples each token speaks, as a graph's nodes ending in `span` (int64): Piper's model takes the length
 * scale (1 / speed) as its scales' second value, Kokoro's the speed itself.
 */
const SPAN: Record<ToneKind, Buffer[]> = {
  piper: [
    node('Gather', ['scales', 'one'], ['length_scale'], [intAttribute('axis', 0)]),
    node('Mul', ['length_scale', 'per_token'], ['span_float']),
  ],
  kokoro: [
    node('Gather', ['speed', 'zero'], ['speed_value'], [intAttribute('axis', 0)]),
    node('Div', ['per_token', 'speed_value'], ['span_float']),
  ],
};

/** The inputs sherpa-onnx feeds each kind of model, in its order (the names are the models' own). */
export const MODEL_INPUTS: Record<ToneKind, Buffer[]> = {
  piper: [
    valueInfo(11, 'input', INT64, [1, 'phonemes']),
    valueInfo(11, 'input_lengths', INT64, [1]),
    valueInfo(11, 'scales', FLOAT, [3]),
  ],
  kokoro: [
    valueInfo(11, 'input', INT64, [1, 'phonemes']),
    valueInfo(11, 'style', FLOAT, [1, 'style_dim']),
    valueInfo(11, 'speed', FLOAT, [1]),
  ],
};

/** A tone model's kind: Piper's VITS inputs, or Kokoro's. */
export type ToneKind = 'piper' | 'kokoro';

/**
 * The model's bytes: a ModelProto of IR version 8 and opset 13, with `metadata` (Piper exports none; a Kokoro model
 * as sherpa-onnx publishes it has its own).
 */
export function toneModel(voice: ToneVoice = TONE_VOICE, kind: ToneKind = 'piper', metadata: Buffer[] = []): Buffer {
  const graph = [
    tensor('one', INT64, [], int64s([1])),
    tensor('zero', INT64, [], int64s([0])),
    tensor('flat', INT64, [1], int64s([-1])),
    tensor('audio_shape', INT64, [3], int64s([1, 1, -1])),
    tensor('per_token', FLOAT, [], floats([voice.samplesPerToken])),
    tensor('base_hz', FLOAT, [], floats([voice.baseHz])),
    tensor('step_hz', FLOAT, [], floats([voice.stepHz])),
    tensor('radians_per_sample', FLOAT, [], floats([(2 * Math.PI) / voice.sampleRate])),
    tensor('amplitude', FLOAT, [], floats([0.5])),
    // Samples per token: floor(samplesPerToken / speed).
    node('Shape', ['input'], ['input_shape']),
    node('Gather', ['input_shape', 'one'], ['tokens'], [intAttribute('axis', 0)]),
    ...SPAN[kind],
    node('Floor', ['span_float'], ['span_floor']),
    node('Cast', ['span_floor'], ['span'], [intAttribute('to', INT64)]),
    // Each sample's token, and its index within the token.
    node('Mul', ['tokens', 'span'], ['total']),
    node('Range', ['zero', 'total', 'one'], ['sample']),
    node('Div', ['sample', 'span'], ['token_of_sample']),
    node('Mul', ['token_of_sample', 'span'], ['token_start']),
    node('Sub', ['sample', 'token_start'], ['within']),
    node('Reshape', ['input', 'flat'], ['ids']),
    node('Gather', ['ids', 'token_of_sample'], ['id_of_sample'], [intAttribute('axis', 0)]),
    // sin(2π × (base + step × id) × within / rate) × amplitude
    node('Cast', ['id_of_sample'], ['id_float'], [intAttribute('to', FLOAT)]),
    node('Mul', ['id_float', 'step_hz'], ['above_base']),
    node('Add', ['above_base', 'base_hz'], ['hz']),
    node('Cast', ['within'], ['within_float'], [intAttribute('to', FLOAT)]),
    node('Mul', ['within_float', 'radians_per_sample'], ['radians_at_1hz']),
    node('Mul', ['radians_at_1hz', 'hz'], ['phase']),
    node('Sin', ['phase'], ['wave']),
    node('Mul', ['wave', 'amplitude'], ['loud']),
    node('Reshape', ['loud', 'audio_shape'], ['output']),
    bytesField(2, 'tone_per_token'),
    ...MODEL_INPUTS[kind],
    valueInfo(12, 'output', FLOAT, [1, 1, 'samples']),
  ];
  return modelOf(graph, 13, metadata);
}

/** The voice's config, as Piper's `.onnx.json` has it (the fields sherpa-onnx's conversion and mediaflow read). */
export function toneConfig(voice: ToneVoice = TONE_VOICE): Record<string, unknown> {
  const [family, region] = voice.language.split('_');
  return {
    audio: { sample_rate: voice.sampleRate, quality: 'low' },
    espeak: { voice: voice.espeakVoice },
    inference: { noise_scale: 0.667, length_scale: 1, noise_w: 0.8 },
    phoneme_type: 'espeak',
    phoneme_map: {},
    phoneme_id_map: phonemeIds(),
    num_symbols: PHONEMES.length,
    num_speakers: 1,
    speaker_id_map: {},
    language: { code: voice.language, family, region, name_english: 'Tone' },
    dataset: 'tone',
  };
}

/** Writes `<file>` (the model) and `<file>.json` (its config), as Piper publishes a voice. */
export async function writeToneVoice(file: string, voice: ToneVoice = TONE_VOICE): Promise<void> {
  await writeFile(file, toneModel(voice));
  await writeFile(`${file}.json`, `${JSON.stringify(toneConfig(voice), null, 2)}\n`);
}

/** A Kokoro model's speakers here, and the style vectors' shape its metadata gives (510 phonemes, 8 values). */
export const KOKORO_SPEAKERS = ['af_tone', 'bm_tone'];
const STYLE = [510, 1, 8];

/**
 * A Kokoro model folder as sherpa-onnx publishes one: `model.onnx` with its metadata (sample_rate, n_speakers,
 * has_espeak, voice, style_dim, speaker_names), `voices.bin` (a style vector per speaker and length, zeros here:
 * the tone model ignores them) and `tokens.txt`.
 */
export async function writeToneKokoro(dir: string, voice: ToneVoice = TONE_VOICE): Promise<void> {
  const metadata = {
    model_type: 'kokoro',
    sample_rate: voice.sampleRate,
    n_speakers: KOKORO_SPEAKERS.length,
    has_espeak: 1,
    voice: voice.espeakVoice,
    version: 1,
    style_dim: STYLE.join(','),
    speaker_names: KOKORO_SPEAKERS.join(','),
  };
  const entries = Object.entries(metadata).map(([key, value]) =>
    message(14, bytesField(1, key), bytesField(2, String(value))),
  );
  await writeFile(path.join(dir, 'model.onnx'), toneModel(voice, 'kokoro', entries));
  await writeFile(path.join(dir, 'voices.bin'), Buffer.alloc(KOKORO_SPEAKERS.length * STYLE[0]! * STYLE[2]! * 4));
  await writeFile(path.join(dir, 'tokens.txt'), tokensText());
}

/** tokens.txt's text for the phonemes above: `<phoneme> <id>` a line. */
export const tokensText = (): string => PHONEMES.map((symbol, id) => `${symbol} ${id}`).join('\n') + '\n';
