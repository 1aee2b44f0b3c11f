import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { distance } from '../edit-distance.js';
import { MediaflowError, mediaError, paramError, problemsError } from '../errors.js';
import { EspeakEngine } from './espeak-engine.js';
import { FliteEngine } from './flite-engine.js';
import { ModelStore } from './model-store.js';
import { NeuralEngine, threadsPerSynthesis } from './neural-engine.js';
import { joinSentences } from './sentence-join.js';
import { sentencesOf } from './text-units.js';
import { parseTtsModels, type ModelEntry } from './tts-models.js';
import type { EngineStatus, SynthesisRun, VoiceEngine } from './voice-types.js';
import {
  ENGINE_NAMES,
  SPEED_RANGE,
  type EngineName,
  type Speech,
  type SpeechRequest,
  type Voice,
} from '../contract/speech.js';

/**
 * Text to speech, as the engine's front ends use it (docs/voice.md): the voices of every engine installed here, the
 * best of them by default, and a synthesis that speaks a text sentence by sentence into one WAV with the time of
 * every sentence and word. One object per engine (server, worker, CLI), made from its configuration: it keeps what
 * it looked up (the voices each engine has) and the model fetches under way, and nothing else.
 */

/** The settings text to speech follows. */
export type VoiceSettings = Pick<
  Config,
  | 'dataDir'
  | 'allowPrivateUrls'
  | 'downloadTimeoutMs'
  | 'firstByteTimeoutMs'
  | 'jobTimeoutMs'
  | 'maxDurationMs'
  | 'concurrency'
  | 'ttsModels'
>;

export interface VoicesDeps {
  settings: VoiceSettings;
  /** The ffmpeg that runs flite. */
  ffmpeg: string;
  /** espeak-ng's command (default: `espeak-ng` on PATH). */
  espeak?: string;
}

/** The voices each engine prefers as its default, where it has them. */
const PREFERRED: Partial<Record<EngineName, string>> = { espeak: 'en-us', flite: 'slt' };

export class Voices {
  /** The models of MEDIAFLOW_TTS_MODELS. */
  readonly models: readonly ModelEntry[];
  readonly store: ModelStore;
  private readonly engines: Record<EngineName, VoiceEngine>;

  constructor(private readonly deps: VoicesDeps) {
    this.models = parseTtsModels(deps.settings.ttsModels);
    this.store = new ModelStore(deps.settings);
    const threads = threadsPerSynthesis(deps.settings.concurrency);
    const neural = (name: 'piper' | 'kokoro') =>
      new NeuralEngine(
        name,
        this.models.filter((model) => model.engine === name),
        this.store,
        threads,
      );
    this.engines = {
      piper: neural('piper'),
      kokoro: neural('kokoro'),
      espeak: new EspeakEngine(deps.espeak),
      flite: new FliteEngine(deps.ffmpeg, deps.settings.jobTimeoutMs),
    };
  }

  /** Each engine, best first: whether it speaks here, with how many voices, or why not (for /health). */
  async status(): Promise<EngineStatus[]> {
    return Promise.all(ENGINE_NAMES.map(async (name) => (await this.engines[name].status()).status));
  }

  /** Every voice installed here, engine by engine, best engine first (GET /voices/). */
  async list(): Promise<Voice[]> {
    const found = await Promise.all(ENGINE_NAMES.map((name) => this.engines[name].status()));
    return found.flatMap((engine) => engine.voices);
  }

  /** The best voice installed: a neural one where a model is configured, else espeak-ng's, else flite's. */
  async defaultVoice(): Promise<Voice> {
    for (const name of ENGINE_NAMES) {
      const { voices } = await this.engines[name].status();
      const preferred = voices.find((voice) => voice.name === PREFERRED[name]) ?? voices[0];
      if (preferred) return preferred;
    }
    throw new MediaflowError(
      'MF_ERR_UNAVAILABLE',
      'Text to speech is not available on this server: install espeak-ng (apt-get install espeak-ng), or an ffmpeg ' +
        'built with libflite (docs/voice.md)',
    );
  }

