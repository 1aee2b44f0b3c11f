/**
 * Speech recognition in a process of its own: whisper.cpp through a prebuilt Node binding (bindings/choice.ts:
 * @fugood's CPU build, or @napi-rs/whisper's AVX2 build). It runs as a child because neither binding can stop a
 * recognition (@fugood's stop() never reaches whisper.cpp; @napi-rs's full() holds the JavaScript thread), so the only
 * sure way to cancel one, or end it at a time limit, is to kill the process that runs it.
 *
 *   node whisper-child.js --model <ggml file> --audio <16 kHz mono WAV> [--language en|auto|<code>] [--words]
 *                         [--threads <n>] [--no-fallback] [--binding auto|fugood|napi]
 *
 * Prints lines of JSON: {"progress": <percent>} as whisper.cpp starts each 30 s window (with @napi-rs: 0 before and
 * 100 after, as it cannot tell before it ends), then
 * {"language": "en", "segments": [{"start": <ms>, "end": <ms>, "text": " ..."}]}, and exits 0; 1 when recognition
 * fails; 3 when the binding is not installed (or does not load, or cannot run on this CPU), with the reason on
 * stderr. whisper.cpp's own log goes to stderr too.
 * `--words` gives one segment per token (@fugood) or per word (@napi-rs) with its own times (whisper.cpp's token
 * timestamps with max_len 1); `--no-fallback` keeps decoding at temperature 0, so that the same model and audio give
 * the same words every time (@fugood only: @napi-rs cannot, and fails). `--binding` is MEDIAFLOW_WHISPER_BINDING.
 */
import { parseArgs } from 'node:util';
import { chooseBinding, installCommand } from './bindings/choice.js';
import { BINDING_SETTINGS, type BindingSetting } from '../config-table.js';
import type { Recognise } from './bindings/recogniser.js';

/** The exit status when the binding is missing, does not load or cannot run here. */
const BINDING_MISSING = 3;

async function loadBinding(setting: BindingSetting): Promise<Recognise> {
  const chosen = chooseBinding(setting);
  if ('error' in chosen) {
    process.stderr.write(`${chosen.error}\n`);
    process.exit(BINDING_MISSING);
  }
  try {
    const module = (await import(`./bindings/${chosen.binding}.js`)) as { load(): Recognise };
    return module.load();
  } catch (error) {
    process.stderr.write(
      `whisper.cpp's binding ${chosen.binding} does not load (${(error as Error).message.split('\n')[0]}): ` +
        `${installCommand(chosen.binding)}\n`,
    );
    process.exit(BINDING_MISSING);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      audio: { type: 'string' },
      language: { type: 'string', default: 'en' },
      words: { type: 'boolean', default: false },
      threads: { type: 'string' },
      'no-fallback': { type: 'boolean', default: false },
      binding: { type: 'string', default: 'auto' },
    },
  });
  if (!values.model || !values.audio) throw new Error('--model and --audio are required');
  const setting = values.binding as BindingSetting;
  if (!BINDING_SETTINGS.includes(setting)) throw new Error(`--binding must be one of ${BINDING_SETTINGS.join(', ')}`);
  const recognise = await loadBinding(setting);
  const flags = {
    language: values.language,
    words: values.words,
    threads: values.threads ? Number(values.threads) : undefined,
    noFallback: values['no-fallback'],
  };
  const result = await recognise(values.model, values.audio, flags, (progress) =>
    process.stdout.write(`${JSON.stringify({ progress })}\n`),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
  // The bindings keep native handles open; the answer is out, so the process need not wait for them.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
