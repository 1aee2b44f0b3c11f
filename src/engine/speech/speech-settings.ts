import type { Config } from '../config.js';
import { coresEach } from '../exec/slots.js';
import type { SpeechSettings } from '../contract/speech.js';

/** An engine's speech recognition as its configuration sets it up (SpeechSettings). */
export const speechSettings = (config: Config): SpeechSettings => ({
  model: config.whisperModel,
  binding: config.whisperBinding,
  threads: coresEach(config.concurrency),
  models: config,
});
