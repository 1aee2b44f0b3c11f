/**
 * Neural voices (Piper's VITS models, Kokoro) spoken by sherpa-onnx's Node package in a process of its own: its
 * generate() cannot be stopped, and it ends the whole process on a model it cannot read, so it runs where a cancel
 * or the time limit can kill it, and where its end is only its own.
 *
 *   node sherpa-child.js --job <json file>
 *
 * The job is `{"model": <SherpaModel>, "speaker": <sid>, "speed": <0.5 to 2>, "threads": <n>,
 * "sentences": [{"text": "...", "out": "<wav file>"}]}`. Each sentence is spoken on its own into its WAV (16-bit
 * mono at the model's rate), then `{"sentence": <index>}` is printed. Exits 0 when all are written; 3 when
 * sherpa-onnx-node does not load; 1 on any other failure (sherpa-onnx's own exits, on a model without the metadata
 * it needs, give 255).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import type { SherpaModel } from './model-store.js';
import { PACKAGE_MISSING } from './node-child.js';
import { toInt16, writePcm } from './wave-pcm.js';

/** The little of sherpa-onnx-node's API used here (its package ships no TypeScript types). */
interface OfflineTts {
  sampleRate: number;
  generate(request: { text: string; sid: number; speed: number }): { samples?: Float32Array; sampleRate?: number };
}
type Sherpa = { OfflineTts: new (config: unknown) => OfflineTts };

interface Job {
  model: SherpaModel;
  speaker: number;
  speed: number;
  threads: number;
  sentences: Array<{ text: string; out: string }>;
}

function loadSherpa(): Sherpa {
  try {
    return createRequire(import.meta.url)('sherpa-onnx-node') as Sherpa;
  } catch (error) {
    process.stderr.write(
      `sherpa-onnx-node does not load (${(error as Error).message.split('\n')[0]}): npm install sherpa-onnx-node\n`,
    );
    process.exit(PACKAGE_MISSING);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { job: { type: 'string' } } });
  if (!values.job) throw new Error('--job is needed');
  const job = JSON.parse(await readFile(values.job, 'utf8')) as Job;
  const sherpa = loadSherpa();
  const tts = new sherpa.OfflineTts({
    model: { ...job.model, numThreads: job.threads, provider: 'cpu', debug: false },
    // Sentences come one at a time already.
    maxNumSentences: 1,
  });
  for (const [index, sentence] of job.sentences.entries()) {
    const audio = tts.generate({ text: sentence.text, sid: job.speaker, speed: job.speed });
    const samples = toInt16(audio.samples ?? new Float32Array());
    await writePcm(sentence.out, { samples, sampleRate: audio.sampleRate ?? tts.sampleRate });
    process.stdout.write(`${JSON.stringify({ sentence: index })}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
