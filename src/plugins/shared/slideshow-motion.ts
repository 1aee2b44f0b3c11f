import { argv, even, type LocalInput } from '../../sdk.js';
import { flattenOntoBlack, letterbox } from './still-image.js';

/** How far the Ken Burns zoom goes over an image's time on screen: 1 to 1.2 times; a pan shows 1/1.2 of it. */
const ZOOM_GROWTH = 0.2;

/**
 * Pixels of the frame one band covers at most. A larger frame is made a band of rows at a time (bandsOf): perspective
 * keeps a table of 8 bytes a pixel of its picture, rebuilt every frame (265 MB at 8K), and xfade held 430 MB more
 * than concat for two 8K pictures; for a band they hold a band's worth. 720p and below are one band, as they always
 * were; 1080p two, 8K thirty-two. An 8K piece with a fade peaked at 4.8 GB in one band, 0.95 GB in bands.
 */
const BAND_PIXELS = 2 ** 20;

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
  /**
   * For a large frame: the command that letterboxes `image` into the frame and writes it as `file`, and the options
   * that open that file. Each image is then letterboxed by a command of its own before its piece, which reads the
   * file: the pictures of a large image's letterboxing are freed before the encoder starts.
   */
  still?: (image: LocalInput, file: string) => { command: string[]; input: string[] };
}

interface Bands {
  count: number;
  /** Rows of each band (even, for 4:2:0); the last may reach past the frame's bottom, which is cut off. */
  rows: number;
}

/** How the frame's rows are shared among bands: as few as keep each within BAND_PIXELS. */
function bandsOf(m: SlideshowMotion): Bands {
  const wanted = Math.ceil((m.width * m.height) / BAND_PIXELS);
  if (wanted <= 1) return { count: 1, rows: m.height };
  const rows = even(Math.ceil(m.height / wanted));
  return { count: Math.ceil(m.height / rows), rows };
}

/** How a still picture moves over its time on screen (images-to-video's zoom, a render's `motion`). */
export type PictureMotion = 'zoom-in' | 'zoom-out' | 'pan-left' | 'pan-right' | 'pan-up' | 'pan-down';

/**
 * The zoom of the frame numbered `frame` (an expression, counting from 1 as perspective's `in` does) of frames `from`
 * on, in an image's `span` frames.
 */
const zoomOf = (frame: string, from: number, span: number) => `(1+${ZOOM_GROWTH}*(${frame}+${from})/${span})`;

/**
 * perspective sending the points of its picture (`x0`...`y3`: left, top, right, bottom, as expressions) to the
 * corners of its output. It samples them at sub-pixel positions (1/256 pixel), so the picture grows by even steps
 * however slowly; zoompan's crop window moves by whole pixels and jitters (a fraction of a pixel on a picture scaled
 * up first, at several times the cost).
 */
function perspective(left: string, top: string, right: string, bottom: string): string {
  const corners =
    `x0='${left}':y0='${top}':x1='${right}':y1='${top}':` + `x2='${left}':y2='${bottom}':x3='${right}':y3='${bottom}'`;
  return `perspective=${corners}:interpolation=linear:eval=frame`;
}

/**
 * The motion of frame `in` (perspective's input frame number) of frames `from` on, in a picture's `span` frames: a
 * part of the picture 1/zoom its size is spread over the frame. A zoom grows or shrinks that part around the centre
 * (1 to 1.2 times or back); a pan keeps it at 1/1.2 and slides it across the picture, so the picture moves the way
 * the pan names (pan-left: it moves left, as xfade's slideleft does).
 */
export function motionFilter(motion: PictureMotion, from: number, span: number): string {
  const progress = `(in+${from})/${span}`;
  const zoom =
    motion === 'zoom-in'
      ? zoomOf('in', from, span)
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
  return perspective(left, top, right, bottom);
}

/**
 * The frame cut into band-frames, band `mod(n,count)` of frame `floor(n/count)` (each picture comes `count` times in
 * turn), and zoomed band by band: a band-frame is the rows of the picture its band samples (cut at an even row, with
 * two rows to spare for the interpolation and the rounding), sent by perspective to the band's rows exactly as the
 * whole frame's zoom sends them, then the band's rows alone. Without the zoom, the picture padded to the bands' rows,
 * each band cut as it is.
 */
