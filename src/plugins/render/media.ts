import { motionFilter } from '../shared/slideshow-motion.js';
import { decimal, type FrameClock } from './clock.js';
import { fitToFrame, flatten, layerFormat, type Bars, type FrameSize } from './fit.js';
import type { FilterGraph } from './graph.js';
import type { InputList } from './input-list.js';
import type { ImageClip, Overlay, VideoClip } from './timeline.js';

/**
 * The stream of one video or image clip, for the frames of it the span shows: decoded once (an image's one frame
 * scaled once and repeated by `loop`; a video opened at the media time it starts from, so nothing before is decoded),
 * laid out at the output's size, on the span's time base, exactly as many frames as it lasts, starting at 0.
 */

/** A video or image clip placed on the span's frames. */
export interface Placed {
  clip: VideoClip | ImageClip;
  /** The clip's first frame and the frame after its last, on the span's clock (outside the span when it runs over). */
  start: number;
  end: number;
  /** The frames of it in the span: [from, to). */
  from: number;
  to: number;
}

export interface StreamOptions {
  /**
   * The clip is the bottom layer: its bars and transparency are filled with this background colour, and the stream
   * is opaque. Absent: it is drawn over other layers, what is transparent in it stays so.
   */
  background?: string;
  /** Frames over which it fades in and out (a transition with a clip it is not joined to by xfade); 0 for none. */
  fadeIn: number;
  fadeOut: number;
  /** A stream of a run with transparency anywhere is in yuva420p throughout, so the run's clips join. */
  alpha: boolean;
}

/** Whether a picture's pixel format carries transparency (a palette may: a PNG's tRNS). */
export const hasAlpha = (pixFmt: string | undefined): boolean =>
  /^(yuva|gbrap|ya\d|rgba|bgra|argb|abgr|pal8)/.test(pixFmt ?? '');

/** Whether a clip's own picture can show what is below it: an image with transparency, or an overlay's opacity. */
export function isSeeThrough(clip: VideoClip | ImageClip): boolean {
  if ('overlay' in clip.layout && clip.layout.overlay.opacity < 1) return true;
  return clip.type === 'image' && hasAlpha(clip.media.facts.video?.pixFmt);
}

/** An overlay's width in pixels (even, so the chroma of 4:2:0 lines up); its height follows the picture's. */
export const overlayWidth = (overlay: Overlay, frame: FrameSize): number =>
  Math.max(2, 2 * Math.round((overlay.width * frame.width) / 2));

/** Seconds of a video read past what the clip needs, so the last frame it shows is decoded whatever the rounding. */
const READ_MARGIN = 0.25;

/** Adds the clip's stream and answers its label (see the module comment). */
export function mediaStream(
  graph: FilterGraph,
  inputs: InputList,
  clock: FrameClock,
  frame: FrameSize,
  placed: Placed,
  options: StreamOptions,
): string {
  const { clip } = placed;
  const frames = placed.to - placed.from;
  const alpha = options.alpha || options.fadeIn > 0 || options.fadeOut > 0;
  const decoded = clip.type === 'video' ? videoSource(graph, inputs, clock, placed) : imageSource(inputs, clip);
  const laidOut = layOut(graph, decoded, clip, frame, { ...options, alpha });
  const timed =
    clip.type === 'video'
      ? // Frames at the output's rate (repeated or dropped), the last one held should the media end a frame early.
        [`fps=${clock.rate}`, 'tpad=stop=-1:stop_mode=clone', `trim=end_frame=${frames}`, 'setpts=N']
      : [
          // The one scaled frame repeated: nothing is decoded or scaled again.
          `loop=loop=${frames - 1}:size=1`,
          `settb=${clock.timeBase}`,
          'setpts=N',
          // Marks the stream's rate (xfade joins only streams of one rate); the frames are already on it.
          `fps=${clock.rate}`,
          clip.motion !== 'none' && motionFilter(clip.motion, placed.from - placed.start, placed.end - placed.start),
        ];
  return graph.chain(laidOut, [
    ...timed,
    options.fadeIn > 0 && `fade=t=in:s=0:n=${options.fadeIn}:alpha=1`,
    options.fadeOut > 0 && `fade=t=out:s=${frames - options.fadeOut}:n=${options.fadeOut}:alpha=1`,
  ]);
}

/**
 * The video from the media time of the span's first frame of it: the input opened there (`-ss`, which decodes from
 * the keyframe before it and drops what comes before) for as long as the clip shows (`-t`), its speed applied.
 */
function videoSource(graph: FilterGraph, inputs: InputList, clock: FrameClock, placed: Placed): string {
  const clip = placed.clip as VideoClip;
  const from = clip.trim + clock.duration(placed.from - placed.start) * clip.speed;
  const seconds = clock.duration(placed.to - placed.from) * clip.speed + READ_MARGIN;
  const seek = from > 0 ? ['-ss', decimal(from)] : [];
  const index = inputs.indexOf(clip.media, [...seek, '-t', decimal(seconds)]);
  const speed = clip.speed === 1 ? 'setpts=PTS-STARTPTS' : `setpts=(PTS-STARTPTS)/${decimal(clip.speed)}`;
  return graph.chain(`${index}:v:0`, [speed]);
}

/** The image's first frame only (an animated picture's others are not drawn). */
function imageSource(inputs: InputList, clip: ImageClip): string {
  return `${inputs.indexOf(clip.media)}:v:0`;
}

/**
 * The picture scaled once to where it shows: filling the frame as its fit says, or in its overlay's box at its
 * opacity. On the bottom layer, whatever is transparent is flattened onto the background.
 */
function layOut(
  graph: FilterGraph,
  from: string,
  clip: VideoClip | ImageClip,
  frame: FrameSize,
  options: StreamOptions,
): string {
  const first = clip.type === 'image' ? graph.chain(from, ['trim=end_frame=1']) : from;
  const ownAlpha = isSeeThrough(clip);
  if ('overlay' in clip.layout) {
    const { overlay } = clip.layout;
    const alpha = options.alpha || ownAlpha;
    return graph.chain(first, [
      `scale=${overlayWidth(overlay, frame)}:-2`,
      'setsar=1',
      overlay.opacity < 1 && `format=rgba,colorchannelmixer=aa=${decimal(overlay.opacity)}`,
      `format=${layerFormat(alpha)}`,
    ]);
  }
  const { fit } = clip.layout;
  if (options.background === undefined)
    return fitToFrame(graph, first, fit, frame, { alpha: options.alpha || ownAlpha, bars: 'transparent' });
  const bars: Bars = { colour: options.background };
  if (!ownAlpha) return fitToFrame(graph, first, fit, frame, { alpha: false, bars });
  const fitted = fitToFrame(graph, first, fit, frame, { alpha: true, bars: 'transparent' });
  return flatten(graph, fitted, frame, options.background);
}
