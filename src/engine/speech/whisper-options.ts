/**
 * What the recogniser asks whisper.cpp's binding for (transcribeFile's options), from the child's flags: one place,
 * so that what runs in the child and what the benchmark runs in its own process are the same recognition.
 */
export interface RecognitionFlags {
  language: string;
  /** One segment per token with its own times: whisper.cpp's token timestamps with max_len 1. */
  words: boolean;
  threads?: number;
  /** Decode at temperature 0 only (no retries at higher temperatures), so that a run repeats exactly. */
  noFallback: boolean;
}

export function transcribeOptions(flags: RecognitionFlags): Record<string, unknown> {
  const options: Record<string, unknown> = { language: flags.language };
  if (flags.words) Object.assign(options, { tokenTimestamps: true, maxLen: 1 });
  if (flags.threads) options.maxThreads = flags.threads;
  if (flags.noFallback) options.temperatureInc = 0;
  return options;
}
