import { escapeFilterValue } from '../../sdk.js';
import { corner } from '../shared/overlay-corner.js';
import { FrameClock, type Span } from './clock.js';
import { filterColour } from './colour.js';
import type { FrameSize } from './fit.js';
import { FilterGraph } from './graph.js';
import type { InputList } from './input-list.js';
import { isSeeThrough, mediaStream, type Placed } from './media.js';
import { speechToTranscribe, textScript, type HeardSpeech, type SpokenClip } from './text-script.js';
import type { Clip, Overlay, RenderFormat, SoundClip, Timeline, TransitionType, WaveformClip } from './timeline.js';
import { isMediaVisual } from './timeline.js';
import { joinRun, type Piece } from './transitions.js';
import { waveformStream } from './waveform.js';

/**
 * The picture of a render: a span of the timeline (the whole of a short; one scene of a long one) compiled to one
 * filter graph, for `-filter_complex_script`, that ends in one stream, `[vout]`: the output's size, rate and pixel
 * format, exactly the span's frames, from 0. Tracks are layers over the background colour, a later one above; each
 * clip is decoded once and scaled once; a track's full-frame clips are one stream (cut by concat, passed by xfade),
 * and only what is partial or transparent is overlaid, only while it shows (each layer's stream lasts its clip's
 * frames; `eof_action=pass` draws nothing after). Text and captions are one ASS script drawn by one `ass` filter.
 * Nothing of the document reaches the graph but numbers: labels and file names are generated, colours rebuilt from
 * their digits, names of fits, motions and transitions taken from tables.
 */

export type { Span } from './clock.js';
export { speechToTranscribe, textScript, type HeardSpeech, type SpokenClip } from './text-script.js';

/** The label of the picture's stream in the graph. */
export const PICTURE_OUTPUT = 'vout';

export interface Picture {
  /** The filter graph, for `-filter_complex_script`; the inputs it reads are the InputList's (`[3:v:0]`). */
  graph: string;
  /** The label of its one output stream: `vout`. */
  output: string;
  /** Files the graph reads, by generated name, to write into the workspace before the command: the ASS script. */
  files: Record<string, string>;
  /**
   * Set when captions come from the speech of clips without word times: the ASS script's name, which a step writes
   * (`textScript` with what a transcription of `clips` heard) before the command; `files` then lacks it.
   */
  speech?: { file: string; clips: SpokenClip[] };
}

/** The pixel format of the picture: 4:2:0 for the video codecs, RGB for a GIF's palette to be made from. */
export const picturePixelFormat = (format: RenderFormat): string => (format === 'gif' ? 'rgb24' : 'yuv420p');

/** A waveform's margin from the frame's edges (it has no field for one): overlay-image's default share. */
const WAVEFORM_MARGIN = 0.03;

/** Something a track draws, in the order it does. */
type Drawn =
  | { kind: 'run'; pieces: RunPiece[] }
  | { kind: 'overlay'; placed: Placed; overlay: Overlay; fadeIn: number; fadeOut: number }
  | { kind: 'waveform'; clip: WaveformClip; sound: SoundClip; from: number; to: number };

/** A full-frame clip of a run, and how it passes from the one before. */
interface RunPiece {
  placed: Placed;
  /** An xfade from the clip before. */
  transition?: TransitionType;
  fadeIn: number;
  fadeOut: number;
}

/** A clip on the span's frames: where it starts and ends, and the part of it in the span. */
function place<C extends { start: number; end: number }>(clip: C, clock: FrameClock) {
  const start = clock.frame(clip.start);
  const end = clock.frame(clip.end);
  return { clip, start, end, from: Math.max(0, start), to: Math.min(clock.frames, end) };
}

const fillsFrame = (placed: Placed) => 'fit' in placed.clip.layout;

/**
 * How each clip passes from the one before it on its track: an xfade between two full-frame clips, else the earlier
 * fades out and the later in over their overlap. A transition must lie wholly inside the span or wholly outside it.
 */
function transitionsOf(timeline: Timeline, clock: FrameClock, placed: Map<unknown, Placed>) {
  const xfades = new Map<Placed, TransitionType>();
  const fades = new Map<Placed, { in: number; out: number }>();
  const fade = (of: Placed) => fades.get(of) ?? fades.set(of, { in: 0, out: 0 }).get(of)!;
  const media = timeline.clips.filter(isMediaVisual);
  for (const [i, clip] of media.entries()) {
    const before = media[i - 1];
    if (!clip.transition || !before || before.track !== clip.track) continue;
    const [from, to] = [clock.frame(clip.start), clock.frame(before.end)];
    if (to <= from || to <= 0 || from >= clock.frames) continue;
    if (from < 0 || to > clock.frames)
      throw new Error(`${clip.path}: its transition crosses the edge of the span drawn (${clock.span.start} s)`);
    const [earlier, later] = [placed.get(before)!, placed.get(clip)!];
    if (fillsFrame(earlier) && fillsFrame(later)) xfades.set(later, clip.transition.type);
    else {
      fade(earlier).out = to - from;
      fade(later).in = to - from;
    }
  }
  return { xfades, fades: (of: Placed) => fades.get(of) ?? { in: 0, out: 0 } };
}

