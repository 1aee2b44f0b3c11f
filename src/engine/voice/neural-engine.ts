import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MediaflowError } from '../errors.js';
import { tidyStderr } from '../exec/ffmpeg.js';
import type { ModelStore, ReadyModel } from './model-store.js';
import { packageResolves } from '../exec/optional-packages.js';
import { PACKAGE_MISSING, runNodeChild } from './node-child.js';
import type { ModelEngine, ModelEntry } from './tts-models.js';
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
 * Piper and Kokoro, the neural voices: models the operator names in MEDIAFLOW_TTS_MODELS, spoken by sherpa-onnx in
 * a child (sherpa-child.ts). sherpa-onnx-node is optional, and too big for the production install (32 MB): where it
 * is missing, a neural voice is a 501 saying what to install. Text becomes phonemes through espeak-ng's rules, so
 * numbers and abbreviations are read as espeak-ng reads them; sherpa-onnx gives no word times.
 */

/** The version tested here, which `npm install` is told to take. */
export const SHERPA_PACKAGE = 'sherpa-onnx-node@1.13.8';

/** Whether sherpa-onnx's Node package and its native build for this platform are installed. */
export const sherpaInstalled = (): boolean =>
  packageResolves(
    'sherpa-onnx-node',
    `sherpa-onnx-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`,
  );

const sherpaMissing = (engine: ModelEngine) =>
  new MediaflowError(
    'MF_ERR_UNAVAILABLE',
    `${engine === 'piper' ? 'Piper' : 'Kokoro'} voices are not available on this server: sherpa-onnx is not ` +
      `installed (npm install ${SHERPA_PACKAGE}; docs/voice.md)`,
  );

export class NeuralEngine implements VoiceEngine {
  constructor(
    readonly name: ModelEngine,
    private readonly entries: readonly ModelEntry[],
    private readonly store: ModelStore,
    /** Threads each synthesis gets: the machine's cores shared among the job slots. */
    private readonly threads: number,
    private readonly installed: () => boolean = sherpaInstalled,
  ) {}

  /** Whether `id` names a voice of this engine's configured models, fetched or not (a Piper voice's id is known). */
  configures(id: string): boolean {
    return this.name === 'piper' && this.entries.some((entry) => entry.id === id);
  }

  /** The 501 of a voice of this engine where models are configured but sherpa-onnx is not installed. */
  runtimeMissing(): MediaflowError | undefined {
    return this.entries.length > 0 && !this.installed() ? sherpaMissing(this.name) : undefined;
  }

  async status(): Promise<EngineFound> {
    if (this.entries.length === 0)
      return engineMissing(this.name, `no ${this.name} model is configured (MEDIAFLOW_TTS_MODELS; docs/voice.md)`);
    if (!this.installed()) return engineMissing(this.name, sherpaMissing(this.name).message);
    const voices: Voice[] = [];
    const problems: string[] = [];
    for (const entry of this.entries) {
      try {
        const ready = await this.store.present(entry);
        if (!ready) problems.push(`${entry.id} is not fetched yet (mediaflow voices fetch ${entry.id})`);
        for (const voice of ready?.voices ?? [])
          voices.push({
            id: `${this.name}:${voice.name}`,
            engine: this.name,
            language: voice.language,
            name: voice.name,
          });
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    return engineFound(this.name, voices, problems.join('; '));
  }

  /** The model and speaker a voice of this engine stands for: fetched first when it is a URL's not fetched yet. */
  private async modelOf(voice: Voice, signal: AbortSignal): Promise<{ model: ReadyModel; speaker: number }> {
    for (const entry of this.entries) {
      const known = this.name === 'piper' && entry.name === voice.name;
      const model = known ? await this.store.ensure(entry, { signal }) : await this.store.present(entry, signal);
      const speaker = model?.voices.find((candidate) => candidate.name === voice.name)?.speaker;
      if (model && speaker !== undefined) return { model, speaker };
    }
    throw new MediaflowError('MF_ERR_PARAM', `Unknown voice '${voice.id}'`);
  }

  async speak(
    voice: Voice,
    sentences: readonly SentenceText[],
    speed: number,
    run: SynthesisRun,
  ): Promise<SpokenSentence[]> {
    if (!this.installed()) throw sherpaMissing(this.name);
    const { model, speaker } = await this.modelOf(voice, run.signal);
    const outs = sentences.map((_, i) => path.join(run.dir, `${this.name}-${i}.wav`));
    const job = path.join(run.dir, `${this.name}-job.json`);
    await writeFile(
      job,
      JSON.stringify({
        model: model.sherpa,
        speaker,
        speed,
        threads: this.threads,
        sentences: sentences.map((sentence, i) => ({ text: sentence.text, out: outs[i] })),
      }),
    );
    let done = 0;
    const child = await runNodeChild('./sherpa-child.js', ['--job', job], run, (line) => {
      if (/^\{"sentence":\d+\}$/.test(line)) run.progress?.(++done / sentences.length);
    });
    if (child.exitCode === PACKAGE_MISSING) throw sherpaMissing(this.name);
    if (child.exitCode !== 0 || done !== sentences.length) {
      // It failed before speaking anything: the model does not load, and a copy made of it is no use.
      if (done === 0) await this.store.discardPrepared(model.entry);
      throw new MediaflowError(
        'MF_ERR_INTERNAL',
        `The ${this.name} voice ${voice.id} failed: ` +
          `${tidyStderr(child.stderr, 2) || `sherpa-onnx exited with ${child.exitCode ?? child.signal}`}`,
      );
    }
    return outs.map((file) => ({ file }));
  }
}

/** The threads one synthesis gets: the cores shared among `concurrency` jobs at once. */
export const threadsPerSynthesis = (concurrency: number): number =>
  Math.max(1, Math.floor(os.availableParallelism() / concurrency));
