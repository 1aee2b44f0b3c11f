import type { CueWord } from './ass-captions.js';

/**
 * Caption lines from words: at most so many words a line, a line ending early at the end of a sentence, in every
 * script (those written without spaces cut into words by Intl.Segmenter); and the SRT and WebVTT documents of timed
 * lines. generate-subtitles times its lines evenly, transcribe by when each word was said.
 */

/** Closing quotes and brackets that may follow a sentence's final punctuation. */
const CLOSERS = `"'”’)\\]»」』）〕】》〉`;
/** Sentence-ending punctuation (Latin, CJK full and half width, Arabic, Devanagari), then closers. */
const SENTENCE_END = new RegExp(`[.!?…‼⁇⁈⁉。！？｡．؟।][${CLOSERS}]*$`, 'u');
/**
 * Characters of scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer,
 * Myanmar), and CJK full stops: a token holding any of them is cut into words by `Intl.Segmenter`.
 */
const UNSPACED_SCRIPTS = ['Han', 'Hiragana', 'Katakana', 'Thai', 'Lao', 'Khmer', 'Myanmar'];
const UNSPACED = new RegExp(`[${UNSPACED_SCRIPTS.map((script) => `\\p{Script=${script}}`).join('')}。！？｡]`, 'u');
/**
 * ICU's dictionary-based word breaks; one fixed locale, so the cues do not depend on the server's. Made at first
 * use: making one loads ICU's word data, a cost every process that loads the plugins would pay.
 */
let segmenter: Intl.Segmenter | undefined;

/** A word of a cue, and whether a space separated it from the word before it in the text. */
type Word = CueWord;

/**
 * The words of a token written without spaces. Punctuation and other non-word segments stay
 * with the word before them (a full stop with its sentence); those at the start (an opening
 * bracket) go with the word after them.
 */
function unspacedWords(token: string): Word[] {
  const result: Word[] = [];
  let pending = '';
  segmenter ??= new Intl.Segmenter('en', { granularity: 'word' });
  for (const { segment, isWordLike } of segmenter.segment(token)) {
    const last = result.at(-1);
    if (isWordLike) {
      result.push({ text: pending + segment, spaced: result.length === 0 });
      pending = '';
    } else if (last) last.text += segment;
    else pending += segment;
  }
  if (pending) result.push({ text: pending, spaced: true });
  return result;
}

/** Whether a character is of a script written without spaces between words (or one of its full stops). */
export const isUnspaced = (character: string): boolean => UNSPACED.test(character);

/** Words: tokens between spaces, and tokens written without spaces cut into their words. */
export function words(text: string): Word[] {
  return text
    .split(/\s+/u)
    .filter(Boolean)
    .flatMap((token) => (UNSPACED.test(token) ? unspacedWords(token) : [{ text: token, spaced: true }]));
}

/** A cue's text: its words, with a space only where the text had one. */
export const joined = (cue: readonly Word[]): string =>
  cue.map((word, i) => (i > 0 && word.spaced ? ` ${word.text}` : word.text)).join('');

/** Words grouped into cues of at most `perLine` words, each ending early at the end of a sentence. */
export function splitCues<W extends Word>(items: readonly W[], perLine: number): W[][] {
  const result: W[][] = [];
  let current: W[] = [];
  for (const word of items) {
    current.push(word);
    if (current.length >= perLine || SENTENCE_END.test(word.text)) {
      result.push(current);
      current = [];
    }
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** The words of cues of at most `perLine` words, each ending early at the end of a sentence. */
export const cueWords = (text: string, perLine: number): Word[][] => splitCues(words(text), perLine);

/** Cues of at most `perLine` words, each ending early at the end of a sentence, as text. */
export const cues = (text: string, perLine: number): string[] => cueWords(text, perLine).map(joined);

/** `HH:MM:SS,mmm` */
export function srtTime(totalSeconds: number): string {
  const ms = Math.round(totalSeconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:` +
    `${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`
  );
}

/** A cue with its times, in seconds. */
export interface TimedCue {
  start: number;
  end: number;
  text: string;
}

/** Cues one after the other, `seconds` each. */
const evenly = (lines: string[], seconds: number): TimedCue[] =>
  lines.map((text, i) => ({ start: i * seconds, end: (i + 1) * seconds, text }));

/** A whole SRT document of numbered cues. */
export const srtDocument = (cues: readonly TimedCue[]): string =>
  cues.map((cue, i) => `${i + 1}\n${srtTime(cue.start)} --> ${srtTime(cue.end)}\n${cue.text}\n`).join('\n');

/** A whole SRT document: numbered cues, one after the other, `seconds` each. */
export const toSrt = (lines: string[], seconds: number): string => srtDocument(evenly(lines, seconds));

/**
 * A whole WebVTT document, cues as in SRT (times with a full stop). `&`, `<` and `>` are
 * written as entities: in cue text they would begin an entity or a tag (or a `-->`).
 */
export function vttDocument(cues: readonly TimedCue[]): string {
  const escape = (line: string) => line.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  const time = (seconds: number) => srtTime(seconds).replace(',', '.');
  const cueText = cues.map((cue) => `${time(cue.start)} --> ${time(cue.end)}\n${escape(cue.text)}\n`);
  return `WEBVTT\n\n${cueText.join('\n')}`;
}

/** A whole WebVTT document: cues one after the other, `seconds` each. */
export const toVtt = (lines: string[], seconds: number): string => vttDocument(evenly(lines, seconds));
