import { writeFile } from 'node:fs/promises';
import {
  argv,
  audioFileEncoder,
  audioMuxerFor,
  CONTRACT_VERSION,
  definePlugin,
  Optional,
  Param,
  paramError,
  SPEECH_SPEED_RANGE,
  Type,
  type Static,
} from '../sdk.js';
import { assFields, assOptionsOf, checkAssOnly } from './captions/ass-fields.js';
import { spokenWords } from './captions/spoken-captions.js';
import { timedDocument, wordsPerLineField } from './captions/transcript.js';

/** What the voice writes, before it is encoded: a WAV of the workspace. */
const SPEECH = 'speech.wav';

const FORMATS = ['mp3', 'wav', 'm4a', 'ogg', 'opus'] as const;

const PARAMS = Type.Object({
  text: Param.text({
    description:
      'The text to speak, sentence by sentence, at most MEDIAFLOW_MAX_TEXT_BYTES bytes of UTF-8; numbers, ' +
      'abbreviations and URLs are read as the voice reads them',
    // The byte limits (MEDIAFLOW_MAX_TEXT_BYTES, MEDIAFLOW_BODY_LIMIT: 413s) are the ones that count by default.
    maxLength: 1024 ** 2,
  }),
  voice: Optional(
    Param.voice(
      'The voice, as <engine>:<name> (espeak:en-us, espeak:de, flite:slt, piper:<model>); GET /voices lists those ' +
        'installed. Default: the best installed (a neural voice where one is configured, else espeak-ng, else flite)',
    ),
  ),
  speed: Param.number({
    minimum: SPEECH_SPEED_RANGE.min,
    maximum: SPEECH_SPEED_RANGE.max,
    default: 1,
    description: "How fast the voice speaks: 1 is the voice's own pace, 2 twice as fast, 0.5 half",
  }),
  format: Param.format(FORMATS, { default: 'mp3', description: 'The audio format of the speech' }),
  captions: Param.choice(['none', 'srt', 'vtt', 'ass'], {
    default: 'none',
    description:
      'Also write captions of what is said, timed by where each word is spoken: srt, vtt (WebVTT) or ass (styled; ' +
      'takes the style fields below), answered as subtitle_file_url',
  }),
  words_per_line: wordsPerLineField,
  ...assFields,
});

type SpeakParams = Static<typeof PARAMS>;

/** The ffmpeg command that encodes the spoken WAV into the output's format. */
const encode = (format: (typeof FORMATS)[number], output: string): string[] =>
  argv(
    ['-protocol_whitelist', 'file', '-f', 'wav', '-i', SPEECH],
    ['-map', '0:a:0', '-map_metadata', '-1'],
    audioFileEncoder(format),
    // Opus encodes at 48 kHz only; the others keep the voice's own rate.
    format === 'opus' && ['-ar', '48000'],
    audioMuxerFor(format),
    [output],
  );

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'speak',
  path: '/speak/',
  summary: 'Speak a text with a voice of the server (text to speech), with captions of what is said',
  description:
    'The text is spoken sentence by sentence by the voice chosen (GET /voices lists them; docs/voice.md) and the ' +
    'sentences are joined with a short pause. With captions, each caption line holds at most words_per_line words, ' +
    "ends early at a sentence's end, and shows from where its first word is spoken to where its last ends; with " +
    'captions=ass, the caption style fields and highlight=word (each word lit while it is said) apply. The answer ' +
    'carries the duration in seconds and the voice that spoke.',
  params: PARAMS,
  answers: Type.Object({
    duration: Type.Number({ description: 'Seconds of speech', examples: [3.42] }),
    voice: Type.String({ description: 'The voice that spoke, as <engine>:<name>', examples: ['espeak:en-us'] }),
  }),
  output: (p) => ({
    field: 'output_file',
    path: `{id}/speech.${p.format}`,
    ...(p.captions !== 'none'
      ? { alongside: [{ field: 'subtitle_file_url', path: `{id}/speech.${p.captions}` }] }
      : {}),
  }),
  // Refused before anything is queued: style fields without ass captions, and a text with nothing to say.
  checkParams: (params: SpeakParams) => {
    checkAssOnly(params, 'captions');
    if (!/[\p{L}\p{N}]/u.test(params.text)) throw paramError('`text` has no words to speak');
  },
  // A step speaks (in the job's slot, killed on cancel) and writes the captions; then ffmpeg encodes the speech.
  build: ({ params, output, outputs }) => {
    const wav = params.format === 'wav';
    const captions = params.captions === 'none' ? undefined : params.captions;
    return {
      commands: [],
      steps: [
        {
          label: `voice ${params.voice ?? '(the default)'}: the text -> ${wav ? output : SPEECH}${
            captions ? `, captions -> ${outputs[1]}` : ''
          }`,
          run: async (context) => {
            const speech = await context.speak(
              { text: params.text, speed: params.speed, ...(params.voice ? { voice: params.voice } : {}) },
              wav ? output : SPEECH,
            );
            if (captions) {
              const { content } = timedDocument(spokenWords(speech.sentences), {
                format: captions,
                perLine: params.words_per_line,
                ass: assOptionsOf(params),
                language: speech.voice.language,
              });
              await writeFile(context.path(outputs[1]!), content, 'utf8');
            }
            context.answer({ duration: Math.round(speech.duration * 1000) / 1000, voice: speech.voice.id });
          },
        },
      ],
      // Speaking is the work; the encode after it is quick.
      ...(wav ? {} : { share: 0.9, next: () => ({ commands: [encode(params.format, output)] }) }),
    };
  },
  message: () => 'Speech generated successfully',
});
