import { argv, type LocalInput, type Plan } from '../../sdk.js';
import { assTime, STYLE_FORMAT } from '../captions/ass-script.js';
import { EVENTS_HEAD, scriptHead } from '../captions/ass-captions.js';
import { FrameClock } from './clock.js';
import { filterColour } from './colour.js';
import type { FrameSize } from './fit.js';
import { InputList } from './input-list.js';
import { pictureGraph } from './picture.js';
import type { Clip, Timeline, VisualClip } from './timeline.js';

/**
 * A dry run's storyboard (docs/render.md): one PNG, a row for each track that draws something, on which each visual
 * clip's frame at its midpoint is drawn small, placed by time, with its times under it. Each frame is a render of one
 * frame of the clip alone on the timeline at the frame's small size (so as the clip shows: its fit, motion, overlay
 * place, text style), never an encode of more; the times are drawn by libass on the board (numbers only: nothing of
 * the document), and libvips lays the frames on it.
 */

/** The board's measures, in pixels. */
export const BOARD = {
  /** A frame fits in a square of this side, in the output's shape. */
  box: 160,
  margin: 16,
  /** The band under a frame that holds its times. */
  times: 20,
  /** Between two rows. */
  gap: 12,
  /** Room a clip's frame and times take along its row: the board is wide enough for the shortest clip's. */
  room: 112,
  minWidth: 640,
  maxWidth: 4096,
  background: '#202020',
} as const;

/** A clip's frame on the board: its top-left corner. */
export interface BoardPlace {
  clip: VisualClip;
  x: number;
  y: number;
}

export interface BoardLayout {
  width: number;
  height: number;
  /** A frame's size: the output's, made to fit BOARD.box, even. */
  frame: FrameSize;
  places: BoardPlace[];
}

const isVisual = (clip: Clip): clip is VisualClip => clip.type !== 'audio' && clip.type !== 'voice';

/** Even, and at least 16 (the smallest frame the picture is made at). */
const evenSide = (pixels: number) => Math.max(16, 2 * Math.round(pixels / 2));

/**
 * Where everything goes: the rows are the tracks that draw something, the first track's at the top; along a row, a
 * clip's frame is placed so that a clip at the timeline's start has it at the margin and one at its end at the far
 * margin (its left edge at `margin + midpoint × (width - 2 × margin - frame width) / duration`). The board is as wide
 * as the shortest clip needs for its frame and times not to overlap the next one's (BOARD.room), from 640 to 4096
 * pixels; on a board at its widest, frames of short clips may overlap, the later drawn above.
 */
export function boardLayout(timeline: Timeline): BoardLayout {
  const { width, height, duration } = timeline.output;
  const scale = BOARD.box / Math.max(width, height);
  const frame = { width: evenSide(width * scale), height: evenSide(height * scale) };
  const clips = timeline.clips.filter(isVisual).filter((clip) => clip.start < duration);
  const tracks = [...new Set(clips.map((clip) => clip.track))].sort((a, b) => a - b);
  const shortest = Math.min(duration, ...clips.map((clip) => Math.min(clip.end, duration) - clip.start));
  const wanted = 2 * BOARD.margin + frame.width + (duration * BOARD.room) / shortest;
  const boardWidth = evenSide(Math.min(BOARD.maxWidth, Math.max(BOARD.minWidth, wanted)));
  const row = frame.height + BOARD.times + BOARD.gap;
  const along = (boardWidth - 2 * BOARD.margin - frame.width) / duration;
  return {
    width: boardWidth,
    height: evenSide(2 * BOARD.margin + tracks.length * row - BOARD.gap),
    frame,
    places: clips.map((clip) => ({
      clip,
      x: BOARD.margin + Math.round(midpoint(clip, duration) * along),
      y: BOARD.margin + tracks.indexOf(clip.track) * row,
    })),
  };
}

/** The middle of the part of a clip the output shows. */
const midpoint = (clip: Clip, duration: number) => (clip.start + Math.min(clip.end, duration)) / 2;

/**
 * The clip alone on the timeline, at the board frame's size: what its frame shows. A waveform keeps the clip whose
 * sound it draws, and captions of a voice the voice, whose words' times its synthesis gave; captions of other speech
 * show nothing, as a dry run transcribes nothing.
 */
function alone(timeline: Timeline, clip: VisualClip, frame: FrameSize): Timeline {
  const followed = (id: string) => timeline.clips.filter((other) => other.id === id);
  let drawn: Clip[] = [clip];
  if (clip.type === 'waveform') drawn = [clip, ...followed(clip.from)];
  if (clip.type === 'captions' && 'from' in clip.source) {
    const voice = followed(clip.source.from).filter((other) => other.type === 'voice');
    drawn = voice.length > 0 ? [clip, ...voice] : [];
  }
  return { ...timeline, output: { ...timeline.output, format: 'mp4', ...frame }, clips: drawn };
}

