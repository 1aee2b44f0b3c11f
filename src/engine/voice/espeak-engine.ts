import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MediaflowError } from '../errors.js';
import { tidyStderr } from '../exec/ffmpeg.js';
import { runProgram, spawnChild } from '../exec/child-process.js';
import { packageResolves } from '../exec/optional-packages.js';
import { PACKAGE_MISSING, runNodeChild } from './node-child.js';
import {
  engineFound,
  engineMissing,
  type EngineFound,
  type SentenceText,
  type SpokenSentence,
  type SynthesisRun,
  type VoiceEngine,
} from './voice-types.js';
import type { Voice } from '../contract/speech.js';

/**
 * espeak-ng (Debian's `espeak-ng` on PATH): about a hundred languages, each its own voice (`espeak:de`,
 * `espeak:cmn`), reading numbers, abbreviations and URLs by its own rules for each. With the optional package koffi
 * installed, it speaks through its library in a child (espeak-child.ts), which times every word; without it, through
 * its command line, one run per sentence, and the words are placed by their length.
 */

/** espeak-ng's speed at speed 1, in words per minute (its own default). */
const WORDS_PER_MINUTE = 175;
const LIST_TIMEOUT_MS = 10_000;

/** The voices `espeak-ng --voices` lists, but those of mbrola, whose separate voice files Debian does not install. */
export function espeakVoicesOf(listing: string): Array<{ name: string; language: string }> {
  const voices: Array<{ name: string; language: string }> = [];
  for (const line of listing.split('\n').slice(1)) {
    const [, name, , , file] = line.trim().split(/\s+/);
    if (!name || !file || file.startsWith('mb/')) continue;
    let language = name;
    try {
      language = Intl.getCanonicalLocales(name)[0] ?? name;
    } catch {
      // Not a well-formed tag (espeak-ng's own names are): its name says it.
    }
    if (!voices.some((voice) => voice.name === name)) voices.push({ name, language });
  }
  return voices;
}

/**
 * Each word's start from espeak-ng's word events (a position in code points from 1, and a sample): a word's first
 * event inside it (a number read as several words has several), null for a word without one.
 */
export function wordStartsOf(
  sentence: SentenceText,
  events: ReadonlyArray<[number, number]>,
  sampleRate: number,
): Array<number | null> {
  const codePointAt = (index: number) => [...sentence.text.slice(0, index)].length;
  const bounds = sentence.words.map((word) => codePointAt(word.index));
  return bounds.map((from, i) => {
    const to = i + 1 < bounds.length ? bounds[i + 1]! : Infinity;
    const inside = events.filter(([position]) => position - 1 >= from && position - 1 < to);
    return inside.length > 0 ? Math.min(...inside.map(([, sample]) => sample)) / sampleRate : null;
  });
}

export class EspeakEngine implements VoiceEngine {
  readonly name = 'espeak' as const;
  private found?: Promise<EngineFound>;
  constructor(
    private readonly command = 'espeak-ng',
    /** Whether to speak through the library: koffi is installed (and the library loaded when last tried). */
    private library = packageResolves('koffi'),
  ) {}

  status(): Promise<EngineFound> {
    this.found ??= this.lookUp();
    return this.found;
  }

  /** Where word times come from here: the library's events, or the words' lengths. */
  get wordTimes(): 'engine' | 'proportional' {
    return this.library ? 'engine' : 'proportional';
  }

  private async lookUp(): Promise<EngineFound> {
    const run = await runProgram(this.command, ['--voices'], { timeoutMs: LIST_TIMEOUT_MS });
    const found = run.exitCode === 0 ? espeakVoicesOf(run.stdout) : [];
    if (found.length === 0) {
      return engineMissing(this.name, 'espeak-ng is not installed (apt-get install espeak-ng)');
    }
    const voices = found.map(({ name, language }) => ({ id: `espeak:${name}`, engine: this.name, language, name }));
    return engineFound(this.name, voices);
  }

  async speak(
    voice: Voice,
    sentences: readonly SentenceText[],
    speed: number,
    run: SynthesisRun,
  ): Promise<SpokenSentence[]> {
    const rate = Math.round(WORDS_PER_MINUTE * speed);
    if (this.library) {
      const spoken = await this.speakThroughLibrary(voice, sentences, rate, run);
      if (spoken) return spoken;
    }
    return this.speakThroughCommand(voice, sentences, rate, run);
  }

  /** The library's way, with word times; undefined when koffi or the library does not load here. */
  private async speakThroughLibrary(
    voice: Voice,
    sentences: readonly SentenceText[],
    rate: number,
    run: SynthesisRun,
  ): Promise<SpokenSentence[] | undefined> {
    const list = path.join(run.dir, 'espeak-sentences.json');
    const outs = sentences.map((_, i) => path.join(run.dir, `espeak-${i}.wav`));
    await writeFile(list, JSON.stringify(sentences.map((sentence, i) => ({ text: sentence.text, out: outs[i] }))));
    const events: Array<{ rate: number; words: Array<[number, number]> }> = [];
    const child = await runNodeChild(
      './espeak-child.js',
      ['--voice', voice.name, '--words-per-minute', String(rate), '--sentences', list],
      run,
      (line) => {
        let message: { sentence?: number; rate?: number; words?: Array<[number, number]> };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          return; // not the child's protocol: told by its exit status below
        }
        if (typeof message.sentence !== 'number' || typeof message.rate !== 'number' || !Array.isArray(message.words))
          return;
        events[message.sentence] = { rate: message.rate, words: message.words };
        run.progress?.((message.sentence + 1) / sentences.length);
      },
    );
    if (child.exitCode === PACKAGE_MISSING) {
      this.library = false;
      return undefined;
    }
    if (child.exitCode !== 0 || events.length !== sentences.length)
      throw new MediaflowError(
        'MF_ERR_INTERNAL',
        `espeak-ng failed: ${tidyStderr(child.stderr, 1) || `exit ${child.exitCode ?? child.signal}`}`,
      );
    return sentences.map((sentence, i) => ({
      file: outs[i]!,
      wordStarts: wordStartsOf(sentence, events[i]!.words, events[i]!.rate),
    }));
  }

  /** The command line's way: one run per sentence, without word times. */
  private async speakThroughCommand(
    voice: Voice,
    sentences: readonly SentenceText[],
    rate: number,
    run: SynthesisRun,
  ): Promise<SpokenSentence[]> {
    const spoken: SpokenSentence[] = [];
    for (const [i, sentence] of sentences.entries()) {
      await writeFile(path.join(run.dir, `espeak-${i}.txt`), sentence.text);
      const args = ['-v', voice.name, '-s', String(rate), '-b', '1', '-w', `espeak-${i}.wav`, '-f', `espeak-${i}.txt`];
      const result = await spawnChild(this.command, args, { cwd: run.dir, signal: run.signal });
      if (result.exitCode !== 0)
        throw new MediaflowError(
          'MF_ERR_INTERNAL',
          `espeak-ng failed: ${tidyStderr(result.stderr, 1) || `exit ${result.exitCode ?? result.signal}`}`,
        );
      spoken.push({ file: path.join(run.dir, `espeak-${i}.wav`) });
      run.progress?.((i + 1) / sentences.length);
    }
    return spoken;
  }
}
