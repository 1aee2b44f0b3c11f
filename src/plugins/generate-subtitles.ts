import { writeFile } from 'node:fs/promises';
import { CONTRACT_VERSION, definePlugin, Param, Type, type Static } from '../sdk.js';
import { toAss } from './captions/ass-captions.js';
import { assFields, assOptionsOf, checkAssOnly } from './captions/ass-fields.js';
import { cues, cueWords, toSrt, toVtt } from './captions/cue-lines.js';

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
  checkParams: (params) => checkAssOnly(params),
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
