import { writeFile } from 'node:fs/promises';
import {
  argv,
  CONTRACT_VERSION,
  definePlugin,
  mediaError,
  Param,
  recogniseSpeech,
  recognitionLanguage,
  speechModel,
  Type,
  WHISPER_LANGUAGES,
} from '../sdk.js';
import { assFields, assOptionsOf, checkAssOnly } from './captions/ass-fields.js';
import { TRANSCRIPT_FORMATS, transcriptDocument, wordsPerLineField } from './captions/transcript.js';

/** The recogniser's input, written by the first stage: whisper.cpp reads 16 kHz mono PCM. */
const AUDIO = 'speech.wav';

const PARAMS = Type.Object({
  media_url: Param.url('media', 'URL of the audio or video whose speech to transcribe'),
  language: Param.choice(['auto', ...WHISPER_LANGUAGES], {
    default: 'auto',
    description:
      "The spoken language, as an ISO 639-1 code (en, de, ja, ...), or auto to detect it (an English-only model's " +
      'auto is en)',
  }),
  format: Param.format(TRANSCRIPT_FORMATS, {
    default: 'srt',
    description:
      'srt, vtt (WebVTT) or ass (styled captions; takes the style fields below), txt (the lines as text) or json ' +
      '(segments and words with their times)',
  }),
  words_per_line: wordsPerLineField,
  ...assFields,
});

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'transcribe',
  path: '/transcribe/',
  summary: 'Turn the speech of an audio or video into captions (SRT, WebVTT, ASS), text or JSON, with whisper.cpp',
  description:
    "Recognises speech with whisper.cpp and the server's model (MEDIAFLOW_WHISPER_MODEL). Lines hold at most " +
    "words_per_line words and end early at sentence punctuation; each shows from its first word's start to its last " +
    "word's end, times clamped to the input's duration. format ass takes the caption style fields, and " +
    'highlight=word lights each word as it is said. The answer carries the whole text and the language.',
  params: PARAMS,
  answers: Type.Object({
    text: Type.String({ description: 'The whole transcript' }),
    language: Type.String({ description: 'The language: the one given, or the one detected' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}/transcript.${p.format}`, alsoAs: ['subtitle_file_url'] }),
  // Refused before anything is queued: no binding or model here (501), a bad model file (500), a language an
  // English-only model cannot give (400).
  checkParams: (params, settings) => {
    checkAssOnly(params);
    recognitionLanguage(params.language, speechModel(settings.speech));
  },
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (!media.facts.audio)
      throw mediaError(`Input ${media.source} has no audio stream: there is no speech to transcribe`);
  },
  // First ffmpeg decodes the sound to what whisper.cpp reads, then a step runs whisper.cpp in its child process and
  // writes the document.
  build: ({ params, inputs, output, input }) => {
    const media = inputs.media_url![0]!;
    const duration = media.facts.duration;
    return {
      // Capped at it: a header that claims less than the sound lasts does not get hours decoded and recognised.
      ...(duration ? { expectedSeconds: duration } : {}),
      commands: [argv(input(media), ['-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', AUDIO])],
      // Decoding takes a moment; recognition is the job's progress.
      share: 0.05,
      next: () => ({
        commands: [],
        steps: [
          {
            label: `whisper.cpp (child process): ${AUDIO} -> ${output}`,
            run: async (context) => {
              const recognised = await recogniseSpeech(context, AUDIO, params.language);
              // An empty caption file would read as a failure to write one: silence is told as such.
              if (recognised.words.length === 0) throw mediaError(`No speech was recognised in ${media.source}`);
              const { content, text } = transcriptDocument(recognised, {
                format: params.format,
                perLine: params.words_per_line,
                duration,
                ass: assOptionsOf(params),
              });
              await writeFile(context.path(output), content, 'utf8');
              context.answer({ text, language: recognised.language });
            },
          },
        ],
      }),
    };
  },
  message: () => 'Transcription completed successfully',
});
