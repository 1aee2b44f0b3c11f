import { createRequire } from 'node:module';
import { BINDINGS } from './choice.js';
import type { Recognise, RecognitionFlags } from './recogniser.js';

/** @fugood's native module: its WhisperContext, which the wrapper's initWhisper merely constructs. */
interface Native {
  WhisperContext: new (options: { filePath: string; useGpu?: boolean }) => {
    transcribeFile(
      file: string,
      options: Record<string, unknown>,
    ): { promise: Promise<{ language?: string; segments: Array<{ text: string; t0: number; t1: number }> }> };
  };
}

/** transcribeFile's options for the child's flags: exported so that the benchmark runs the same recognition. */
export function transcribeOptions(flags: RecognitionFlags): Record<string, unknown> {
  const options: Record<string, unknown> = { language: flags.language };
  if (flags.words) Object.assign(options, { tokenTimestamps: true, maxLen: 1 });
  if (flags.threads) options.maxThreads = flags.threads;
  if (flags.noFallback) options.temperatureInc = 0;
  return options;
}

/** Loads the binding (throws when it is missing); its recognition runs off the JavaScript thread, with progress. */
export function load(): Recognise {
  const native = createRequire(import.meta.url)(BINDINGS.fugood.packages[0]!) as Native;
  return async (model, audio, flags, progress) => {
    const context = new native.WhisperContext({ filePath: model, useGpu: false });
    const options = { ...transcribeOptions(flags), onProgress: progress };
    const result = await context.transcribeFile(audio, options).promise;
    return {
      language: result.language ?? flags.language,
      segments: result.segments.map((segment) => ({ start: segment.t0, end: segment.t1, text: segment.text })),
    };
  };
}
