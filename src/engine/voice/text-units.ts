import type { SentenceText, WordSpan } from './voice-types.js';

/**
 * Text cut into the sentences it is spoken in and the words its captions show, by the Unicode rules of ICU (Node's
 * Intl.Segmenter): full stops, question and exclamation marks of every script (`。`, `।`, `؟`), line ends, and words
 * of scripts written without spaces (Chinese, Japanese, Thai) by ICU's dictionaries. Nothing is rewritten: numbers,
 * abbreviations and URLs reach each engine as written, and each reads them its own way.
 */

/**
 * The longest sentence handed to an engine, in UTF-16 units: a longer run without a full stop is cut at its last
 * clause mark (or space) before this, so that one sentence never holds minutes of audio in memory, and a neural
 * voice's input stays within its model's context (Kokoro's is 510 phonemes).
 */
const LONGEST_SENTENCE = 400;

/**
 * Titles that a full stop ends without ending the sentence (`Dr. Smith`): ICU breaks after them when a capital
 * follows. A single letter (an initial, `J. Smith`) is one too.
 */
const TITLES = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'jr',
  'sr',
  'mt',
  'no',
  'vs',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'rev',
  'hon',
  'fig',
  'approx',
]);

const wordsOf = (text: string, segmenter: Intl.Segmenter): WordSpan[] =>
  [...segmenter.segment(text)]
    .filter((segment) => segment.isWordLike)
    .map((segment) => ({ text: segment.segment, index: segment.index }));

/** Whether a sentence as ICU cut it ends with a title or an initial, and so runs on into the next. */
function endsWithTitle(sentence: string, words: WordSpan[]): boolean {
  const last = words.at(-1);
  if (!last || !/\.\s*$/.test(sentence)) return false;
  // Only the full stop may follow the word (`Dr.`, not `Dr.)` or `Dr.".`).
  if (sentence.slice(last.index + last.text.length).trim() !== '.') return false;
  return TITLES.has(last.text.toLowerCase()) || /^\p{Lu}$/u.test(last.text);
}

/** `text` cut before LONGEST_SENTENCE at its last clause mark, else its last space, else anywhere. */
function cutLong(text: string): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > LONGEST_SENTENCE) {
    const head = rest.slice(0, LONGEST_SENTENCE);
    const clause = Math.max(...[...',;:，；：、'].map((mark) => head.lastIndexOf(mark)));
    const cut = clause > LONGEST_SENTENCE / 4 ? clause + 1 : head.lastIndexOf(' ') > 0 ? head.lastIndexOf(' ') + 1 : 0;
    // No space either (a script without them): a cut between characters, never inside a surrogate pair.
    const at =
      cut > 0 ? cut : /[\uDC00-\uDFFF]/.test(rest[LONGEST_SENTENCE]!) ? LONGEST_SENTENCE - 1 : LONGEST_SENTENCE;
    parts.push(rest.slice(0, at));
    rest = rest.slice(at);
  }
  return [...parts, rest];
}

/**
 * The sentences of `text` with their words, in order, trimmed; a sentence with no word (a lone dash, `...`) is
 * dropped, as nothing of it would be heard. `language` (a BCP 47 tag) picks ICU's rules for words.
 */
export function sentencesOf(text: string, language = 'en'): SentenceText[] {
  let locale: string;
  try {
    locale = Intl.getCanonicalLocales(language)[0] ?? 'en';
  } catch {
    locale = 'en';
  }
  const sentenceSegmenter = new Intl.Segmenter(locale, { granularity: 'sentence' });
  const wordSegmenter = new Intl.Segmenter(locale, { granularity: 'word' });
  const joined: string[] = [];
  let pending = '';
  for (const { segment } of sentenceSegmenter.segment(text)) {
    pending += segment;
    if (!endsWithTitle(pending.trimEnd(), wordsOf(pending, wordSegmenter))) {
      joined.push(pending);
      pending = '';
    }
  }
  if (pending) joined.push(pending);
  return joined
    .flatMap(cutLong)
    .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
    .map((sentence) => ({ text: sentence, words: wordsOf(sentence, wordSegmenter) }))
    .filter((sentence) => sentence.words.length > 0);
}

/** How long a word takes to say, as far as its text tells: its letters and digits (at least one). */
export const weightOf = (word: string): number => Math.max(1, word.match(/[\p{L}\p{N}]/gu)?.length ?? 0);
