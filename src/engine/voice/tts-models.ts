import path from 'node:path';
import { paramError } from '../errors.js';

/**
 * MEDIAFLOW_TTS_MODELS: the neural voices' models, a comma list of `<engine>:<name>=<source>` (docs/voice.md):
 *
 *   piper:amy=/srv/voices/en_US-amy-low.onnx
 *   piper:lessac=https://host/en_US-lessac-medium.onnx#sha256=<model's>+<config's>
 *   kokoro:en=/srv/kokoro-en-v0_19
 *   kokoro:en=https://host/kokoro-en-v0_19#sha256=<model.onnx's>+<voices.bin's>+<tokens.txt's>
 *
 * A source is a path, or an http(s) URL fetched once into `<data-dir>/voices/<engine>/<name>` and kept only when
 * every file's SHA-256 is the one given after `#sha256=` (one per file, in the order of MODEL_FILES, joined by `+`):
 * a file that cannot be checked is not fetched.
 */

export type ModelEngine = 'piper' | 'kokoro';

/**
 * The files a model's URL stands for: Piper's model and its config beside it (`<url>` and `<url>.json`), or a
 * Kokoro model's folder as sherpa-onnx publishes it (`<url>/model.onnx`, ...).
 */
export const MODEL_FILES: Record<ModelEngine, readonly string[]> = {
  piper: ['model.onnx', 'model.onnx.json'],
  kokoro: ['model.onnx', 'voices.bin', 'tokens.txt'],
};

/** One model of the setting. */
export interface ModelEntry {
  engine: ModelEngine;
  /** Its name: a Piper voice's id is `piper:<name>`; a Kokoro model's voices are its speakers. */
  name: string;
  /** `<engine>:<name>`, as `mediaflow voices fetch` takes it. */
  id: string;
  /** An absolute path, or a URL without its fragment. */
  source: string;
  /** For a URL: each file's URL and SHA-256, in the order of MODEL_FILES. */
  files?: Array<{ name: string; url: string; sha256: string }>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** The URL each file of a model at `base` is fetched from. */
function fileUrls(engine: ModelEngine, base: string): string[] {
  if (engine === 'piper') return [base, `${base}.json`];
  return MODEL_FILES.kokoro.map((file) => `${base.replace(/\/+$/, '')}/${file}`);
}

/** The models of MEDIAFLOW_TTS_MODELS's items; a malformed item is a 400 that says what a good one looks like. */
export function parseTtsModels(items: readonly string[]): ModelEntry[] {
  const entries: ModelEntry[] = [];
  for (const item of items) {
    const bad = (why: string) =>
      paramError(
        `MEDIAFLOW_TTS_MODELS: ${why} in \`${item}\` (each item is <engine>:<name>=<path or URL>, ` +
          'the engine piper or kokoro; a URL ends with #sha256=<hex>+<hex>...; docs/voice.md)',
      );
    const match = /^([a-z]+):([^=]+)=(.+)$/.exec(item.trim());
    if (!match) throw bad('no <engine>:<name>=');
    const [, engine, name, source] = match as unknown as [string, string, string, string];
    if (engine !== 'piper' && engine !== 'kokoro') throw bad(`unknown engine ${engine}`);
    if (!NAME.test(name)) throw bad(`the name ${name} is not letters, digits, '.', '-' or '_'`);
    const id = `${engine}:${name}`;
    if (entries.some((entry) => entry.id === id)) throw bad(`${id} is named twice`);
    if (!/^https?:\/\//i.test(source)) {
      entries.push({ engine, name, id, source: path.resolve(source) });
      continue;
    }
    const [base, fragment = ''] = source.split('#', 2) as [string, string?];
    const hashes = /^sha256=(.+)$/.exec(fragment)?.[1]?.toLowerCase().split('+') ?? [];
    const files = MODEL_FILES[engine];
    if (hashes.length !== files.length || !hashes.every((hash) => SHA256.test(hash)))
      throw bad(
        `a URL needs the SHA-256 of each of its files (${files.join(', ')}): ` +
          `#sha256=${files.map(() => '<hex>').join('+')}`,
      );
    const urls = fileUrls(engine, base);
    entries.push({
      engine,
      name,
      id,
      source: base,
      files: files.map((file, i) => ({ name: file, url: urls[i]!, sha256: hashes[i]! })),
    });
  }
  return entries;
}