/** The style the times are drawn in: small white text, centred on the point given. */
const TIMES_STYLE: Record<(typeof STYLE_FORMAT)[number], string> = {
  Name: 'Times',
  Fontname: 'DejaVu Sans',
  Fontsize: '13',
  PrimaryColour: '&H00FFFFFF',
  SecondaryColour: '&H00FFFFFF',
  OutlineColour: '&H00000000',
  BackColour: '&H00000000',
  Bold: '0',
  Italic: '0',
  Underline: '0',
  StrikeOut: '0',
  ScaleX: '100',
  ScaleY: '100',
  Spacing: '0',
  Angle: '0',
  BorderStyle: '1',
  Outline: '0',
  Shadow: '0',
  Alignment: '8',
  MarginL: '0',
  MarginR: '0',
  MarginV: '0',
  Encoding: '1',
};

/** Seconds as the board shows them: to the hundredth. */
const shown = (seconds: number) => String(Math.round(seconds * 100) / 100);

/** The script of every clip's times (`2.5–7 s`), centred under its frame: numbers only. */
function timesScript(layout: BoardLayout, duration: number): string {
  const events = layout.places.map(({ clip, x, y }) => {
    const at = `{\\pos(${x + layout.frame.width / 2},${y + layout.frame.height + 3})}`;
    const text = `${shown(clip.start)}–${shown(Math.min(clip.end, duration))} s`;
    return `Dialogue: 0,${assTime(0)},${assTime(1)},Times,,0,0,0,,${at}${text}`;
  });
  const style = `Style: ${STYLE_FORMAT.map((name) => TIMES_STYLE[name]).join(',')}`;
  return [...scriptHead(layout.width, layout.height), style, '', ...EVENTS_HEAD, ...events, ''].join('\n');
}

/** The file of the board before the frames are laid on it, and its graph's and times' files. */
const BOARD_FILE = 'storyboard-board.png';
const BOARD_GRAPH = 'storyboard-board.graph';
const TIMES_FILE = 'storyboard-times.ass';

/** One frame as a PNG: the only encode a storyboard makes. */
const ONE_PNG = ['-frames:v', '1', '-c:v', 'png', '-f', 'image2'];

/**
 * The storyboard's plan (see the module comment): a command for each clip's frame and one for the board with the
 * times, then a step that lays the frames on the board and writes `output`. `open` is BuildContext.input.
 */
export function storyboard(timeline: Timeline, open: (input: LocalInput) => string[], output: string): Plan {
  const { fps, duration } = timeline.output;
  const layout = boardLayout(timeline);
  const clock = new FrameClock(fps, { start: 0, end: duration });
  const files: Record<string, string> = {};
  const frames = layout.places.map(({ clip, x, y }, index) => {
    const name = `storyboard-${String(index).padStart(3, '0')}`;
    // The frame at the clip's midpoint, within the clip.
    const first = clock.frame(clip.start);
    const at = Math.max(first, Math.min(Math.floor(midpoint(clip, duration) * fps), clock.frame(clip.end) - 1));
    const inputs = new InputList(open);
    const picture = pictureGraph(alone(timeline, clip, layout.frame), inputs, {
      start: clock.duration(at),
      end: clock.duration(at + 1),
    });
    Object.assign(files, picture.files, { [`${name}.graph`]: picture.graph });
    const command = argv(
      ['-loglevel', 'warning'],
      inputs.args(),
      ['-filter_complex_script', `${name}.graph`, '-map', `[${picture.output}]`],
      ONE_PNG,
      [`${name}.png`],
    );
    return { command, file: `${name}.png`, x, y };
  });
  const board =
    `color=c=${filterColour(BOARD.background, { opaque: true })}:s=${layout.width}x${layout.height}:r=1,` +
    `format=rgb24,trim=end_frame=1,ass=filename=${TIMES_FILE}[board]\n`;
  return {
    files: { ...files, [TIMES_FILE]: timesScript(layout, duration), [BOARD_GRAPH]: board },
    // A board of many tracks is tall: held to MEDIAFLOW_MAX_PIXELS as any picture an operation makes.
    frameSize: { width: layout.width, height: layout.height },
    commands: [
      ...frames.map((frame) => frame.command),
      argv(['-filter_complex_script', BOARD_GRAPH, '-map', '[board]'], ONE_PNG, [BOARD_FILE]),
    ],
    next: () => ({
      steps: [
        {
          label: `libvips: ${frames.length} frame(s) laid on ${BOARD_FILE} -> ${output}`,
          run: (context) =>
            context.image(
              BOARD_FILE,
              (image) =>
                image.composite(frames.map(({ file, x, y }) => ({ input: context.path(file), left: x, top: y }))),
              output,
            ),
        },
      ],
      commands: [],
    }),
  };
}
