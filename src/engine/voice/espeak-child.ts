/**
 * espeak-ng through its own library (libespeak-ng.so.1, Debian's espeak-ng package) in a process of its own, for
 * what its command line does not give: the audio position of every word it speaks (espeakEVENT_WORD). The library is
 * called through koffi, an FFI whose npm package carries its prebuilt binaries (an optional package: espeak-engine.ts
 * runs the command line without it).
 *
 *   node espeak-child.js --voice <name> --words-per-minute <n> --sentences <json file>
 *
 * The JSON file lists the sentences as `[{"text": "...", "out": "<wav file>"}]`. Each is synthesised on its own into
 * its WAV (16-bit mono at espeak-ng's rate), then a line
 * `{"sentence": <index>, "rate": <samples per second>, "words": [[<position>, <sample>]]}` is printed: each word
 * event's position in the sentence (in code points, from 1, as espeak-ng counts) and the sample it starts at.
 * Exits 0 when all are written; 3 when koffi or the library is missing; 1 on any other failure.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { PACKAGE_MISSING } from './node-child.js';
import { writePcm } from './wave-pcm.js';

/** espeak-ng's constants (speak_lib.h). */
const AUDIO_OUTPUT_SYNCHRONOUS = 2;
const POS_CHARACTER = 1;
const CHARS_UTF8 = 1;
const RATE = 1;
const EVENT_LIST_TERMINATED = 0;
const EVENT_WORD = 1;

/** The names the library has on Linux and macOS. */
const LIBRARIES = ['libespeak-ng.so.1', 'libespeak-ng.so', 'libespeak-ng.1.dylib', 'libespeak-ng.dylib'];

interface Espeak {
  rate: number;
  /** Speaks `text`, calling `heard` with each chunk of samples and the word events that come with it. */
  speak: (text: string, heard: (samples: Int16Array, words: Array<[number, number]>) => void) => void;
  voice: (name: string) => boolean;
  speed: (wordsPerMinute: number) => void;
}

const missing = (why: string): never => {
  process.stderr.write(`${why}\n`);
  process.exit(PACKAGE_MISSING);
};

async function loadEspeak(): Promise<Espeak> {
  let koffi: (typeof import('koffi'))['default'];
  try {
    koffi = (await import('koffi')).default;
  } catch (error) {
    return missing(`koffi does not load (${(error as Error).message.split('\n')[0]}): npm install koffi`);
  }
  let lib: ReturnType<typeof koffi.load> | undefined;
  for (const name of LIBRARIES) {
    try {
      lib = koffi.load(name);
      break;
    } catch {
      // the next name
    }
  }
  if (!lib) return missing("espeak-ng's library (libespeak-ng.so.1) is not installed: apt-get install espeak-ng");
  const EVENT = koffi.struct('espeak_EVENT', {
    type: 'int',
    unique_identifier: 'uint',
    text_position: 'int',
    length: 'int',
    audio_position: 'int',
    sample: 'int',
    user_data: 'void *',
    id: koffi.union({ number: 'int', name: 'const char *', string: koffi.array('char', 8) }),
  });
  const callbackType = koffi.proto('int SynthCallback(short *wav, int numsamples, espeak_EVENT *events)');
  const initialize = lib.func('int espeak_Initialize(int output, int buflength, const char *path, int options)');
  const setCallback = lib.func('void espeak_SetSynthCallback(SynthCallback *callback)');
  const setVoice = lib.func('int espeak_SetVoiceByName(const char *name)');
  const setParameter = lib.func('int espeak_SetParameter(int parameter, int value, int relative)');
  const synth = lib.func(
    'int espeak_Synth(const void *text, size_t size, unsigned int position, int position_type, ' +
      'unsigned int end_position, unsigned int flags, void *unique_identifier, void *user_data)',
  );
  const rate = initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, null, 0) as number;
  if (rate <= 0) return missing(`espeak-ng's library did not start (${rate}): is its data installed?`);
  let listener: ((samples: Int16Array, words: Array<[number, number]>) => void) | undefined;
  const eventSize = koffi.sizeof(EVENT);
  const callback = koffi.register((wav: unknown, count: number, events: unknown) => {
    const samples =
      count > 0 && wav ? Int16Array.from(koffi.decode(wav, 'short', count) as number[]) : new Int16Array();
    const words: Array<[number, number]> = [];
    for (let i = 0; ; i++) {
      const event = koffi.decode(events, i * eventSize, EVENT) as {
        type: number;
        text_position: number;
        sample: number;
      };
      if (event.type === EVENT_LIST_TERMINATED) break;
      if (event.type === EVENT_WORD) words.push([event.text_position, event.sample]);
    }
    listener?.(samples, words);
    return 0;
  }, koffi.pointer(callbackType));
  setCallback(callback);
  return {
    rate,
    voice: (name) => setVoice(name) === 0,
    speed: (wordsPerMinute) => setParameter(RATE, wordsPerMinute, 0),
    speak: (text, heard) => {
      listener = heard;
      const bytes = Buffer.from(`${text}\0`, 'utf8');
      const status = synth(bytes, bytes.length, 0, POS_CHARACTER, 0, CHARS_UTF8, null, null) as number;
      listener = undefined;
      if (status !== 0) throw new Error(`espeak-ng could not speak a sentence (error ${status})`);
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { voice: { type: 'string' }, 'words-per-minute': { type: 'string' }, sentences: { type: 'string' } },
  });
  if (!values.voice || !values['words-per-minute'] || !values.sentences)
    throw new Error('--voice, --words-per-minute and --sentences are needed');
  const sentences = JSON.parse(await readFile(values.sentences, 'utf8')) as Array<{ text: string; out: string }>;
  const espeak = await loadEspeak();
  if (!espeak.voice(values.voice)) throw new Error(`espeak-ng has no voice ${values.voice}`);
  espeak.speed(Number(values['words-per-minute']));
  for (const [index, sentence] of sentences.entries()) {
    const chunks: Int16Array[] = [];
    const words: Array<[number, number]> = [];
    espeak.speak(sentence.text, (samples, events) => {
      chunks.push(samples);
      words.push(...events);
    });
    const samples = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
    let at = 0;
    for (const chunk of chunks) {
      samples.set(chunk, at);
      at += chunk.length;
    }
    await writePcm(sentence.out, { samples, sampleRate: espeak.rate });
    process.stdout.write(`${JSON.stringify({ sentence: index, rate: espeak.rate, words })}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
