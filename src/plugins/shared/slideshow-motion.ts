import { argv, type LocalInput } from '../../sdk.js';
import { flattenOntoBlack, letterbox } from './still-image.js';

/** How far the Ken Burns zoom goes over an image's time on screen: 1 to 1.2 times; a pan shows 1/1.2 of it. */
const ZOOM_GROWTH = 0.2;

export interface SlideshowMotion {
  images: readonly LocalInput[];
  width: number;
  height: number;
  fps: number;
  /** Frames each image owns in the output (seconds_per_image × fps). */
  frames: number;
  zoom: boolean;
  /** Frames of each cross-fade; 0 for a cut. */
  fade: number;
  input: (input: LocalInput) => string[];
  /** The output's encoder and muxer options, and its extension: the pieces are joined by stream copy. */
  encoder: readonly string[];
  muxer: readonly string[];
  extension: string;
}

/** How a still picture moves over its time on screen (images-to-video's zoom, a render's `motion`). */
export type PictureMotion = 'zoom-in' | 'zoom-out' | 'pan-left' | 'pan-right' | 'pan-up' | 'pan-down';

/**
 * The motion of frame `in` (perspective's input frame number) of frames `from` on, in a picture's `span` frames: a
 * part of the picture 1/zoom its size is spread over the frame. A zoom grows or shrinks that part around the centre
 * (1 to 1.2 times or back); a pan keeps it at 1/1.2 and slides it across the picture, so the picture moves the way
 * the pan names (pan-left: it moves left, as xfade's slideleft does). perspective samples the picture at sub-pixel
 * positions (1/256 pixel), so it moves by even steps however slowly; zoompan's crop window moves by whole pixels and
 * jitters (a fraction of a pixel on a picture scaled up first, at several times the cost).
 */
export function motionFilter(motion: PictureMotion, from: number, span: number): string {
  const progress = `(in+${from})/${span}`;
  const zoom =
    motion === 'zoom-in'
      ? `(1+${ZOOM_GROWTH}*${progress})`
      : motion === 'zoom-out'
        ? `(1+${ZOOM_GROWTH}*(1-${progress}))`
        : String(1 + ZOOM_GROWTH);
  // The picture's width and height left out of the part shown, and where the part's top-left corner is in them.
  const [spareX, spareY] = [`W*(1-1/${zoom})`, `H*(1-1/${zoom})`];
  const slide = (towards: boolean, back: boolean, spare: string) =>
    towards ? `${spare}*${progress}` : back ? `${spare}*(1-${progress})` : `${spare}/2`;
  const left = slide(motion === 'pan-left', motion === 'pan-right', spareX);
  const top = slide(motion === 'pan-up', motion === 'pan-down', spareY);
  const centred = motion === 'zoom-in' || motion === 'zoom-out';
  const [right, bottom] = centred ? [`W-${left}`, `H-${top}`] : [`${left}+W/${zoom}`, `${top}+H/${zoom}`];
  // The points of the picture sent to the frame's corners: top left, top right, bottom left, bottom right.
  const corners =
    `x0='${left}':y0='${top}':x1='${right}':y1='${top}':` + `x2='${left}':y2='${bottom}':x3='${right}':y3='${bottom}'`;
  return `perspective=${corners}:interpolation=linear:eval=frame`;
}

/**
 * The graph of one image's frames [from, from + count) of its time on screen (`span` frames): the
 * picture letterboxed (transparency black) into the frame once, repeated `count` times at the frame
 * rate, each frame zoomed as far as its number says.
 */
function imageFrames(m: SlideshowMotion, stream: number, from: number, count: number, span: number): string {
  const picture = flattenOntoBlack(letterbox(m.width, m.height), m.width, m.height, stream);
  const frames = `format=yuv420p,loop=loop=${count - 1}:size=1,settb=1/${m.fps},setpts=N`;
  return [picture, frames, ...(m.zoom ? [motionFilter('zoom-in', from, span)] : []), 'setsar=1'].join(',');
}

/**
 * One command per image, each writing `piece<i>.<extension>` in the output's codec, container and
 * encoder settings: exactly `frames` frames, the image's own part of the output, starting on a keyframe.
 * Pieces so alike share their codec headers, so the concat demuxer joins them by stream copy and the
 * video is encoded once. With fades, the fade into image i is the start of its piece: the last `fade` frames
 * of image i-1 (which stays on screen that much past its own part, still zooming) blended into image
 * i's first. So each image is on screen for frames + fade frames (the last only frames), the pieces
 * add up to frames × images, and no command holds more than two pictures, however many images.
 */
export function motionPieces(m: SlideshowMotion): { file: string; command: string[] }[] {
  const n = m.images.length;
  return m.images.map((image, i) => {
    const file = `piece${i}.${m.extension}`;
    const span = m.frames + (i < n - 1 ? m.fade : 0);
    const out = argv(['-r', String(m.fps), '-frames:v', String(m.frames), '-an'], m.encoder, m.muxer, [file]);
    if (i === 0 || m.fade === 0) {
      return { file, command: argv(m.input(image), ['-filter_complex', imageFrames(m, 0, 0, m.frames, span)], out) };
    }
    const before = m.frames + m.fade;
    const graph =
      `${imageFrames(m, 0, m.frames, m.fade, before)}[tail];` +
      `${imageFrames(m, 1, 0, m.frames, span)}[head];` +
      `[tail][head]xfade=transition=fade:duration=${m.fade / m.fps}:offset=0`;
    return { file, command: argv(m.input(m.images[i - 1]!), m.input(image), ['-filter_complex', graph], out) };
  });
}
