import type { Config } from '../config.js';
import { coresEach } from '../run/slots.js';
import type { BindingSetting } from './binding.js';
import type { ModelSettings } from './models.js';

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

export const speechSettings = (config: Config): SpeechSettings => ({
  model: config.whisperModel,
  binding: config.whisperBinding,
  threads: coresEach(config.concurrency),
  models: config,
});