/** What each track draws in the span, track by track from the bottom. */
function drawnByTrack(timeline: Timeline, clock: FrameClock): Map<number, Drawn[]> {
  const placed = new Map<unknown, Placed>();
  for (const clip of timeline.clips.filter(isMediaVisual)) placed.set(clip, place(clip, clock));
  const { xfades, fades } = transitionsOf(timeline, clock, placed);
  const tracks = new Map<number, Drawn[]>();
  const drawn = (track: number) => tracks.get(track) ?? tracks.set(track, []).get(track)!;
  let run: RunPiece[] | undefined;
  for (const clip of timeline.clips) {
    if (clip.type === 'waveform') {
      const { from, to } = place(clip, clock);
      if (to > from) drawn(clip.track).push({ kind: 'waveform', clip, sound: soundOf(timeline, clip), from, to });
      continue;
    }
    if (!isMediaVisual(clip)) continue;
    const at = placed.get(clip)!;
    if (at.to <= at.from) continue;
    const { in: fadeIn, out: fadeOut } = fades(at);
    if ('overlay' in clip.layout) {
      drawn(clip.track).push({ kind: 'overlay', placed: at, overlay: clip.layout.overlay, fadeIn, fadeOut });
      continue;
    }
    const last = run?.at(-1);
    const transition = xfades.get(at);
    const piece: RunPiece = { placed: at, fadeIn, fadeOut, ...(transition ? { transition } : {}) };
    if (last && last.placed.clip.track === clip.track && (transition || last.placed.to >= at.from)) {
      // A later clip over an earlier one without a transition (which the resolver refuses) cuts it short.
      if (!transition) last.placed = { ...last.placed, to: Math.max(last.placed.from, at.from) };
      if (last.placed.to === last.placed.from) run!.pop();
      run!.push(piece);
    } else {
      run = [piece];
      drawn(clip.track).push({ kind: 'run', pieces: run });
    }
  }
  return new Map([...tracks].sort(([a], [b]) => a - b));
}

/** The clip whose sound a waveform draws (the resolver has checked its `from` names one with sound). */
function soundOf(timeline: Timeline, waveform: WaveformClip): SoundClip {
  const sound = timeline.clips.find((clip) => clip.id === waveform.from);
  if (!sound || (sound.type !== 'audio' && sound.type !== 'voice' && sound.type !== 'video'))
    throw new Error(`${waveform.path}: no clip with sound has the id its \`from\` names`);
  return sound;
}

/** The streams of a run's clips joined into one (transitions.ts), at the span's frame `from` of its first. */
function runStream(
  graph: FilterGraph,
  inputs: InputList,
  clock: FrameClock,
  frame: FrameSize,
  pieces: readonly RunPiece[],
  background?: string,
): string {
  // Above the bottom layer, a contain fit's bars show what is below, as does a clip's transparency or its fade.
  const alpha =
    background === undefined &&
    pieces.some(
      ({ placed, fadeIn, fadeOut }) =>
        isSeeThrough(placed.clip) ||
        fadeIn > 0 ||
        fadeOut > 0 ||
        ('fit' in placed.clip.layout && placed.clip.layout.fit === 'contain'),
    );
  const streams: Piece[] = pieces.map(({ placed, transition, fadeIn, fadeOut }) => ({
    label: mediaStream(graph, inputs, clock, frame, placed, {
      alpha,
      fadeIn,
      fadeOut,
      ...(background !== undefined ? { background } : {}),
    }),
    from: placed.from,
    to: placed.to,
    ...(transition ? { transition } : {}),
  }));
  if (background === undefined) return joinRun(graph, clock, streams);
  // The bottom layer: gaps between its clips, and before and after them, are the background colour.
  const colour = filterColour(background, { opaque: true });
  const padded = streams.map((stream, i) => {
    const before = stream.from - (streams[i - 1]?.to ?? 0);
    const after = i === streams.length - 1 ? clock.frames - stream.to : 0;
    const label = graph.chain(stream.label, [
      before > 0 && `tpad=start=${before}:color=${colour}`,
      after > 0 && `tpad=stop=${after}:stop_mode=add:color=${colour}`,
      (before > 0 || after > 0) && 'setpts=N',
    ]);
    return { ...stream, label, from: stream.from - Math.max(0, before), to: stream.to + after };
  });
  return joinRun(graph, clock, padded);
}

