import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setImmediate as turn } from 'node:timers/promises';
import { BINDINGS } from './choice.js';
import type { Recognise, Recognition } from './recogniser.js';

/**
 * @napi-rs/whisper 0.0.4: whisper.cpp 1.7.2 built with AVX2. Its full() runs on the JavaScript thread and answers with
 * the segments' texts run together; its callbacks are queued for that thread, so they run only once full() has
 * returned. So a recognition here gives no progress while it runs (only 0 before it and 100 after), and the
 * segments with their times come from the onNewSegment calls that follow full(): trimmed, they get their leading
 * spaces back from full()'s text. Nor can it turn off the temperature fallback (it has no temperature_inc).
 */
type Segment = { text: string; start: number; end: number };
interface Napi {
  Whisper: (new (
    model: string,
    options: { useGpu: boolean },
  ) => {
    full(params: object, samples: Float32Array): string;
    readonly fullLangId: number;
  }) & { lang(id: number): string | null };
  WhisperFullParams: new (strategy: 0) => object;
  decodeAudio(data: Uint8Array, name: string): Float32Array;
}

/**
 * The segments' texts as whisper.cpp wrote them: `trimmed` in order, each with the white space before it in `text`
 * (what full() answered: the untrimmed texts run together). Undefined until every one of `text`'s words is there.
 */
function withSpaces(text: string, trimmed: readonly Segment[]): Segment[] | undefined {
  const segments: Segment[] = [];
  let at = 0;
  for (const segment of trimmed) {
    if (segment.text === '') {
      segments.push(segment); // the <|0.00|> that opens a window's words: its space, if any, is the next word's
      continue;
    }
    const start = text.slice(at).search(/\S|$/) + at;
    if (!text.startsWith(segment.text, start)) return undefined;
    segments.push({ ...segment, text: text.slice(at, start + segment.text.length) });
    at = start + segment.text.length;
  }
  return text.slice(at).trim() === '' ? segments : undefined;
}

/** Loads the binding (throws when it is missing). */
export function load(): Recognise {
  const napi = createRequire(import.meta.url)(BINDINGS.napi.packages[0]!) as Napi;
  return async (model, audio, flags, progress): Promise<Recognition> => {
    if (flags.noFallback) throw new Error(`${BINDINGS.napi.package} cannot turn off the temperature fallback`);
    const whisper = new napi.Whisper(model, { useGpu: false });
    const samples = napi.decodeAudio(readFileSync(audio), audio);
    const params = new napi.WhisperFullParams(0); // greedy, as @fugood's
    Object.assign(params, { language: flags.language, printProgress: false });
    if (flags.threads) Object.assign(params, { nThreads: flags.threads });
    // split_on_word: one segment per word, not per token, so that no segment is a token holding part of a
    // character (the binding drops a text that is not whole UTF-8); words are what the recogniser makes of them.
    if (flags.words) Object.assign(params, { tokenTimestamps: true, maxLen: 1, splitOnWord: true });
    const trimmed: Segment[] = [];
    Object.assign(params, { onNewSegment: (segment: Segment) => trimmed.push(segment) });
    progress(0);
    const text = whisper.full(params, samples);
    // The queued calls run at the next turns of the event loop (up to 1000 a turn).
    let segments = withSpaces(text, trimmed);
    for (let turns = 0; !segments && turns < 1000; turns++) {
      await turn();
      segments = withSpaces(text, trimmed);
    }
    if (!segments) throw new Error(`whisper.cpp's segments do not make up its text: ${JSON.stringify(text)}`);
    progress(100);
    return {
      language: napi.Whisper.lang(whisper.fullLangId) ?? flags.language,
      // whisper.cpp's times are in 10 ms steps.
      segments: segments.map(({ start, end, text }) => ({ start: start * 10, end: end * 10, text })),
    };
  };
}