  /**
   * The voice `id` names (`<engine>:<name>`), or the default one: a 400 naming the field for a voice not here (with
   * the closest ones; `at`: the JSON path of a document's field that gave it, told as a problem at that path), a 501
   * for a neural voice whose engine cannot run here.
   */
  async voice(id?: string, at?: string): Promise<Voice> {
    if (id === undefined || id === '') return this.defaultVoice();
    const [engineName] = id.split(':', 1);
    const engine = ENGINE_NAMES.find((name) => name === engineName);
    if (engine) {
      const target = this.engines[engine];
      // A neural voice cannot speak without its runtime, whichever it is: say what to install.
      const missing = target instanceof NeuralEngine ? target.runtimeMissing() : undefined;
      if (missing) throw missing;
      const found = (await target.status()).voices.find((voice) => voice.id === id);
      if (found) return found;
      // A configured Piper voice not fetched yet is fetched when it first speaks; its language is known then.
      if (target instanceof NeuralEngine && target.configures(id))
        return { id, engine, language: 'und', name: id.slice(engine.length + 1) };
    }
    const all = await this.list();
    const close = all
      .map((voice) => ({ id: voice.id, d: distance(id.toLowerCase(), voice.id.toLowerCase()) }))
      .filter((candidate) => candidate.d <= 2)
      .sort((a, b) => a.d - b.d)
      .slice(0, 3)
      .map((candidate) => candidate.id);
    const why =
      `${close.length > 0 ? `did you mean ${close.join(', ')}? ` : ''}` +
      'a voice is <engine>:<name>, and GET /voices/ (mediaflow voices list) lists those installed';
    if (at !== undefined) throw problemsError([{ path: at, error: `unknown voice '${id}': ${why}` }]);
    throw paramError(`Unknown voice '${id}' for \`voice\`: ${why}`);
  }

  /**
   * Speaks `request.text` into `output` (a WAV file; a path relative to `run.dir` is taken there), sentence by
   * sentence, and answers its duration and the times of every sentence and word. The caller runs it in a job's slot
   * and workspace: the programs it runs are killed when `run.signal` aborts, and the work files it makes in
   * `run.dir` are gone when it returns, whether it succeeded or not (`output` too when it failed).
   */
  async synthesise(request: SpeechRequest, output: string, run: SynthesisRun): Promise<Speech> {
    const speed = request.speed ?? 1;
    if (!(speed >= SPEED_RANGE.min && speed <= SPEED_RANGE.max))
      throw paramError(`\`speed\` must be from ${SPEED_RANGE.min} to ${SPEED_RANGE.max}, not ${speed}`);
    const voice = await this.voice(request.voice);
    const sentences = sentencesOf(request.text, voice.language === 'und' ? 'en' : voice.language);
    if (sentences.length === 0) throw paramError('`text` has no words to speak');
    const file = path.resolve(run.dir, output);
    const dir = path.join(run.dir, `voice-${randomUUID()}`);
    await mkdir(dir);
    try {
      const spoken = await this.engines[voice.engine].speak(voice, sentences, speed, {
        dir,
        signal: run.signal,
        progress: (ratio) => run.progress?.(ratio * 0.95),
      });
      const joined = await joinSentences(sentences, spoken, file, {
        speed,
        maxSeconds: this.deps.settings.maxDurationMs / 1000,
      });
      if (!joined.heard) {
        await rm(file, { force: true });
        throw mediaError(`The voice ${voice.id} made no sound for this text: does it speak its language?`);
      }
      run.progress?.(1);
      return {
        file,
        duration: joined.duration,
        sampleRate: joined.sampleRate,
        voice,
        sentences: joined.sentences,
        wordTimes: spoken.some((sentence) => sentence.wordStarts) ? 'engine' : 'proportional',
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
