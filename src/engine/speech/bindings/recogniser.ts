/**
 * What each binding's module (fugood.ts, napi.ts) gives the recogniser's child: one way to run a recognition, so the
 * child stays the same whichever binding runs it.
 */
export interface RecognitionFlags {
  /** A language code, or `auto` to detect it. */
  language: string;
  /** One segment per token or word, with its own times: whisper.cpp's token timestamps with max_len 1. */
  words: boolean;
  threads?: number;
  /** Decode at temperature 0 only (no retries at higher temperatures), so that a run repeats exactly. */
  noFallback: boolean;
}

/** Times in milliseconds; a text keeps the space whisper.cpp's token begins with (` media` + `flow`). */
export interface Recognition {
  language: string;
  segments: Array<{ start: number; end: number; text: string }>;
}

/** Runs one recognition; `progress` (percent) as whisper.cpp starts each 30 s window, where the binding can tell. */
export type Recognise = (
  model: string,
  audio: string,
  flags: RecognitionFlags,
  progress: (percent: number) => void,
) => Promise<Recognition>;
