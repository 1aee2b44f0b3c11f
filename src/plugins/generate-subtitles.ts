import { CONTRACT_VERSION, definePlugin, Param, Type } from '../sdk.js';

/** Closing quotes and brackets that may follow a sentence's final punctuation. */
const CLOSERS = `"'”’)\\]»」』）〕】》〉`;
/** Sentence-ending punctuation (Latin, CJK full and half width, Arabic, Devanagari), then closers. */
const SENTENCE_END = new RegExp(`[.!?…‼⁇⁈⁉。！？｡．؟।][${CLOSERS}]*$`, 'u');
/**
 * Characters of scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer,
 * Myanmar), and CJK full stops: a token holding any of them is cut into words by `Intl.Segmenter`.
 */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}。！？｡]/u;
/** ICU's dictionary-based word breaks; one fixed locale, so the cues do not depend on the server's. */
const SEGMENTER = new Intl.Segmenter('en', { granularity: 'word' });

/** A word of a cue, and whether a space separated it from the word before it in the text. */
interface Word {
  text: string;
  spaced: boolean;
}

/**
 * The words of a token written without spaces. Punctuation and other non-word segments stay
 * with the word before them (a full stop with its sentence); those at the start (an opening
 * bracket) go with the word after them.
 */
function unspacedWords(token: string): Word[] {
  const result: Word[] = [];
  let pending = '';
  for (const { segment, isWordLike } of SEGMENTER.segment(token)) {
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

/** Words: tokens between spaces, and tokens written without spaces cut into their words. */
function words(text: string): Word[] {
  return text
    .split(/\s+/u)
    .filter(Boolean)
    .flatMap((token) => (UNSPACED.test(token) ? unspacedWords(token) : [{ text: token, spaced: true }]));
}

/** A cue's text: its words, with a space only where the text had one. */
const joined = (cue: Word[]): string => cue.map((word, i) => (i > 0 && word.spaced ? ` ${word.text}` : word.text)).join('');

/** Cues of at most `perLine` words, each ending early at the end of a sentence. */
export function cues(text: string, perLine: number): string[] {
  const result: string[] = [];
  let current: Word[] = [];
  for (const word of words(text)) {
    current.push(word);
    if (current.length >= perLine || SENTENCE_END.test(word.text)) {
      result.push(joined(current));
      current = [];
    }
  }
  if (current.length > 0) result.push(joined(current));
  return result;
}

/** `HH:MM:SS,mmm` */
export function srtTime(totalSeconds: number): string {
  const ms = Math.round(totalSeconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

/** A whole SRT document: numbered cues, one after the other, `seconds` each. */
export function toSrt(lines: string[], seconds: number): string {
  return lines.map((line, i) => `${i + 1}\n${srtTime(i * seconds)} --> ${srtTime((i + 1) * seconds)}\n${line}\n`).join('\n');
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'generate-subtitles',
  path: '/generate-subtitles/',
  summary: 'Build an .srt file from a block of text',
  description:
    'Cues hold at most words_per_line words and end early at sentence punctuation; each lasts seconds_per_line. Chinese, Japanese and Thai, written without spaces, are cut into words by Intl.Segmenter.',
  params: Type.Object({
    text: Param.text({ description: 'The text to turn into subtitles', maxLength: 1_000_000 }),
    words_per_line: Param.integer({ minimum: 1, maximum: 100, default: 8, description: 'Most words in one subtitle line' }),
    seconds_per_line: Param.integer({ minimum: 1, maximum: 3600, default: 3, description: 'Seconds each subtitle line lasts' }),
  }),
  output: () => ({ field: 'subtitle_file_url', path: '{id}/generated_subtitles.srt' }),
  // No ffmpeg here: the plan only writes the output file.
  build: ({ params, output }) => ({
    files: { [output]: toSrt(cues(params.text, params.words_per_line), params.seconds_per_line) },
    commands: [],
  }),
  message: () => 'Subtitle file generated successfully',
});
