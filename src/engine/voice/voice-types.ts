import type { EngineName, Voice } from '../contract/speech.js';

/**
 * The shapes of text to speech inside the voice layer (docs/voice.md): what an engine does and is given, and what its
 * look-up finds; what a plugin sees of it (voices, a synthesis' answer) is contract/speech.ts. Engines speak one
 * sentence at a time; voices.ts joins the sentences and times the words.
 */

/** Whether an engine can speak here, and why not. */
export interface EngineStatus {
  engine: EngineName;
  available: boolean;
  /** Voices it offers here (0 when unavailable). */
  voices: number;
  /** Why it cannot speak, and what would make it: a package to install, a model to configure. */
  error?: string;
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
