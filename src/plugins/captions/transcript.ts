import { Param, type HeardWord, type Recognised } from '../../sdk.js';
import { joined, splitCues, srtDocument, vttDocument, words, type TimedCue } from './cue-lines.js';
import {
  assScript,
  karaokeText,
  plainText,
  type AssCaptionOptions,
  type AssEvent,
  type CueWord,
} from './ass-captions.js';

/**
 * A transcript's documents: the words whisper.cpp heard, with their times, grouped into lines as generate-subtitles
 * groups a text (at most `words_per_line` words, a line ending early at a sentence's end), each line shown from its
 * first word's start to its last word's end.
 */

/** A word of a line, with its times in seconds. */
export interface TimedWord extends CueWord {
  start: number;
  end: number;
}

export const TRANSCRIPT_FORMATS = ['srt', 'vtt', 'ass', 'txt', 'json'] as const;

/** The field of the most words a line holds, for an operation that writes timed words as captions. */
export const wordsPerLineField = Param.integer({
  minimum: 1,
  maximum: 100,
  default: 8,
  description: 'Most words in one caption line; a line also ends at the end of a sentence',
});
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/**
 * The heard words as words of lines: times clamped to the input's `duration` (whisper.cpp may place the last ones
 * past the end), and a heard word in a script written without spaces (Chinese, Thai) cut into its words as
 * generate-subtitles cuts them, its time shared among them by their lengths.
 */
export function timedWords(heard: readonly HeardWord[], duration: number | undefined): TimedWord[] {
  const clamp = (seconds: number) => Math.min(Math.max(0, seconds), duration ?? Infinity);
  return heard.flatMap((word) => {
    const parts = words(word.word);
    const start = clamp(word.start);
    const span = clamp(word.end) - start;
    const lengths = parts.map((part) => Array.from(part.text).length);
    const total = lengths.reduce((sum, length) => sum + length, 0);
    let before = 0;
    return parts.map((part, i) => {
      const from = start + (span * before) / total;
      before += lengths[i]!;
      // Each heard word begins a word of its own: a space before it (unless it is the first of a line).
      return { text: part.text, spaced: i === 0 || part.spaced, start: from, end: start + (span * before) / total };
    });
  });
}

/** A line with its times: from its first word's start to its last word's end. */
const cueOf = (line: readonly TimedWord[]): TimedCue => ({
  start: line[0]!.start,
  end: line.at(-1)!.end,
  text: joined(line),
});

/** Times in seconds as JSON writes them: to the millisecond. */
const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * The ASS events of lines: one event per line, each word highlighted (with `highlight`) from its start to the next
 * word's start, the last one to the line's end.
 */
export function lineEvents(lines: ReadonlyArray<readonly TimedWord[]>, options: AssCaptionOptions): AssEvent[] {
  return lines.map((line) => {
    const { start, end } = cueOf(line);
    // whisper.cpp's word times may overlap a little: a word never weighs less than nothing.
    const weights = line.map((word, i) => Math.max(0, (line[i + 1]?.start ?? end) - word.start));
    const text = options.highlight
      ? karaokeText(line, end - start, options.highlight, options.style.color ?? '#FFFFFF', weights)
      : plainText(line);
    return { start, end, text };
  });
}

/** How timed words become a document: its format, the most words a line, the ASS style, the language (for JSON). */
export interface TimedDocumentOptions {
  format: TranscriptFormat;
  perLine: number;
  ass: AssCaptionOptions;
  language: string;
}

/**
 * The document of a transcript in `format`: SRT, WebVTT or ASS captions; TXT, the lines' text, one per line; JSON,
 * `{language, text, segments: [{start, end, text, words: [{start, end, word}]}]}` with the lines as segments and
 * times in seconds.
 */
export function transcriptDocument(
  recognised: Recognised,
  options: Omit<TimedDocumentOptions, 'language'> & { duration: number | undefined },
): { content: string; text: string } {
  return timedDocument(timedWords(recognised.words, options.duration), { ...options, language: recognised.language });
}

/**
 * The document of words said at known times (heard by the recogniser, or spoken by a voice), grouped into lines of
 * at most `perLine` words as generate-subtitles groups a text, each line shown from its first word's start to its
 * last word's end; see `transcriptDocument` for the formats.
 */
export function timedDocument(
  words: readonly TimedWord[],
  options: TimedDocumentOptions,
): { content: string; text: string } {
  const lines = splitCues(words, options.perLine);
  const cues = lines.map(cueOf);
  const text = joined(lines.flat());
  switch (options.format) {
    case 'srt':
      return { content: srtDocument(cues), text };
    case 'vtt':
      return { content: vttDocument(cues), text };
    case 'ass':
      return { content: assScript(lineEvents(lines, options.ass), options.ass.style), text };
    case 'txt':
      return { content: cues.map((cue) => `${cue.text}\n`).join(''), text };
    case 'json': {
      const segments = lines.map((line, i) => ({
        start: ms(cues[i]!.start),
        end: ms(cues[i]!.end),
        text: cues[i]!.text,
        words: line.map((word) => ({ start: ms(word.start), end: ms(word.end), word: word.text })),
      }));
      return { content: `${JSON.stringify({ language: options.language, text, segments }, null, 2)}\n`, text };
    }
  }
}
