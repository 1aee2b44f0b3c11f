/**
 * Speech recognition in a process of its own: whisper.cpp through its prebuilt Node binding. It runs as a child
 * because the binding's stop() never reaches whisper.cpp (a stopped recognition's promise never settles), so the
 * only sure way to cancel one, or end it at a time limit, is to kill the process that runs it.
 *
 *   node whisper-child.js --model <ggml file> --audio <16 kHz mono WAV> [--language en|auto|<code>] [--words]
 *                         [--threads <n>] [--no-fallback]
 *
 * Prints lines of JSON: {"progress": <percent>} as whisper.cpp starts each 30 s window (and once at the end), then
 * {"language": "en", "segments": [{"start": <ms>, "end": <ms>, "text": " ..."}]}, and exits 0; 1 when recognition
 * fails; 3 when the binding is not installed (or does not load), with the reason on stderr. whisper.cpp's own log
 * goes to stderr too.
 * `--words` gives one segment per token with its own times (whisper.cpp's token timestamps with max_len 1);
 * `--no-fallback` keeps decoding at temperature 0, so that the same model and audio give the same words every time.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { INSTALL_BINDING, WHISPER_BINDING as BINDING } from './binding.js';
import { transcribeOptions } from './whisper-options.js';

interface Segment {
  text: string;
  t0: number;
  t1: number;
}

interface WhisperContext {
  transcribeFile(
    file: string,
    options: Record<string, unknown>,
  ): { promise: Promise<{ language?: string; segments: Segment[] }> };
}

type Binding = { WhisperContext: new (options: { filePath: string; useGpu?: boolean }) => WhisperContext };

function loadBinding(): Binding {
  try {
    return createRequire(import.meta.url)(BINDING) as Binding;
  } catch (error) {
    process.stderr.write(
      `whisper.cpp's binding ${BINDING} is not usable (${(error as Error).message.split('\n')[0]}): ` +
        `${INSTALL_BINDING}\n`,
    );
    process.exit(3);
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
    },
  });
  if (!values.model || !values.audio) throw new Error('--model and --audio are required');
  const binding = loadBinding();
  const context = new binding.WhisperContext({ filePath: values.model, useGpu: false });
  const options = {
    ...transcribeOptions({
      language: values.language,
      words: values.words,
      threads: values.threads ? Number(values.threads) : undefined,
      noFallback: values['no-fallback'],
    }),
    onProgress: (progress: number) => process.stdout.write(`${JSON.stringify({ progress })}\n`),
  };
  const result = await context.transcribeFile(values.audio, options).promise;
  const segments = result.segments.map((segment) => ({ start: segment.t0, end: segment.t1, text: segment.text }));
  process.stdout.write(`${JSON.stringify({ language: result.language, segments })}\n`);
  // The binding keeps native handles open; the answer is out, so the process need not wait for them.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
