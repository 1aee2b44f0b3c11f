import { argv, type LocalInput } from '../../sdk.js';
import { flattenOntoBlack, letterbox } from './still-image.js';

/** How far the Ken Burns zoom goes over an image's time on screen: 1 to 1.2 times. */
const ZOOM_GROWTH = 0.2;

/** The largest picture zoomed in: 8K UHD's pixel count. */
const MAX_ZOOM_PIXELS = 7680 * 4320;

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

/**
 * Zoompan moves its crop window by whole input pixels, which jitters at the output's size; on a
 * picture scaled up first a step is a fraction of an output pixel. Four times, within 8K's pixels.
 */
export function zoomScale(width: number, height: number): number {
  return Math.max(1, Math.min(4, Math.floor(Math.sqrt(MAX_ZOOM_PIXELS / (width * height)))));
}

/**
 * The graph of one image's frames [from, from + count) of its time on screen (`span` frames): the
 * picture letterboxed (transparency black) at `scale` times the frame, then zoompan, which makes
 * `count` frames of the frame size from the one picture, zoomed as far as the frame number says.
 */
function imageFrames(m: SlideshowMotion, stream: number, from: number, count: number, span: number): string {
  const k = m.zoom ? zoomScale(m.width, m.height) : 1;
  const [w, h] = [m.width * k, m.height * k];
  const z = m.zoom ? `1+${ZOOM_GROWTH}*(on+${from})/${span}` : '1';
  const zoompan =
    `zoompan=z='${z}':x='(iw-iw/zoom)/2':y='(ih-ih/zoom)/2':d=${count}:s=${m.width}x${m.height}:fps=${m.fps}` +
    ',setsar=1,format=yuv420p';
  return `${flattenOntoBlack(letterbox(w, h), w, h, stream)},${zoompan}`;
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
    const out = argv(['-frames:v', String(m.frames), '-an'], m.encoder, m.muxer, [file]);
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
