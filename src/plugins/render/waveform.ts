import { decimal, type FrameClock } from './clock.js';
import { filterColour } from './colour.js';
import type { FrameSize } from './fit.js';
import type { FilterGraph } from './graph.js';
import type { InputList } from './input-list.js';
import type { SoundClip, WaveformClip } from './timeline.js';

/**
 * A waveform clip: the sound of the clip it names, drawn by showwaves as it plays (a line through the samples, or
 * bars centred on the middle), in its colour on a transparent box of its size, for the frames of it the span shows.
 */

/** showwaves' mode for each style. */
const MODES: Record<WaveformClip['style'], string> = { line: 'p2p', bars: 'cline' };

/** The waveform's box in pixels: shares of the frame, even (the chroma of 4:2:0 lines up). */
export function waveformSize(clip: WaveformClip, frame: FrameSize): FrameSize {
  const even = (share: number, side: number) => Math.max(2, 2 * Math.round((share * side) / 2));
  return { width: even(clip.width, frame.width), height: even(clip.height, frame.height) };
}

/** atempo's factors whose product is `speed`, each within the 0.5 to 100 it takes. */
function tempo(speed: number): string[] {
  const factors: string[] = [];
  let rest = speed;
  while (rest < 0.5) {
    factors.push('atempo=0.5');
    rest /= 0.5;
  }
  return rest === 1 ? factors : [...factors, `atempo=${decimal(rest)}`];
}

/**
 * The sound of `sound`'s clip over `heard` (timeline seconds), in mono, `delay` seconds late: the media time of each
 * moment after its trim and at its speed (a looping clip's input opened looping, its times running on).
 */
function heardSound(
  graph: FilterGraph,
  inputs: InputList,
  sound: SoundClip,
  heard: { start: number; end: number },
  delay: number,
): string {
  const speed = sound.type === 'video' ? sound.speed : 1;
  const trim = sound.type === 'voice' ? 0 : sound.trim;
  const media = (time: number) => decimal(trim + (time - sound.start) * speed);
  const looped = sound.type === 'audio' && sound.loop;
  const index = inputs.indexOf(sound.media, looped ? ['-stream_loop', '-1'] : []);
  return graph.chain(`${index}:a:0`, [
    `atrim=start=${media(heard.start)}:end=${media(heard.end)}`,
    'asetpts=PTS-STARTPTS',
    ...tempo(speed),
    'aformat=channel_layouts=mono',
    delay > 0 && `adelay=delays=${Math.round(delay * 1000)}:all=1`,
  ]);
}

/**
 * Adds the stream of the waveform's frames [from, to) of the span, drawing `sound`'s clip, and answers its label:
 * silence (a flat line) where that clip is not playing, or has no sound.
 */
export function waveformStream(
  graph: FilterGraph,
  inputs: InputList,
  clock: FrameClock,
  frame: FrameSize,
  clip: WaveformClip,
  sound: SoundClip,
  [from, to]: [number, number],
): string {
  const size = waveformSize(clip, frame);
  const seconds = clock.duration(to - from);
  // When the waveform's frames are on the timeline, and the part of them the sound plays in.
  const shown = { start: clock.span.start + clock.duration(from), end: clock.span.start + clock.duration(to) };
  const heard = { start: Math.max(shown.start, sound.start), end: Math.min(shown.end, sound.end) };
  const sourced =
    heard.end > heard.start && sound.media.facts.audio
      ? heardSound(graph, inputs, sound, heard, heard.start - shown.start)
      : graph.source(['anullsrc=r=48000:cl=mono']);
  const colour = filterColour(clip.color);
  return graph.chain(sourced, [
    `apad=whole_dur=${decimal(seconds)}`,
    `atrim=duration=${decimal(seconds)}`,
    `showwaves=s=${size.width}x${size.height}:mode=${MODES[clip.style]}:rate=${clock.rate}:colors=${colour}:draw=full`,
    `fps=${clock.rate}`,
    'format=yuva420p',
    'tpad=stop=-1:stop_mode=clone',
    `trim=end_frame=${to - from}`,
    'setpts=N',
  ]);
}
