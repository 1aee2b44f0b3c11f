import { writeFile } from 'node:fs/promises';
import {
  CONTRACT_VERSION,
  definePlugin,
  Optional,
  Param,
  paramError,
  Type,
  type Static,
  type TObject,
} from '../sdk.js';
import { toAss, type CueWord } from './shared/ass-captions.js';
import { captionStyleFields, captionStyleOf, colourParam } from './shared/caption-style.js';

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
/** The highlight colour when none is given: gold, clear on white text and on most pictures. */
const HIGHLIGHT = '#FFD700';
/** ICU's dictionary-based word breaks; one fixed locale, so the cues do not depend on the server's. */
const SEGMENTER = new Intl.Segmenter('en', { granularity: 'word' });

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

/** The fields that only an ASS file can carry. */
const ASS_ONLY = [...Object.keys(captionStyleFields), 'highlight', 'highlight_color'];

/** The caption style fields, and word highlighting, for an operation that can write ASS. */
export const assFields = {
  ...captionStyleFields,
  highlight: Optional(
    Param.choice(['word'], { description: 'format ass: word highlights each word of a cue in turn, karaoke-style' }),
  ),
  highlight_color: colourParam('the highlighted word (format ass with highlight=word; default #FFD700)'),
};

/** Style fields would be lost in silence in SRT and WebVTT, which carry none: a 400 when given with another format. */
export function checkAssOnly(params: Record<string, unknown> & { format: string }): void {
  const styled = ASS_ONLY.find((key) => params[key] !== undefined);
  if (styled && params.format !== 'ass')
    throw paramError(
      `Expected \`format\` to be ass when \`${styled}\` is given: ${params.format} files carry no styles`,
    );
}

/** The ASS options of `params`: its caption style, and the highlight colour with highlight=word. */
export const assOptionsOf = (params: Static<TObject<typeof assFields>>) => ({
  style: captionStyleOf(params),
  ...(params.highlight ? { highlight: params.highlight_color ?? HIGHLIGHT } : {}),
});

/** The operation's fields (also what `writeSubtitles` receives, validated). */
const PARAMS = Type.Object({
  text: Param.text({ description: 'The text to turn into subtitles', maxLength: 1_000_000 }),
  words_per_line: Param.integer({
    minimum: 1,
    maximum: 100,
    default: 8,
    description: 'Most words in one subtitle line',
  }),
  seconds_per_line: Param.integer({
    minimum: 1,
    maximum: 3600,
    default: 3,
    description: 'Seconds each subtitle line lasts',
  }),
  format: Param.format(['srt', 'vtt', 'ass'], {
    default: 'srt',
    description: 'Subtitle format: srt, vtt (WebVTT) or ass (styled; takes the style fields below)',
  }),
  ...assFields,
});

/**
 * Writes the subtitle document of `params` to `file`. Run in a worker thread (StepContext.offThread):
 * a megabyte of text makes tens of thousands of cues, seconds of CPU with word highlighting.
 */
export async function writeSubtitles(params: Static<typeof PARAMS>, file: string): Promise<void> {
  const { text, words_per_line: perLine, seconds_per_line: seconds } = params;
  const content =
    params.format === 'ass'
      ? toAss(cueWords(text, perLine), seconds, assOptionsOf(params))
      : (params.format === 'vtt' ? toVtt : toSrt)(cues(text, perLine), seconds);
  await writeFile(file, content, 'utf8');
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'generate-subtitles',
  path: '/generate-subtitles/',
  summary: 'Build an .srt file (or WebVTT, or styled ASS) from a block of text',
  description:
    'Cues hold at most words_per_line words and end early at sentence punctuation; each lasts ' +
    'seconds_per_line. Chinese, Japanese and Thai, written without spaces, are cut into words by Intl.Segmenter. ' +
    'format ass takes the caption style fields, and highlight=word: each word of a cue takes highlight_color ' +
    'in turn (ASS karaoke \\k tags), for a time in proportion to its length.',
  params: PARAMS,
  output: (p) => ({ field: 'subtitle_file_url', path: `{id}/generated_subtitles.${p.format}` }),
  checkParams: checkAssOnly,
  // No ffmpeg here: a step writes the output, in a worker thread (see writeSubtitles).
  build: ({ params, output }) => ({
    steps: [
      {
        label: `worker thread: subtitles -> ${output}`,
        run: (context) => context.offThread(new URL(import.meta.url), 'writeSubtitles', [params, context.path(output)]),
      },
    ],
    commands: [],
  }),
  message: () => 'Subtitle file generated successfully',
});
