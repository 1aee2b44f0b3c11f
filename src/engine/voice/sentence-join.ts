import { rm } from 'node:fs/promises';
import { mediaError } from '../errors.js';
import { PcmWriter, readPcm } from './wave-pcm.js';
import { placeWords } from './word-times.js';
import type { SentenceText, SpokenSentence } from './voice-types.js';
import type { TimedSentence } from '../contract/speech.js';

/**
 * The sentences an engine spoke, one WAV each, joined into one: each trimmed to its speech (the silence engines put
 * before and after it goes), faded in and out over a few milliseconds so that no cut clicks, and followed by a pause
 * of silence. Each sentence's times are then exact (where its samples land in the whole) and its words are placed
 * within them.
 */

/** A sample at least this loud (-50 dBFS) is speech: engines pad with digital silence or near it. */
const SPEECH_LEVEL = Math.round(32767 * 10 ** (-50 / 20));
/** Kept before the first and after the last loud sample, and faded over: the soft edge of a consonant. */
const EDGE_SECONDS = 0.01;
/** The pause between two sentences at speed 1; a faster voice pauses for less. */
const SENTENCE_PAUSE_SECONDS = 0.4;

export interface JoinOptions {
  /** The voice's speed: the pause between sentences is SENTENCE_PAUSE_SECONDS / speed. */
  speed: number;
  /** Refused (422) once the speech would last longer. */
  maxSeconds?: number;
}

/** The part of `samples` that is heard, with EDGE_SECONDS either side; the whole when none of it is. */
function heard(samples: Int16Array, edge: number): { from: number; to: number; loud: boolean } {
  let first = 0;
  while (first < samples.length && Math.abs(samples[first]!) < SPEECH_LEVEL) first++;
  if (first === samples.length) return { from: 0, to: samples.length, loud: false };
  let last = samples.length - 1;
  while (last > first && Math.abs(samples[last]!) < SPEECH_LEVEL) last--;
  return { from: Math.max(0, first - edge), to: Math.min(samples.length, last + 1 + edge), loud: true };
}

/** Fades `samples` in over its first `edge` samples and out over its last. */
function fadeEdges(samples: Int16Array, edge: number): void {
  const span = Math.min(edge, Math.floor(samples.length / 2));
  for (let i = 0; i < span; i++) {
    const gain = i / span;
    samples[i] = Math.round(samples[i]! * gain);
    samples[samples.length - 1 - i] = Math.round(samples[samples.length - 1 - i]! * gain);
  }
}

/**
 * Writes the spoken sentences, in order, into `output` (a WAV at their rate) and answers each sentence's times and
 * its words' (from the engine's word starts where given); removes each sentence's file once read. Every sentence
 * file must share one sample rate.
 */
export async function joinSentences(
  texts: readonly SentenceText[],
  spoken: readonly SpokenSentence[],
  output: string,
  options: JoinOptions,
): Promise<{ sentences: TimedSentence[]; duration: number; sampleRate: number; heard: boolean }> {
  let writer: PcmWriter | undefined;
  const sentences: TimedSentence[] = [];
  let anyHeard = false;
  try {
    for (const [i, sentence] of spoken.entries()) {
      const pcm = await readPcm(sentence.file);
      await rm(sentence.file, { force: true });
      writer ??= await PcmWriter.create(output, pcm.sampleRate);
      if (pcm.sampleRate !== writer.sampleRate)
        throw mediaError(`The voice changed its sample rate from ${writer.sampleRate} to ${pcm.sampleRate} Hz`);
      const rate = writer.sampleRate;
      if (i > 0) await writer.silence(Math.round((rate * SENTENCE_PAUSE_SECONDS) / options.speed));
      const edge = Math.round(rate * EDGE_SECONDS);
      const { from, to, loud } = heard(pcm.samples, edge);
      anyHeard ||= loud;
      const kept = pcm.samples.slice(from, to);
      fadeEdges(kept, edge);
      const start = writer.length / rate;
      const end = (writer.length + kept.length) / rate;
      if (options.maxSeconds !== undefined && end > options.maxSeconds)
        throw mediaError(
          `The speech would last longer than the limit of ${options.maxSeconds} s (MEDIAFLOW_MAX_DURATION): ` +
            'give less text, or a faster speed',
        );
      await writer.append(kept);
      const anchors = sentence.wordStarts?.map((time) => (time === null ? null : start + time - from / rate));
      const text = texts[i]!;
      sentences.push({ text: text.text, start, end, words: placeWords(text.words, start, end, anchors) });
    }
    if (!writer) throw mediaError('There is nothing to speak');
    const duration = writer.length / writer.sampleRate;
    await writer.close();
    return { sentences, duration, sampleRate: writer.sampleRate, heard: anyHeard };
  } catch (error) {
    await writer?.abandon().catch(() => undefined);
    await rm(output, { force: true });
    throw error;
  } finally {
    await Promise.all(spoken.map((sentence) => rm(sentence.file, { force: true })));
  }
}
