import { readFile, writeFile } from 'node:fs/promises';
import type { Plan, Step } from '../../sdk.js';
import type { LoudnessMeasure } from '../shared/loudness-log.js';
import { GAIN_STEP_DB, gainRange, type Mp3Frame, mp3Frames, withGain } from './mp3-gain.js';

/**
 * normalize-audio's lossless path for an MP3 written as MP3: the gain in whole steps of 1.5 dB added to every
 * frame's `global_gain` (mp3-gain.ts), no decode and no re-encode, where such a gain reaches the target.
 */

/** Off the target by at most this, LU: a whole number of steps is within half a step (0.75 dB) of most targets. */
const LOUDNESS_TOLERANCE = 0.75;

/**
 * Room kept under the true-peak limit, dB, above the sample peak: the peaks between samples, which only a
 * 4x oversampled measure sees, are rarely more than a few tenths of a dB over the sample peak.
 */
const INTER_SAMPLE_MARGIN = 0.5;

/** An MP3 input and, once `readMp3`'s step has run, its frames and the range of their gains. */
export interface Mp3Reading {
  file: string;
  frames?: Mp3Frame[];
  gains?: { min: number; max: number };
}

/**
 * A step that reads the input's frames into `reading`, for the next stage to decide from (a stage's `next`
 * reads no file). A file this module does not handle (a CRC, a Layer II frame, junk) is left without frames.
 */
export function readMp3(reading: Mp3Reading): Step {
  return {
    label: `read the MP3 frames of ${reading.file}`,
    run: async (context) => {
      const data = await readFile(context.path(reading.file));
      const layout = mp3Frames(data);
      if (!('frames' in layout)) return;
      reading.frames = layout.frames;
      reading.gains = gainRange(data, layout.frames);
    },
  };
}

/**
 * The stage that writes `output` as the input with n steps of gain, where n steps bring the measured loudness
 * within LOUDNESS_TOLERANCE of the target, keep the sample peak INTER_SAMPLE_MARGIN under the true-peak limit and
 * every `global_gain` within 0..255; else undefined. Its answer's output loudness is computed, not measured: the
 * decoded sound is the input's times 2^(n/4) exactly, so its loudness is the input's plus n·1.50515 dB (a
 * measuring pass would double the cost of the whole operation).
 */
export function losslessGain(
  reading: Mp3Reading,
  measure: LoudnessMeasure,
  target: { loudness: number; truePeak: number },
  output: string,
): Plan | undefined {
  const { frames, gains } = reading;
  if (!frames || !gains) return undefined;
  const steps = Math.round((target.loudness - measure.integrated) / GAIN_STEP_DB);
  const gain = steps * GAIN_STEP_DB;
  if (Math.abs(measure.integrated + gain - target.loudness) > LOUDNESS_TOLERANCE) return undefined;
  // `truePeak` holds the sample peak here: the measure ran with `peak=sample`.
  if (measure.truePeak + gain > target.truePeak - INTER_SAMPLE_MARGIN) return undefined;
  if (gains.min + steps < 0 || gains.max + steps > 255) return undefined;
  return {
    commands: [],
    steps: [
      {
        label: `add ${steps} to every global_gain of ${reading.file} (${gain.toFixed(2)} dB) into ${output}`,
        run: async (context) => {
          const data = await readFile(context.path(reading.file));
          await writeFile(context.path(output), withGain(data, frames, steps));
        },
      },
    ],
    // To a hundredth: the gain is exact, the input's loudness as ebur128 logs it (to a tenth).
    answers: { loudness: { input: measure.integrated, output: Math.round((measure.integrated + gain) * 100) / 100 } },
  };
}
