/**
 * Where each clip's frame is on the dry run's storyboard, as docs/render.md ("The storyboard") lays it out: a row for
 * each track that draws, in track order, each frame (the output's shape fitted in 160x160, even sides) placed by its
 * clip's midpoint. The board's own size is read from the picture, so that only the places are worked out here.
 */

const BOX = 160;
const MARGIN = 16;
/** A row is a frame, the band of times under it, and the gap to the next row. */
const TIMES = 20;
const GAP = 12;

/** A frame's box on the board, in the board's pixels. */
export interface FrameBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What of the dry run's timeline the places follow from. */
interface Laid {
  duration: number;
  width: number;
  height: number;
  clips: ReadonlyArray<{ track: number; index: number; type: string; start: number; end: number }>;
}

const evenSide = (pixels: number) => Math.max(16, 2 * Math.round(pixels / 2));
const draws = (clip: Laid['clips'][number]) => clip.type !== 'audio' && clip.type !== 'voice';

/** The frame of each clip that has one on a board `boardWidth` pixels wide, by `track:index`. */
export function framePlaces(timeline: Laid, boardWidth: number): Map<string, FrameBox> {
  const { width, height, duration } = timeline;
  const scale = BOX / Math.max(width, height);
  const frame = { width: evenSide(width * scale), height: evenSide(height * scale) };
  const clips = timeline.clips.filter((clip) => draws(clip) && clip.start < duration);
  const tracks = [...new Set(clips.map((clip) => clip.track))].sort((a, b) => a - b);
  const along = (boardWidth - 2 * MARGIN - frame.width) / duration;
  const row = frame.height + TIMES + GAP;
  return new Map(
    clips.map((clip) => {
      const midpoint = (clip.start + Math.min(clip.end, duration)) / 2;
      const place = {
        x: MARGIN + Math.round(midpoint * along),
        y: MARGIN + tracks.indexOf(clip.track) * row,
        ...frame,
      };
      return [`${clip.track}:${clip.index}`, place];
    }),
  );
}
