import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MediaflowError, paramError } from '../errors.js';
import type { StepContext } from '../contract/plugin.js';
import { tidyStderr } from '../exec/ffmpeg.js';
import { publicText } from '../safe-text.js';
import { type BindingName, chooseBinding } from './bindings/choice.js';
import { modelFacts } from './model-file.js';
import { checkFetchedModel, ensureWhisperModel, isEnglishOnly, knownModel } from './models.js';
import type { SpeechSettings } from '../contract/speech.js';

/**
 * Speech recognition as plugins use it: whisper.cpp run in a child process (whisper-child.ts) by a plan's step,
 * inside the job's slot, killed on cancel and at the time limit (StepContext.spawn), with the model, binding and
 * threads of the engine that runs the job (SpeechSettings).
 */

/** From dist the child is plain JS; from src (tsx, vitest) it is TypeScript, run through tsx's loader. */
const fromSource = import.meta.url.endsWith('.ts');
const CHILD = new URL(fromSource ? './whisper-child.ts' : './whisper-child.js', import.meta.url);
/** tsx's loader by its URL: the child runs in the job's workspace, where a bare `tsx` would not be found. */
const sourceLoader = () => pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** The child's exit status when the binding is missing or does not load. */
const BINDING_MISSING = 3;

/**
 * The binding recognitions run with, or a 501 saying what to install: looked up (not loaded: only the child loads
 * it) once per process.
 */
function speechBinding(speech: SpeechSettings): BindingName {
  const chosen = chooseBinding(speech.binding);
  if ('error' in chosen) {
    throw new MediaflowError('MF_ERR_UNAVAILABLE', `Transcription is not available on this server: ${chosen.error}`);
  }
  return chosen.binding;
}

/**
 * The model to recognise with, a file or a known model's name (fetched when a recognition first needs it), and the
 * binding that runs it.
 */
type SpeechModel = { multilingual: boolean; binding: BindingName } & ({ file: string } | { name: string });

/**
 * The model to recognise with and whether it is multilingual: a 501 when transcription is not set up here, a 500 for
 * a bad file. A name's file is only stat'ed here (a size other than the published one is a 500): it is fetched, or
 * found fetched, by the recognition.
 */
export function speechModel(speech: SpeechSettings): SpeechModel {
  const binding = speechBinding(speech);
  const { model } = speech;
  if (!model) {
    throw new MediaflowError(
      'MF_ERR_UNAVAILABLE',
      'Transcription is not available on this server: no model is set (set MEDIAFLOW_WHISPER_MODEL, or serve ' +
        '--whisper-model, to a model name such as base.en, fetched on first use, or the path of a ggml model file)',
    );
  }
  const known = knownModel(model);
  if (known) {
    checkFetchedModel(known.name, speech.models.dataDir);
    return { name: known.name, multilingual: !isEnglishOnly(known.name), binding };
  }
  return { file: model, multilingual: modelFacts(model).multilingual, binding };
}

/**
 * What /health says of transcription: whether it works here, with which model (its file name only) and binding
 * (`fugood` or `napi`; null when none can run).
 */
export function speechStatus(speech: SpeechSettings): {
  available: boolean;
  model: string | null;
  binding: BindingName | null;
  error?: string;
} {
  const name = speech.model ? path.basename(speech.model) : null;
  const chosen = chooseBinding(speech.binding);
  const binding = 'binding' in chosen ? chosen.binding : null;
  try {
    speechModel(speech);
    return { available: true, model: name, binding };
  } catch (error) {
    return { available: false, model: name, binding, error: publicText((error as Error).message) };
  }
}

/**
 * The language to ask whisper.cpp for: `auto` detects it (multilingual models only: an English-only model is `en`);
 * another language than English on an English-only model is a 400, since whisper.cpp would answer English anyway.
 */
export function recognitionLanguage(language: string, facts: { multilingual: boolean }): string {
  if (facts.multilingual || language === 'en') return language;
  if (language === 'auto') return 'en';
  throw paramError(
    `The server's whisper model is English-only: \`language\` must be en or auto, not ${language} ` +
      '(a multilingual model, such as base or small, recognises other languages)',
  );
}

/** A word as whisper.cpp heard it, with its times in seconds. */
export interface HeardWord {
  start: number;
  end: number;
  word: string;
}

export interface Recognised {
  language: string;
  words: HeardWord[];
}

/** whisper.cpp's word for a window without speech. */
const BLANK_AUDIO = '[BLANK_AUDIO]';

/**
 * Words from whisper.cpp's tokens with their own times (one segment per token): a token that begins with a space
 * begins a word, any other (`flow` after ` media`, a full stop) ends the word before it; empty tokens (the
 * `<|0.00|>` that opens the first window) are dropped, and so is `[BLANK_AUDIO]`, whisper.cpp's word for a window
 * without speech, which no caption should show.
 */
export function wordsOf(tokens: ReadonlyArray<{ start: number; end: number; text: string }>): HeardWord[] {
  const words: HeardWord[] = [];
  for (const token of tokens) {
    if (token.text.trim() === '') continue;
    const last = words.at(-1);
    if (last && !/^\s/.test(token.text)) {
      last.word += token.text;
      last.end = token.end / 1000;
    } else words.push({ start: token.start / 1000, end: token.end / 1000, word: token.text.trim() });
  }
  return words.filter((heard) => heard.word !== BLANK_AUDIO);
}

/**
 * Recognises the speech of `audio` (a workspace WAV, 16 kHz mono) in a step, with its engine's model: progress as
 * whisper.cpp starts each 30 s window, words with their times. `language` is what the user asked (`auto` or a code).
 */
export async function recogniseSpeech(context: StepContext, audio: string, language: string): Promise<Recognised> {
  const { speech } = context;
  const facts = speechModel(speech);
  const file =
    'file' in facts
      ? facts.file
      : (await ensureWhisperModel(facts.name, speech.models, { signal: context.signal })).path;
  const args = [
    ...(fromSource ? ['--import', sourceLoader()] : []),
    ...[fileURLToPath(CHILD), '--model', file, '--audio', context.path(audio)],
    ...['--language', recognitionLanguage(language, facts), '--words', '--threads', String(speech.threads)],
    ...['--binding', facts.binding],
  ];
  type Answer = { language?: string; segments?: Array<{ start: number; end: number; text: string }> };
  let answer: Answer | undefined;
  const run = await context.spawn(process.execPath, args, {
    onLine: (line) => {
      let message: Answer & { progress?: number };
      try {
        message = JSON.parse(line) as Answer & { progress?: number };
      } catch {
        return; // not the child's protocol: told by its exit status below
      }
      if (typeof message.progress === 'number') context.progress(message.progress / 100);
      else answer = message;
    },
  });
  if (run.exitCode === BINDING_MISSING) throw new MediaflowError('MF_ERR_UNAVAILABLE', tidyStderr(run.stderr, 1));
  if (run.exitCode !== 0 || !answer?.segments) {
    throw new MediaflowError(
      'MF_ERR_INTERNAL',
      `Speech recognition failed: ${tidyStderr(run.stderr, 1) || `exit ${run.exitCode ?? run.signal}`}`,
    );
  }
  return { language: answer.language ?? language, words: wordsOf(answer.segments) };
}
