import { CONTRACT_VERSION, definePlugin, Param, Type } from '../sdk.js';

/** Closing quotes and brackets that may follow a sentence's final punctuation. */
const CLOSERS = `"'”’)\\]»」』）〕】》〉`;
/** Sentence-ending punctuation (Latin, CJK full and half width, Arabic, Devanagari), then closers. */
const SENTENCE_END = new RegExp(`[.!?…‼⁇⁈⁉。！？｡．؟।][${CLOSERS}]*$`, 'u');
/** In text written without spaces (CJK), a sentence ends after its full stop and any closers. */
const CJK_BREAK = new RegExp(`(?<=[。！？｡][${CLOSERS}]*)(?![${CLOSERS}])`, 'u');

/** Words, with CJK sentences (written without spaces) also split after their full stops. */
function words(text: string): string[] {
  return text
    .split(/\s+/u)
    .flatMap((word) => word.split(CJK_BREAK))
    .filter(Boolean);
}

/** Cues of at most `perLine` words, each ending early at the end of a sentence. */
export function cues(text: string, perLine: number): string[] {
  const result: string[] = [];
  let current: string[] = [];
  for (const word of words(text)) {
    current.push(word);
    if (current.length >= perLine || SENTENCE_END.test(word)) {
      result.push(current.join(' '));
      current = [];
    }
  }
  if (current.length > 0) result.push(current.join(' '));
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
  description: 'Cues hold at most words_per_line words and end early at sentence punctuation; each lasts seconds_per_line.',
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
