import { filterColour } from './colour.js';
import type { Fit } from './timeline.js';
import type { FilterGraph } from './graph.js';

/**
 * A picture laid over the whole frame as a clip's `fit` says, scaled once, at the output's size.
 */

export interface FrameSize {
  width: number;
  height: number;
}

/** How a contain fit's bars are filled: the background colour (the bottom layer), or left transparent (above it). */
export type Bars = { colour: string } | 'transparent';

/** The pixel format of a layer: with alpha when something shows through it, else without (cheaper to overlay). */
export const layerFormat = (alpha: boolean) => (alpha ? 'yuva420p' : 'yuv420p');

/** A contain-blur background is blurred this much smaller, then scaled up: the blur costs 1/64 of a full frame's. */
const BLUR_SHRINK = 8;

/** `scale` to cover or fit inside the frame, keeping the picture's aspect ratio. */
const scaleKeeping = ({ width, height }: FrameSize, mode: 'increase' | 'decrease') =>
  `scale=${width}:${height}:force_original_aspect_ratio=${mode}`;

/** Scaled to cover the frame and cropped around the centre. */
const cover = (size: FrameSize) => [scaleKeeping(size, 'increase'), `crop=${size.width}:${size.height}`];

/**
 * Adds the filters that make the picture `from` fill the frame as `fit` says, and answers its label: in yuva420p when
 * `alpha` (the picture's own transparency kept, and a contain fit's transparent bars), else in yuv420p.
 */
export function fitToFrame(
  graph: FilterGraph,
  from: string,
  fit: Fit,
  size: FrameSize,
  options: { alpha: boolean; bars: Bars },
): string {
  const format = `format=${layerFormat(options.alpha)}`;
  switch (fit) {
    case 'cover':
      return graph.chain(from, [...cover(size), 'setsar=1', format]);
    case 'stretch':
      return graph.chain(from, [`scale=${size.width}:${size.height}`, 'setsar=1', format]);
    case 'contain': {
      const colour = options.bars === 'transparent' ? 'black@0' : filterColour(options.bars.colour, { opaque: true });
      const pad = `pad=${size.width}:${size.height}:(ow-iw)/2:(oh-ih)/2:color=${colour}`;
      return graph.chain(from, [scaleKeeping(size, 'decrease'), format, pad, 'setsar=1']);
    }
    case 'contain-blur':
      return containBlur(graph, from, size, format);
  }
}

/**
 * The picture letterboxed on a blurred, enlarged copy of itself: the copy covers a frame BLUR_SHRINK times smaller, is
 * blurred there and scaled up, and the picture, scaled to fit, is laid over its centre.
 */
function containBlur(graph: FilterGraph, from: string, size: FrameSize, format: string): string {
  const [copy, picture] = graph.split(from, 2) as [string, string];
  const small = {
    width: Math.max(8, 2 * Math.round(size.width / BLUR_SHRINK / 2)),
    height: Math.max(8, 2 * Math.round(size.height / BLUR_SHRINK / 2)),
  };
  // A radius a tenth of the small frame's side: wide enough to lose the detail, within what boxblur allows.
  const radius = Math.max(1, Math.floor(Math.min(small.width, small.height) / 10));
  const blurred = graph.chain(copy, [
    ...cover(small),
    'format=yuv420p',
    `boxblur=luma_radius=${radius}:luma_power=2`,
    `scale=${size.width}:${size.height}`,
    'setsar=1',
  ]);
  const fitted = graph.chain(picture, [scaleKeeping(size, 'decrease'), format]);
  return graph.chain(
    [blurred, fitted],
    ['overlay=x=(main_w-overlay_w)/2:y=(main_h-overlay_h)/2:format=auto', 'setsar=1', format],
  );
}

/** The picture (one frame) with its transparency flattened onto the colour: opaque, for the bottom layer. */
export function flatten(graph: FilterGraph, from: string, size: FrameSize, colour: string): string {
  const ground = graph.source([
    `color=c=${filterColour(colour, { opaque: true })}:s=${size.width}x${size.height}:r=1:d=1`,
    'format=yuv420p',
  ]);
  return graph.chain([ground, from], ['overlay=shortest=1:format=auto', 'format=yuv420p']);
}
