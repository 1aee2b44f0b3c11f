import { runFfprobe, type RunOptions } from '../../exec/ffmpeg.js';

/** The first video stream's frames as its packets list them, on the input's own clock (its start at 0). */
export interface VideoPackets {
  /** Every frame's presentation time in seconds, ascending. */
  times: number[];
  /** The times of the frames a decoder can start at (packets flagged K), ascending. */
  keyframes: number[];
  /** Where a keyframe's time is as ffprobe printed it, for a seek that lands on it exactly (origin 0 only). */
  printed: Map<number, string>;
}

/**
 * Lists the first video stream's packets: their times and which are keyframes, without decoding anything (a
 * tenth of a second for four minutes of video, where decoding each keyframe grows with the picture's size).
 * Packets the demuxer discards (an edit list's lead-in, flag D) are no frames of the output and are left out.
 */
export async function videoPackets(
  ffprobe: string,
  file: string,
  inputOptions: readonly string[],
  options: RunOptions,
): Promise<VideoPackets> {
  const stdout = await runFfprobe(
    ffprobe,
    [
      ...inputOptions,
      ...['-select_streams', 'v:0', '-show_entries', 'format=start_time:packet=pts_time,flags'],
      ...['-of', 'compact=p=1:nk=0', file],
    ],
    options,
  );
  return parsePackets(stdout);
}

/** Reads `videoPackets`' listing (`packet|pts_time=…|flags=K__` lines and one `format|start_time=…`). */
export function parsePackets(listing: string): VideoPackets {
  let origin = 0;
  const frames: Array<{ time: number; key: boolean; printed: string }> = [];
  for (const line of listing.split('\n')) {
    // ffprobe prints an empty line for a packet with side data: there is nothing on it.
    const fields = new Map(
      line
        .trim()
        .split('|')
        .slice(1)
        .map((field) => field.split('=', 2) as [string, string]),
    );
    if (line.startsWith('format|')) {
      const start = Number(fields.get('start_time'));
      if (Number.isFinite(start)) origin = start;
    } else if (line.startsWith('packet|')) {
      const printed = fields.get('pts_time') ?? '';
      const flags = fields.get('flags') ?? '';
      const time = Number(printed);
      if (printed === '' || !Number.isFinite(time) || flags.includes('D')) continue;
      frames.push({ time, key: flags.includes('K'), printed });
    }
  }
  frames.sort((a, b) => a.time - b.time);
  const printed = new Map<number, string>();
  const keyframes: number[] = [];
  for (const frame of frames.filter((f) => f.key)) {
    const time = frame.time - origin;
    keyframes.push(time);
    if (origin === 0) printed.set(time, frame.printed);
  }
  return { times: frames.map((frame) => frame.time - origin), keyframes, printed };
}
