import { eventSpans } from '../captions/ass-merge.js';
import { FrameClock, type Span } from './clock.js';
import { textScript, type HeardSpeech } from './text-script.js';
import { isMediaVisual, type Clip, type Timeline } from './timeline.js';

/**
 * A timeline cut into scenes (docs/render.md): spans whose pictures are made apart, each with only its own inputs
 * open, and joined by stream copy. A cut is made on a frame where what two scenes draw is what one picture draws:
 * - no video, image or waveform clip runs across it, but for a picture laid over the frame (a logo: the same picture on
 *   every frame, or moving as its frame number says) and the earlier of two full-frame clips whose transition starts
 *   there (its tail is drawn, blended, in the next scene);
 * - no transition overlaps it;
 * - no line of text or captions is shown across it (a text clip is one line, captions are their cues), as each scene's
 *   script times its lines from the scene's start.
 * Among those frames, scenes are cut near every `seconds` of the timeline, as evenly as the frames allow, and again
 * where a scene would draw more than `media` different media files, which ffmpeg holds decoded at once: a short is
 * one scene. Where no frame allows a cut (one long video under captions of one line), the scene is as long as it.
 */

/** How long, and how many media files, a scene may take. */
export interface SceneLimits {
  /** Seconds of the timeline a scene lasts at most, where it can be cut (MEDIAFLOW_PART_SECONDS). */
  seconds: number;
  /** Different media files a scene draws at most, where it can be cut. */
  media: number;
}

/** A scene's longest, when the server does not say (MEDIAFLOW_PART_SECONDS' default). */
export const SCENE_SECONDS = 60;

/** The media files one command may draw (a short's six pictures and a logo), each held decoded while it runs. */
export const SCENE_MEDIA = 8;

/** Frames of the timeline no cut may fall strictly inside, but at `except`. */
interface Across {
  from: number;
  to: number;
  except?: number;
}

const fillsFrame = (clip: Clip) => isMediaVisual(clip) && 'fit' in clip.layout;

/** The frames the timeline may be cut on, ascending (see the module comment); never its first or its end. */
export function cutFrames(timeline: Timeline, heard: HeardSpeech = new Map()): number[] {
  const whole = { start: 0, end: timeline.output.duration };
  const clock = new FrameClock(timeline.output.fps, whole);
  const across: Across[] = [];
  const candidates = new Set<number>();
  // The earlier clip of each transition between two full-frame clips, and the frame the transition starts on.
  const tails = new Map<Clip, number>();
  const media = timeline.clips.filter(isMediaVisual);
  media.forEach((clip, i) => {
    const before = media[i - 1];
    if (!clip.transition || !before || before.track !== clip.track) return;
    const [from, to] = [clock.frame(clip.start), clock.frame(before.end)];
    if (to <= from) return;
    across.push({ from, to });
    if (fillsFrame(before) && fillsFrame(clip)) {
      candidates.add(from);
      tails.set(before, from);
    }
  });
  for (const clip of timeline.clips) {
    if (clip.type === 'audio' || clip.type === 'voice') continue;
    const [from, to] = [clock.frame(clip.start), clock.frame(clip.end)];
    candidates.add(from).add(to);
    const still = clip.type === 'image' && 'overlay' in clip.layout;
    if (still || clip.type === 'text' || clip.type === 'captions') continue;
    const except = tails.get(clip);
    across.push({ from, to, ...(except !== undefined ? { except } : {}) });
  }
  for (const line of eventSpans(textScript(timeline, whole, heard) ?? ''))
    across.push({ from: clock.frame(line.start), to: clock.frame(line.end) });
  return [...candidates]
    .filter((frame) => frame > 0 && frame < clock.frames)
    .filter((frame) => across.every(({ from, to, except }) => !(from < frame && frame < to) || frame === except))
    .sort((a, b) => a - b);
}

/**
 * The cuts among `cuts` that make scenes of at most `longest` frames of `total`, as even as they allow: each near an
 * equal share of what is left, the one before it when the one after would make its scene too long.
 */
function byLength(cuts: readonly number[], total: number, longest: number): number[] {
  const chosen: number[] = [];
  let last = 0;
  while (total - last > longest) {
    const target = last + (total - last) / Math.ceil((total - last) / longest);
    const before = cuts.filter((cut) => cut > last && cut <= target).at(-1);
    const after = cuts.find((cut) => cut > target);
    const pick =
      before === undefined
        ? after
        : after === undefined || after - last > longest || target - before <= after - target
          ? before
          : after;
    if (pick === undefined) break;
    chosen.push(pick);
    last = pick;
  }
  return chosen;
}

/** The media files drawn in frames [from, to): video and image clips', and the sound a waveform draws. */
function mediaIn(timeline: Timeline, clock: FrameClock, from: number, to: number): Set<string> {
  const files = new Set<string>();
  for (const clip of timeline.clips) {
    if (!(clock.frame(clip.start) < to && clock.frame(clip.end) > from)) continue;
    if (isMediaVisual(clip)) files.add(clip.media.file);
    if (clip.type === 'waveform') {
      const sound = timeline.clips.find((other) => other.id === clip.from);
      if (sound && 'media' in sound) files.add(sound.media.file);
    }
  }
  return files;
}

/**
 * The scenes of the timeline (see the module comment), in order: spans from 0 to its end, each starting and ending on
 * a frame of the output. `heard` holds the speech of the clips captions are made from, as the scripts are written.
 */
export function scenesOf(timeline: Timeline, limits: SceneLimits, heard: HeardSpeech = new Map()): Span[] {
  const whole = { start: 0, end: timeline.output.duration };
  const clock = new FrameClock(timeline.output.fps, whole);
  const total = clock.frames;
  const cuts = cutFrames(timeline, heard);
  const longest = Math.max(1, clock.frame(limits.seconds));
  const lengthCuts = byLength(cuts, total, longest);
  const chosen: number[] = [];
  // Within each scene of the right length, a new one wherever the next piece between two cuts would draw one media
  // file too many.
  [0, ...lengthCuts].forEach((start, i) => {
    const end = lengthCuts[i] ?? total;
    const bounds = [start, ...cuts.filter((cut) => cut > start && cut < end), end];
    let drawn = new Set<string>();
    bounds.slice(0, -1).forEach((from, j) => {
      const piece = mediaIn(timeline, clock, from, bounds[j + 1]!);
      const joined = new Set([...drawn, ...piece]);
      if (j > 0 && drawn.size > 0 && joined.size > limits.media) {
        chosen.push(from);
        drawn = piece;
      } else drawn = joined;
    });
    if (end < total) chosen.push(end);
  });
  const frames = [0, ...chosen, total];
  return frames.slice(0, -1).map((from, i) => {
    const to = frames[i + 1]!;
    return { start: clock.duration(from), end: to === total ? whole.end : clock.duration(to) };
  });
}