/** Whether a track's drawing can be the bottom layer itself: full-frame clips only, gaps filled with the background. */
const isGround = (drawn: readonly Drawn[]) => drawn.every((item) => item.kind === 'run');

/**
 * Adds the picture of `timeline` over `span` (see the module comment); the inputs it reads are opened in `inputs`.
 * `heard`, once the speech captions are made from is transcribed, has its words: the script is then written at once.
 */
export function pictureGraph(timeline: Timeline, inputs: InputList, span: Span, heard?: HeardSpeech): Picture {
  const { output } = timeline;
  const clock = new FrameClock(output.fps, span);
  if (clock.frames < 1) throw new Error(`The span from ${span.start} s to ${span.end} s holds no frame`);
  const frame = { width: output.width, height: output.height };
  const graph = new FilterGraph();
  const tracks = drawnByTrack(timeline, clock);
  const [groundTrack, ground] = [...tracks].find(([, drawn]) => drawn.length > 0) ?? [undefined, []];
  let picture: string;
  if (groundTrack !== undefined && isGround(ground)) {
    const pieces = ground.flatMap((item) => (item.kind === 'run' ? item.pieces : []));
    picture = runStream(graph, inputs, clock, frame, pieces, output.background);
    tracks.delete(groundTrack);
  } else {
    const colour = filterColour(output.background, { opaque: true });
    picture = graph.source([
      `color=c=${colour}:s=${frame.width}x${frame.height}:r=${clock.rate}`,
      'format=yuv420p',
      `trim=end_frame=${clock.frames}`,
    ]);
  }
  const script = textLayer(timeline, span, heard);
  // The text is drawn above the highest track that holds some in the span (and above the bottom layer, whatever its
  // track), below the tracks above it.
  const shows = (clip: Clip) => place(clip, clock).to > place(clip, clock).from;
  const textTracks = timeline.clips
    .filter((clip) => (clip.type === 'text' || clip.type === 'captions') && shows(clip))
    .map((clip) => clip.track);
  const textTrack = Math.max(-1, ...textTracks);
  let textDrawn = false;
  const drawText = () => {
    if (script && !textDrawn)
      picture = graph.chain(picture, [`ass=filename=${escapeFilterValue(script.file)}:shaping=complex`]);
    textDrawn = true;
  };
  for (const [track, drawn] of tracks) {
    if (track > textTrack) drawText();
    for (const item of drawn) picture = overlay(graph, inputs, clock, frame, picture, item);
  }
  drawText();
  graph.chain(picture, [`format=${picturePixelFormat(output.format)}`, 'setsar=1'], PICTURE_OUTPUT);
  return {
    graph: graph.text(),
    output: PICTURE_OUTPUT,
    files: script?.content !== undefined ? { [script.file]: script.content } : {},
    ...(script?.speech ? { speech: { file: script.file, clips: script.speech } } : {}),
  };
}

/** The ASS script of the span's text, with its generated name: written now, or by a step after a transcription. */
function textLayer(timeline: Timeline, span: Span, heard?: HeardSpeech) {
  const file = `text-${Math.round(span.start * 1000)}.ass`;
  const speech = heard ? [] : speechToTranscribe(timeline, span);
  if (speech.length > 0) return { file, speech };
  const content = textScript(timeline, span, heard);
  return content === undefined ? undefined : { file, content };
}

/** The stream of something a track draws over what is below it, its first frame, and its top-left corner. */
function layerOf(graph: FilterGraph, inputs: InputList, clock: FrameClock, frame: FrameSize, item: Drawn) {
  switch (item.kind) {
    case 'run': {
      const stream = runStream(graph, inputs, clock, frame, item.pieces);
      return { stream, from: item.pieces[0]!.placed.from, at: ['0', '0'] };
    }
    case 'overlay': {
      const { placed, overlay, fadeIn, fadeOut } = item;
      const stream = mediaStream(graph, inputs, clock, frame, placed, { alpha: false, fadeIn, fadeOut });
      return { stream, from: placed.from, at: corner(overlay.position, Math.round(overlay.margin * frame.width)) };
    }
    case 'waveform': {
      const stream = waveformStream(graph, inputs, clock, frame, item.clip, item.sound, [item.from, item.to]);
      return { stream, from: item.from, at: corner(item.clip.position, Math.round(WAVEFORM_MARGIN * frame.width)) };
    }
  }
}

/** `item` drawn over `picture` from its first frame on, and nothing drawn once its stream ends. */
function overlay(
  graph: FilterGraph,
  inputs: InputList,
  clock: FrameClock,
  frame: FrameSize,
  picture: string,
  item: Drawn,
): string {
  const { stream, from, at } = layerOf(graph, inputs, clock, frame, item);
  const placed = graph.chain(stream, [from > 0 && `setpts=N+${from}`]);
  return graph.chain([picture, placed], [`overlay=x=${at[0]}:y=${at[1]}:eof_action=pass`]);
}
