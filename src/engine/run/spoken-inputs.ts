import { MediaflowError, problemsError, timeoutError, tooLargeError, type Problem } from '../errors.js';
import type { SpeechInput } from '../contract/plugin.js';
import type { Speech } from '../contract/speech.js';
import type { Voices } from '../voice/voices.js';

/**
 * Inputs a plugin asks the engine to speak rather than fetch (NamedInput.speak: a render's voice clips): checked with
 * the request, before anything is queued, and spoken in the job's input stage, one after the other, in the job's slot
 * (docs/voice.md). The synthesis runs its programs with the job's cancellation and time limits, and leaves nothing
 * but its WAV behind.
 */

/**
 * Refuses speech whose texts together are over MEDIAFLOW_MAX_TEXT_BYTES (413, naming the text that passes it), as
 * POST /speak/ refuses one text: every byte is work for the voice.
 */
export function checkSpeechBytes(speeches: readonly SpeechInput[], limit: number): void {
  let total = 0;
  for (const speech of speeches) {
    total += Buffer.byteLength(speech.text);
    if (total > limit)
      throw tooLargeError(
        `\`${speech.at}.text\` takes the text to speak past the limit of ${limit} bytes of UTF-8 ` +
          '(MEDIAFLOW_MAX_TEXT_BYTES)',
      );
  }
}

/**
 * Checks that each speech's voice is installed here: every unknown voice told at once, at its path, with the close
 * ones (a 400); a neural voice without its runtime is a 501 saying what to install.
 */
export async function checkVoices(voices: Voices, speeches: readonly SpeechInput[]): Promise<void> {
  const problems: Problem[] = [];
  for (const speech of speeches) {
    if (speech.voice === undefined || speech.voice === '') continue;
    try {
      await voices.voice(speech.voice, `${speech.at}.voice`);
    } catch (error) {
      if (!(error instanceof MediaflowError && error.code === 'MF_ERR_PARAM' && error.errors)) throw error;
      problems.push(...error.errors);
    }
  }
  if (problems.length > 0) throw problemsError(problems);
}

/** What a job's input stage needs to speak. */
export interface SpeakingRun {
  voices: Voices;
  /** The job's workspace: the synthesis's work files go there, and are gone when it returns. */
  dir: string;
  /** The job's cancellation and whole-job time limit. */
  signal: AbortSignal;
  /** MEDIAFLOW_JOB_TIMEOUT: one synthesis may take as long as one ffmpeg run. */
  timeoutMs: number;
}

/**
 * Speaks the inputs of one job one at a time, as its one slot allows: each call waits for the ones before it (a
 * failed one does not stop the others' turn; the job's failure does, through its signal).
 */
export function speaker(run: SpeakingRun): (speech: SpeechInput, output: string) => Promise<Omit<Speech, 'file'>> {
  let turn: Promise<unknown> = Promise.resolve();
  return (speech, output) => {
    const spoken = turn.then(async () => {
      run.signal.throwIfAborted();
      const limit = new AbortController();
      const timer = setTimeout(
        () => limit.abort(timeoutError('Speaking ran past its time limit (MEDIAFLOW_JOB_TIMEOUT) and was stopped')),
        run.timeoutMs,
      );
      try {
        const said = await run.voices.synthesise(
          { text: speech.text, ...(speech.voice ? { voice: speech.voice } : {}), speed: speech.speed ?? 1 },
          output,
          { dir: run.dir, signal: AbortSignal.any([run.signal, limit.signal]) },
        );
        // Not its path: the builder names files by the input's, and no answer may show the server's disk.
        return {
          duration: said.duration,
          sampleRate: said.sampleRate,
          voice: said.voice,
          sentences: said.sentences,
          wordTimes: said.wordTimes,
        };
      } catch (error) {
        // The time limit's own error, rather than what the killed program said.
        throw limit.signal.aborted ? limit.signal.reason : error;
      } finally {
        clearTimeout(timer);
      }
    });
    turn = spoken.catch(() => {});
    return spoken;
  };
}
