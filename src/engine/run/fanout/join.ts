import { concatList, concatListArgs, DEMUXERS, lockedInputOptions } from '../../exec/input-policy.js';
import { argv } from '../../contract/plugin.js';

/** A part of an encode made in parts, as the join places it: its file, and its first frame's time on the output. */
export interface PlacedPart {
  file: string;
  /** Seconds on the output's clock. */
  at: number;
}

/** The join of parts: the concat demuxer's list, to write into the workspace as `list`, and the command reading it. */
export interface Join {
  list: string;
  text: string;
  command: string[];
}

/**
 * The stream copy that joins an encode's parts (docs/fanout.md): the parts, one after another through the concat
 * demuxer, each at its place, and the audio file, whole, into `output` with the muxer's options. Nothing is encoded
 * again. The list gives each part but the last the time from its first frame to the next part's, to the microsecond:
 * without it the concat demuxer takes a part's length from its MP4's movie header, which holds milliseconds, and at
 * 30000/1001 fps a part of 201 frames lasts 6.7067 s, read as 6.707, so every frame after it would be 0.3 ms late, a
 * lateness that grows join after join while the sound, encoded whole, stays where it is.
 */
export function joinParts(join: {
  parts: readonly PlacedPart[];
  list: string;
  audio?: string;
  muxer: readonly string[];
  output: string;
}): Join {
  const { parts, list, audio } = join;
  const entries = parts.map(({ file, at }, index) => {
    const next = parts[index + 1];
    return next === undefined ? { file } : { file, duration: Math.round((next.at - at) * 1e6) / 1e6 };
  });
  const lead = parts[0]?.at ?? 0;
  const command = argv(
    // The parts start at 0: a picture that starts after the sound starts as late in the output.
    lead > 0 && ['-itsoffset', lead.toFixed(6)],
    concatListArgs(list, 'video'),
    audio ? [...lockedInputOptions(DEMUXERS.audio), '-i', audio] : null,
    ['-map', '0:v:0'],
    audio ? ['-map', '1:a:0'] : null,
    ['-c', 'copy'],
    join.muxer,
    [join.output],
  );
  return { list, text: concatList(entries), command };
}
