/**
 * The shapes of text to speech (docs/voice.md): the engines, their voices, what one synthesis answers, and what an
 * engine does. Engines speak one sentence at a time; voices.ts joins the sentences and times the words.
 */

/** The engines, best first: the default voice is the first available engine's. */
export const ENGINE_NAMES = ['piper', 'kokoro', 'espeak', 'flite'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** One voice, as `GET /voices/` lists it. */
export interface Voice {
  /** `<engine>:<name>`: `flite:slt`, `espeak:en-us`, `piper:amy`, `kokoro:af_heart`. */
  id: string;
  engine: EngineName;
  /** The language it speaks, as a BCP 47 tag where the engine says (`en-US`, `de`, `cmn`). */
  language: string;
  name: string;
}

/** Whether an engine can speak here, and why not. */
export interface EngineStatus {
  engine: EngineName;
  available: boolean;
  /** Voices it offers here (0 when unavailable). */
  voices: number;
  /** Why it cannot speak, and what would make it: a package to install, a model to configure. */
  error?: string;
}

/** A word of the text, with the times it is spoken, in seconds from the audio's start. */
export interface TimedWord {
  text: string;
  start: number;
  end: number;
}

/** A sentence of the text: its times are exact (where its audio begins and ends), its words' as `wordTimes` says. */
export interface TimedSentence {
  text: string;
  start: number;
  end: number;
  words: TimedWord[];
}

/** What a synthesis wrote and when each sentence and word is spoken. */
export interface Speech {
  /** The WAV file written (16-bit mono PCM at the voice's own rate). */
  file: string;
  /** Seconds of audio. */
  duration: number;
  sampleRate: number;
  voice: Voice;
  sentences: TimedSentence[];
  /**
   * Where the words' times come from: `engine`, the engine's own word events (espeak-ng through its library); or
   * `proportional`, each word's share of its sentence's letters (a sentence's own times are exact either way).
   */
  wordTimes: 'engine' | 'proportional';
}

/** What a synthesis runs in: a job's workspace, cancellation and time limit. */
export interface SynthesisRun {
  /** A directory the synthesis may write its work files in (each removed before it returns). */
  dir: string;
  /** Aborted on cancel and at the time limit: every program the synthesis runs is then killed. */
  signal: AbortSignal;
  /** Hears how far the synthesis is, 0 to 1. */
  progress?: (ratio: number) => void;
}

/** A word as an engine is given it: its text and where it begins in its sentence, in UTF-16 units. */
export interface WordSpan {
  text: string;
  index: number;
}

/** A sentence as an engine is given it: its text and its words. */
export interface SentenceText {
  text: string;
  words: WordSpan[];
}

/** One sentence spoken by an engine: a WAV in the run's directory and, where the engine has them, word starts. */
export interface SpokenSentence {
  /** The WAV's absolute path (16-bit mono PCM). */
  file: string;
  /** Each word's start in seconds from the WAV's start, as the engine timed it; null for a word it gave no time. */
  wordStarts?: Array<number | null>;
}

/** What an engine's look-up found: whether it speaks here, and its voices. */
export interface EngineFound {
  status: EngineStatus;
  voices: Voice[];
}

/** An engine that speaks here with `voices` (`error`: what some of its models lack). */
export const engineFound = (engine: EngineName, voices: Voice[], error?: string): EngineFound => ({
  status: { engine, available: voices.length > 0, voices: voices.length, ...(error ? { error } : {}) },
  voices,
});

/** An engine that cannot speak here, and why. */
export const engineMissing = (engine: EngineName, error: string): EngineFound => engineFound(engine, [], error);

/** One engine of text to speech. */
export interface VoiceEngine {
  readonly name: EngineName;
  /** Whether it can speak here (looked up once per engine object), with its voices. */
  status(): Promise<EngineFound>;
  /** Speaks each sentence with `voice` at `speed` (0.5 to 2) into a WAV of its own under `run.dir`, in order. */
  speak(voice: Voice, sentences: readonly SentenceText[], speed: number, run: SynthesisRun): Promise<SpokenSentence[]>;
}
