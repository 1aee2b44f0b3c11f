import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runFfmpeg } from '../exec/ffmpeg.js';
import { runProgram } from '../exec/child-process.js';
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
 * flite, the voice inside ffmpeg where it is built with libflite (Debian's is): the `flite` source filter, reading
 * each sentence from a file of the run (the text never enters the filter graph). Its voices speak US English; it
 * reads numbers and abbreviations itself. It has no speed of its own, so `atempo` changes it (0.5 to 2, atempo's
 * own range), keeping the pitch. It gives no word times.
 */

/** Sentences one ffmpeg run speaks (one input and one output each): a long text costs one start per batch. */
const SENTENCES_PER_RUN = 32;
/** Listing the voices is one short ffmpeg run. */
const LIST_TIMEOUT_MS = 10_000;

/** Voice names as flite's filter lists them (`[Parsed_flite_0 @ 0x…] slt`). */
export function fliteVoicesOf(stderr: string): string[] {
  return [...stderr.matchAll(/^\[Parsed_flite_\d+ @ [^\]]+\] ([a-z0-9_]+)\s*$/gm)].map((match) => match[1]!);
}

export class FliteEngine implements VoiceEngine {
  readonly name = 'flite' as const;
  private found?: Promise<EngineFound>;

  constructor(
    private readonly ffmpeg: string,
    /** Milliseconds one ffmpeg run may take (MEDIAFLOW_JOB_TIMEOUT). */
    private readonly timeoutMs: number,
  ) {}

  status(): Promise<EngineFound> {
    this.found ??= this.lookUp();
    return this.found;
  }

  private async lookUp(): Promise<EngineFound> {
    const run = await runProgram(
      this.ffmpeg,
      ['-hide_banner', '-f', 'lavfi', '-i', 'flite=list_voices=1', '-f', 'null', '-'],
      { timeoutMs: LIST_TIMEOUT_MS },
    );
    const names = fliteVoicesOf(run.stderr);
    if (names.length === 0) {
      return engineMissing(this.name, 'ffmpeg here is built without libflite (Debian and Ubuntu build theirs with it)');
    }
    const voices = names.map((name) => ({ id: `flite:${name}`, engine: this.name, language: 'en-US', name }));
    return engineFound(this.name, voices);
  }

  async speak(
    voice: Voice,
    sentences: readonly SentenceText[],
    speed: number,
    run: SynthesisRun,
  ): Promise<SpokenSentence[]> {
    const spoken: SpokenSentence[] = [];
    for (let first = 0; first < sentences.length; first += SENTENCES_PER_RUN) {
      const batch = sentences.slice(first, first + SENTENCES_PER_RUN);
      const inputs: string[] = [];
      const outputs: string[] = [];
      for (const [k, sentence] of batch.entries()) {
        const index = first + k;
        // Generated names only: the filter's argument holds no character it would read as syntax.
        await writeFile(path.join(run.dir, `flite-${index}.txt`), sentence.text);
        inputs.push('-f', 'lavfi', '-i', `flite=textfile=flite-${index}.txt:voice=${voice.name}`);
        outputs.push(
          ...['-map', `${k}:a`],
          ...(speed === 1 ? [] : ['-af', `atempo=${speed}`]),
          ...['-c:a', 'pcm_s16le', '-ac', '1', `flite-${index}.wav`],
        );
        spoken.push({ file: path.join(run.dir, `flite-${index}.wav`) });
      }
      await runFfmpeg(this.ffmpeg, [...inputs, ...outputs], {
        cwd: run.dir,
        timeoutMs: this.timeoutMs,
        signal: run.signal,
      });
      run.progress?.(Math.min(1, (first + batch.length) / sentences.length));
    }
    return spoken;
  }
}
