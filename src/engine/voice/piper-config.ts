/**
 * A Piper voice's config (`<voice>.onnx.json`, as Piper publishes it beside the model) read into what sherpa-onnx
 * needs: the metadata its VITS loader reads from the model (the keys sherpa-onnx's own scripts/piper/add_meta_data.py
 * writes) and a tokens.txt (`<phoneme> <id>` a line). Piper's models carry no metadata of their own.
 */

export interface PiperConfig {
  sampleRate: number;
  /** espeak-ng's voice that turns the text into phonemes (`en-us`). */
  espeakVoice: string;
  /** BCP 47 (`en-US`), from the config's language code (`en_US`), else espeak-ng's voice. */
  language: string;
  speakers: number;
  noiseScale: number;
  lengthScale: number;
  noiseW: number;
  /** tokens.txt's text. */
  tokens: string;
  /** The metadata sherpa-onnx reads. */
  metadata: Record<string, string | number>;
}

const bcp47 = (code: string): string => {
  try {
    return Intl.getCanonicalLocales(code.replace(/_/g, '-'))[0] ?? code;
  } catch {
    return code;
  }
};

/** Reads a Piper config's text; throws an Error saying what is missing or wrong. */
export function readPiperConfig(text: string): PiperConfig {
  let config: {
    audio?: { sample_rate?: unknown };
    espeak?: { voice?: unknown };
    language?: { code?: unknown };
    num_speakers?: unknown;
    inference?: { noise_scale?: unknown; length_scale?: unknown; noise_w?: unknown };
    phoneme_type?: unknown;
    phoneme_id_map?: Record<string, unknown>;
  };
  try {
    config = JSON.parse(text) as typeof config;
  } catch {
    throw new Error('its config is not JSON');
  }
  const rate = Number(config.audio?.sample_rate);
  if (!Number.isInteger(rate) || rate <= 0) throw new Error('its config has no audio.sample_rate');
  const espeakVoice = config.espeak?.voice;
  if (typeof espeakVoice !== 'string' || !/^[A-Za-z0-9-]+$/.test(espeakVoice))
    throw new Error('its config has no espeak.voice');
  if (config.phoneme_type !== undefined && config.phoneme_type !== 'espeak')
    throw new Error(`its phonemes are ${String(config.phoneme_type)}, and only espeak-ng's are read here`);
  const map = config.phoneme_id_map;
  if (!map || typeof map !== 'object') throw new Error('its config has no phoneme_id_map');
  const lines: string[] = [];
  for (const [phoneme, ids] of Object.entries(map)) {
    const id = Array.isArray(ids) ? Number(ids[0]) : Number(ids);
    // sherpa-onnx's tokens.txt holds one code point a line and no line break.
    if (phoneme === '\n' || [...phoneme].length !== 1 || !Number.isInteger(id)) continue;
    lines.push(`${phoneme} ${id}`);
  }
  for (const needed of ['_', '^', '$'])
    if (!(needed in map)) throw new Error(`its phoneme_id_map lacks ${needed} (pad, start, end)`);
  const speakers = Number(config.num_speakers ?? 1);
  const languageCode = typeof config.language?.code === 'string' ? config.language.code : espeakVoice;
  const number = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
  // Piper's configs say 22500 for some voices that speak at 22050 (sherpa-onnx's converter fixes it alike).
  const sampleRate = rate === 22500 ? 22050 : rate;
  return {
    sampleRate,
    espeakVoice,
    language: bcp47(languageCode),
    speakers,
    noiseScale: number(config.inference?.noise_scale, 0.667),
    lengthScale: number(config.inference?.length_scale, 1),
    noiseW: number(config.inference?.noise_w, 0.8),
    tokens: `${lines.join('\n')}\n`,
    metadata: {
      model_type: 'vits',
      comment: 'piper',
      language: bcp47(languageCode),
      voice: espeakVoice,
      version: 1,
      has_espeak: 1,
      n_speakers: speakers,
      sample_rate: sampleRate,
    },
  };
}
