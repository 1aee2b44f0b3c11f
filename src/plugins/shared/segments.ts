import { argv } from '../../sdk.js';
import { seconds } from './timeline.js';

/**
 * A part length no input reaches (about 32 years): the segment muxer given no split time cuts every
 * 2 s by default, so a split into one part gives it this instead, and the part is the whole input.
 */
const NO_SPLIT_SECONDS = 1e9;

/**
 * Options of ffmpeg's segment muxer, which writes one file per part of the input into `pattern` (a
 * printf pattern with one number, counted from 1) in the container of `muxer` (a muxer's options,
 * then `-f <name>`): a new part begins at the first keyframe at or after each of `times` (none: one
 * part, the whole input). Every part's timestamps start at 0, picture and sound shifted alike, so each
 * part is in sync and starts on a keyframe.
 */
export function segmentArgs(muxer: readonly string[], times: readonly number[], pattern: string): string[] {
  const name = muxer.at(-1)!;
  // The muxer's own options (`-movflags +faststart`) as the segment muxer passes them on: `movflags=+faststart`.
  const options: string[] = [];
  for (let i = 0; i < muxer.length - 2; i += 2) options.push(`${muxer[i]!.slice(1)}=${muxer[i + 1]!}`);
  return argv(
    ['-f', 'segment', '-segment_format', name],
    options.length > 0 ? ['-segment_format_options', options.join(':')] : null,
    // A B-frame stream's first packets decode before time 0: the first part keeps that, as the others
    // do, rather than having its picture moved later than its sound.
    ['-avoid_negative_ts', 'disabled', '-reset_timestamps', '1', '-segment_start_number', '1'],
    times.length > 0 ? ['-segment_times', times.map(seconds).join(',')] : ['-segment_time', String(NO_SPLIT_SECONDS)],
    [pattern],
  );
}

/** The name the segment muxer gives part `index` (from 0) of `pattern`: `piece_%03d.mp4`, 0 → `piece_001.mp4`. */
export const segmentName = (pattern: string, index: number): string =>
  pattern.replace(/%(0\d)?d/, (_, width?: string) => String(index + 1).padStart(Number(width ?? 0), '0'));

/**
 * The pattern for the segment muxer that writes `outputs`, the files a builder must produce, in
 * order: their names are generated and numbered from 1 (`output-1.mp4`, `output-2.mp4`, ...).
 * Throws when they are not, rather than writing files the engine would not find.
 */
export function numberedPattern(outputs: readonly string[]): string {
  const pattern = (outputs[0] ?? '').replace(/1(?=(\.[A-Za-z0-9]+)?$)/, '%d');
  if (!pattern.includes('%d') || outputs.some((name, index) => name !== segmentName(pattern, index)))
    throw new Error(`Output names ${outputs.join(', ')} are not numbered from 1`);
  return pattern;
}
