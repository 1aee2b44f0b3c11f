import type { Config } from '../config.js';
import type { BindingSetting } from '../config-table.js';

/**
 * What a plugin sees of text to speech (docs/voice.md): the voices, what it may ask to be said, and what a synthesis
 * answers. The engines that speak are engine/voice/'s; a step reaches them through StepContext.speak. And the
 * settings of speech recognition a plugin is given (PluginSettings.speech, StepContext.speech) for speech/'s
 * functions that the SDK publishes.
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

/** The slowest and fastest speeds a voice is asked for. */
export const SPEED_RANGE = { min: 0.5, max: 2 } as const;

/** What to say, with which voice (its id; default: the default voice) and at which speed (1). */
export interface SpeechRequest {
  text: string;
  voice?: string;
  speed?: number;
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

/** The settings a model's fetch follows: where names come from, where they go, and the download rules of inputs. */
export type ModelSettings = Pick<
  Config,
  'dataDir' | 'whisperModelUrl' | 'allowPrivateUrls' | 'downloadTimeoutMs' | 'firstByteTimeoutMs'
>;

/**
 * Speech recognition as an engine's configuration sets it up: each engine has its own, given to its plugins' checks
 * (PluginSettings.speech) and steps (StepContext.speech), so two engines in one process recognise with their own.
 */
export interface SpeechSettings {
  /** MEDIAFLOW_WHISPER_MODEL: a known model's name (fetched on first use) or a ggml file's path; unset, none. */
  model: string | undefined;
  /** MEDIAFLOW_WHISPER_BINDING. */
  binding: BindingSetting;
  /** Threads each recognition gets: its job slot's share of the cores. */
  threads: number;
  /** How a known model's name is fetched, and where it is kept. */
  models: ModelSettings;
}