function bandFrames(m: SlideshowMotion, from: number, span: number, bands: Bands): string {
  const { count, rows } = bands;
  const [width, height] = [m.width, m.height];
  if (!m.zoom) return `pad=${width}:${count * rows}:0:0,crop=w=${width}:h=${rows}:x=0:y='mod(n,${count})*${rows}'`;
  const cut = rows + 4;
  // The same arithmetic in both filters, on the band-frame's number from 0: crop's `n`, perspective's `in` less 1.
  const zoom = (n: string) => zoomOf(`floor(${n}/${count})+1`, from, span);
  const top = (n: string) => `${height}*(1-1/${zoom(n)})/2+mod(${n},${count})*${rows}/${zoom(n)}`;
  const cutAt = (n: string) => `min(2*floor((${top(n)})/2),${height - cut})`;
  const left = `${width}*(1-1/${zoom('(in-1)')})/2`;
  const first = `${top('(in-1)')}-${cutAt('(in-1)')}`;
  return [
    `crop=w=${width}:h=${cut}:x=0:y='${cutAt('n')}'`,
    perspective(left, first, `${width}-${left}`, `${first}+${cut}/${zoom('(in-1)')}`),
    `crop=${width}:${rows}:0:0`,
  ].join(',');
}

/**
 * The graph of one image's frames [from, from + count) of its time on screen (`span` frames), from the picture
 * letterboxed (transparency black) into the frame once, or read so (SlideshowMotion.still): the picture repeated at
 * the frame rate, each frame zoomed as far as its number says. A frame of several bands comes as band-frames, each
 * band of a frame on that frame's time, for xfade to blend them as such and `assemble` to stack them.
 */
function imageFrames(
  m: SlideshowMotion,
  stream: number,
  picture: 'letterbox' | 'still',
  range: { from: number; count: number; span: number },
): string {
  const { from, count, span } = range;
  const bands = bandsOf(m);
  const frames =
    bands.count === 1
      ? [
          `format=yuv420p,loop=loop=${count - 1}:size=1,settb=1/${m.fps},setpts=N`,
          ...(m.zoom ? [motionFilter('zoom-in', from, span)] : []),
          'setsar=1',
        ].join(',')
      : `format=yuv420p,loop=loop=${count * bands.count - 1}:size=1,${bandFrames(m, from, span, bands)},` +
        `settb=1/${m.fps},setpts=floor(N/${bands.count}),setsar=1`;
  const rate = bands.count > 1 ? bandRate(m, bands) : undefined;
  return picture === 'letterbox'
    ? `${flattenOntoBlack(letterbox(m.width, m.height), m.width, m.height, stream, rate)},${frames}`
    : `[${stream}:v]${frames}`;
}

/**
 * The rate band-frames are said to come at: the output's times the bands, so that tile's frames come at the output's.
 * ffmpeg takes the rate a graph's frames are said to come at for their duration, and doubled each at half of it.
 */
const bandRate = (m: SlideshowMotion, bands: Bands) => m.fps * bands.count;

/** What makes frames of the band-frames, for a frame of several bands: tile stacks them, then they are timed again. */
function assemble(m: SlideshowMotion): string {
  const { count } = bandsOf(m);
  return count === 1 ? '' : `,tile=1x${count},crop=${m.width}:${m.height}:0:0,settb=1/${m.fps},setpts=N`;
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
export function motionPieces(m: SlideshowMotion): { file: string; commands: string[][] }[] {
  const n = m.images.length;
  const stills = m.still && m.images.map((image, i) => m.still!(image, `still${i}.mkv`));
  // An input is read at the band-frames' rate (its frames' times generated from it): its one picture comes so.
  const bands = bandsOf(m);
  const rate = bands.count > 1 ? ['-r', String(bandRate(m, bands))] : [];
  const opened = (i: number) => [...rate, ...(stills?.[i]!.input ?? m.input(m.images[i]!))];
  const picture = stills ? 'still' : 'letterbox';
  return m.images.map((_, i) => {
    const file = `piece${i}.${m.extension}`;
    const span = m.frames + (i < n - 1 ? m.fade : 0);
    const before = stills ? [stills[i]!.command] : [];
    const out = argv(['-r', String(m.fps), '-frames:v', String(m.frames), '-an'], m.encoder, m.muxer, [file]);
    if (i === 0 || m.fade === 0) {
      const graph = `${imageFrames(m, 0, picture, { from: 0, count: m.frames, span })}${assemble(m)}`;
      return { file, commands: [...before, argv(opened(i), ['-filter_complex', graph], out)] };
    }
    const graph =
      `${imageFrames(m, 0, picture, { from: m.frames, count: m.fade, span: m.frames + m.fade })}[tail];` +
      `${imageFrames(m, 1, picture, { from: 0, count: m.frames, span })}[head];` +
      `[tail][head]xfade=transition=fade:duration=${m.fade / m.fps}:offset=0${assemble(m)}`;
    return { file, commands: [...before, argv(opened(i - 1), opened(i), ['-filter_complex', graph], out)] };
  });
}
