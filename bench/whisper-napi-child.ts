/**
 * `@napi-rs/whisper` (whisper.cpp built with AVX) recognising in a process of its own, for bench/transcribe.ts, as
 * mediaflow's child does with the default binding:
 *
 *   node --import tsx bench/whisper-napi-child.ts <ggml model> <16 kHz mono WAV> <threads> <max tokens per window>
 *
 * Prints {"ms", "tokens"} (recognition alone, model loaded and audio decoded before) and exits; 3 when
 * the package is not installed. Its full() cannot turn off the temperature fallback (it has no temperature_inc), and
 * a random model's decoding at temperature 0 fails whisper.cpp's checks and is retried at higher temperatures, a
 * varying number of times. At temperature 1, the last of the fallback's, a window is decoded once: whisper.cpp then
 * samples 5 candidates a step (greedy best_of), so its time per token is an upper bound of greedy decoding's, with
 * `max tokens` capping each window's tokens.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Params = Record<string, unknown>;
interface NapiWhisper {
  Whisper: new (model: string, options: { useGpu: boolean }) => { full(params: Params, samples: Float32Array): string };
  WhisperFullParams: new (strategy: number) => Params;
  decodeAudio(data: Uint8Array, name: string): Float32Array;
}

const [model, audio, threads, maxTokens] = process.argv.slice(2);
let napi: NapiWhisper;
try {
  napi = createRequire(import.meta.url)('@napi-rs/whisper') as NapiWhisper;
} catch (error) {
  process.stderr.write(`@napi-rs/whisper is not usable: ${(error as Error).message.split('\n')[0]}\n`);
  process.exit(3);
}
const whisper = new napi.Whisper(model!, { useGpu: false });
const samples = napi.decodeAudio(readFileSync(audio!), audio!);
const params = new napi.WhisperFullParams(0); // greedy
// No callbacks (onEncoderBegin, onProgress): full() runs on this thread and they wait for it, so it never ends.
Object.assign(params, {
  nThreads: Number(threads),
  language: 'en',
  temperature: 1,
  maxTokens: Number(maxTokens),
  singleSegment: true,
});
const started = performance.now();
const text = whisper.full(params, samples);
const ms = Math.round(performance.now() - started);
// A random model's tokens are its vocabulary's fillers, `[12345]`.
const tokens = text.match(/\[\d+\]/g)?.length ?? 0;
process.stdout.write(`${JSON.stringify({ ms, tokens })}\n`);
process.exit(0);
