import type { Config } from '../config.js';
import type { Plan } from '../contract/plugin.js';
import type { Binaries } from '../exec/binaries.js';
import type { Slots } from '../exec/slots.js';
import type { InputCache } from '../inputs/input-cache.js';
import type { Logger } from '../logger.js';
import type { OutputStore, Workspaces } from '../storage/storage.js';
import type { Voices } from '../voice/voices.js';
import type { SpeechSettings } from '../contract/speech.js';
import type { TextWorkers } from '../subtitles/text-workers.js';
import type { Registry } from '../plugins/registry.js';
import type { PartRunner } from './fanout/part-runner.js';

/** Hears what the engine does, for metrics. */
export interface EngineObserver {
  jobEnded(operation: string, seconds: number, outcome: 'ok' | 'failed' | 'cancelled'): void;
  downloaded(bytes: number): void;
  /**
   * The plan a job is about to run, with each workspace input file and the source it came from (benchmarks replay it).
   */
  planned?(operation: string, plan: Plan, inputs: ReadonlyArray<{ file: string; source: string }>): void;
}

/** What an engine is made of (runtime.ts makes them); the parts of a job's run take what they use of it. */
export interface EngineDeps {
  config: Config;
  binaries: Binaries;
  registry: Registry;
  store: OutputStore;
  workspaces: Workspaces;
  /** ffmpeg slots shared by every operation of this process. */
  slots: Slots;
  logger: Logger;
  observer?: EngineObserver;
  /** Keeps downloaded inputs for later jobs; none means every input is downloaded every time. */
  cache?: InputCache;
  /** Where a split encode's parts run (docs/fanout.md); none: in this process's slots. */
  parts?: PartRunner;
  /** Text to speech, for a step's `speak` and the voice fields of a request (docs/voice.md). */
  voices: Voices;
  /** Speech recognition, for plugins' checks and steps (`speechModel`, `recogniseSpeech`). */
  speech: SpeechSettings;
  /** Threads for CPU-bound text work: subtitle inputs' decoding, a step's `offThread`. */
  textWorkers: TextWorkers;
}
