import type { Problem } from '../../src/sdk.js';
import { clipAt } from './json-map.js';
import { el, replace } from './dom.js';
import { framePlaces, type FrameBox } from './storyboard.js';

/**
 * The timeline drawn: a ruler, one row per track, each clip a bar (a button: focusable, with a text equivalent) at its
 * place on the ruler, with its frame from the storyboard when there is one, its transition's overlap with the clip
 * before it drawn over both, its problems marked on it; and the same clips as a table, for screen readers and for
 * reading exact times.
 */

/** One clip of the dry run's `timeline` (docs/render.md#the-dry-run). */
export interface TimelineClip {
  track: number;
  index: number;
  id: string | null;
  type: string;
  start: number;
  end: number;
  src: string | null;
}

export interface Timeline {
  duration: number;
  width: number;
  height: number;
  fps: number;
  clips: TimelineClip[];
}

/** The dry run's storyboard: a picture of this server's, and its size. */
export interface Storyboard {
  url: string;
  width: number;
  height: number;
}

export interface Drawing {
  timeline: Timeline;
  /** The document the timeline was resolved from, for each clip's transition. */
  document: unknown;
  /** Problems of the document now, each on its clip when its path is in one. */
  problems: Problem[];
  /** The clip the editor's cursor is in. */
  selected?: { track: number; index: number };
  /** The dry run's storyboard, when the server draws one. */
  storyboard?: Storyboard;
  /** Why the timeline is older than the document, when it is: the last one that resolved is drawn. */
  stale?: string;
}

const key = (track: number, index: number) => `${track}:${index}`;
const seconds = (value: number) => `${Number(value.toFixed(3))} s`;
const percent = (value: number, total: number) => `${total > 0 ? (value / total) * 100 : 0}%`;

/** A step of the ruler that gives about eight ticks: 1, 2 or 5 times a power of ten seconds. */
function tickStep(duration: number): number {
  const rough = duration / 8;
  const power = 10 ** Math.floor(Math.log10(rough || 1));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? power * 10;
}

/** A clip's transition in the document (its type and duration), if it has one. */
function transitionOf(document: unknown, clip: TimelineClip): string | undefined {
  const tracks = (document as { tracks?: Array<{ clips?: Array<{ transition?: { type?: unknown } }> }> })?.tracks;
  const type = tracks?.[clip.track]?.clips?.[clip.index]?.transition?.type;
  return typeof type === 'string' ? type : undefined;
}

/** The bar's picture: its clip's frame, cut out of the storyboard (scaled so that the frame fills the box). */
function thumbnail(storyboard: Storyboard, frame: FrameBox): HTMLElement {
  const thumb = el('span', { class: 'thumb', attrs: { 'aria-hidden': 'true' } });
  thumb.style.aspectRatio = `${frame.width} / ${frame.height}`;
  thumb.style.backgroundImage = `url("${encodeURI(storyboard.url)}")`;
  const share = (board: number, part: number) => `${(board / part) * 100}%`;
  thumb.style.backgroundSize = `${share(storyboard.width, frame.width)} ${share(storyboard.height, frame.height)}`;
  // A percentage puts that point of the picture on that point of the box: the frame's corner on the box's.
  thumb.style.backgroundPosition =
    `${(frame.x / (storyboard.width - frame.width)) * 100}% ` +
    `${(frame.y / (storyboard.height - frame.height)) * 100}%`;
  return thumb;
}

/** Draws the timeline into `container`; `choose` is told the clip whose bar is clicked (or pressed). */
export function drawTimeline(container: HTMLElement, drawing: Drawing, choose: (clip: TimelineClip) => void): void {
  const { timeline, problems } = drawing;
  const onClip = new Map<string, Problem[]>();
  for (const problem of problems) {
    const clip = clipAt(problem.path);
    if (clip) onClip.set(key(clip.track, clip.index), [...(onClip.get(key(clip.track, clip.index)) ?? []), problem]);
  }
  const tracks = Math.max(0, ...timeline.clips.map((clip) => clip.track + 1));
  const frames = drawing.storyboard ? framePlaces(timeline, drawing.storyboard.width) : new Map<string, FrameBox>();
  const step = tickStep(timeline.duration);
  const ruler = el('div', { class: 'ruler', attrs: { 'aria-hidden': 'true' } });
  for (let t = 0; t <= timeline.duration + 1e-9; t += step) {
    const tick = el('span', { class: 'tick' }, seconds(Number(t.toFixed(3))));
    tick.style.left = percent(t, timeline.duration);
    ruler.append(tick);
  }
  const rows = el('div', { class: 'tracks' });
  const table = el(
    'table',
    { class: 'clip-table' },
    el('caption', {}, `Clips: ${timeline.clips.length}, ${seconds(timeline.duration)} in all`),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['Track', 'Clip', 'Type', 'Start', 'End', 'Problems'].map((h) => el('th', { attrs: { scope: 'col' } }, h)),
      ),
    ),
  );
  const body = el('tbody');
  for (let track = 0; track < tracks; track++) {
    const row = el('div', { class: 'track', attrs: { role: 'group', 'aria-label': `Track ${track + 1}` } });
    row.append(el('span', { class: 'track-name', attrs: { 'aria-hidden': 'true' } }, `${track + 1}`));
    const lane = el('div', { class: 'lane' });
    const clips = timeline.clips.filter((clip) => clip.track === track);
    clips.forEach((clip, order) => {
      const found = onClip.get(key(clip.track, clip.index)) ?? [];
      const transition = transitionOf(drawing.document, clip);
      const before = clips[order - 1];
      const overlap = before && clip.start < before.end ? before.end - clip.start : 0;
      const selected = drawing.selected?.track === clip.track && drawing.selected.index === clip.index;
      const words =
        `Track ${track + 1}, clip ${clip.index + 1}: ${clip.type}${clip.id ? ` ${clip.id}` : ''}, ` +
        `${seconds(clip.start)} to ${seconds(clip.end)}` +
        (overlap > 0 ? `, ${transition ?? 'overlap'} over ${seconds(overlap)}` : '') +
        (found.length > 0 ? `; ${found.length} problem${found.length > 1 ? 's' : ''}: ` : '') +
        found.map((problem) => `${problem.path}: ${problem.error}`).join('; ');
      const bar = el(
        'button',
        {
          // Every other clip of a track a shade darker, so that two clips that meet or overlap stay two.
          class:
            `clip type-${clip.type.replace(/[^a-z]/g, '')}${order % 2 === 1 ? ' alt' : ''}` +
            (found.length > 0 ? ' has-problem' : ''),
          attrs: {
            type: 'button',
            'aria-label': words,
            'aria-pressed': String(selected),
            'data-track': String(clip.track),
            'data-index': String(clip.index),
            title: words,
          },
          on: { click: () => choose(clip) },
        },
        drawing.storyboard && frames.has(key(clip.track, clip.index))
          ? thumbnail(drawing.storyboard, frames.get(key(clip.track, clip.index))!)
          : null,
        el(
          'span',
          { class: 'clip-label' },
          el('span', { class: 'clip-type' }, clip.type),
          el('span', { class: 'clip-times' }, `${Number(clip.start.toFixed(2))}–${Number(clip.end.toFixed(2))}`),
        ),
        found.length > 0 ? el('span', { class: 'badge', attrs: { 'aria-hidden': 'true' } }, '!') : null,
      );
      bar.style.left = percent(clip.start, timeline.duration);
      bar.style.width = percent(clip.end - clip.start, timeline.duration);
      lane.append(bar);
      if (overlap > 0) {
        const span = el(
          'span',
          {
            class: 'overlap',
            attrs: { 'aria-hidden': 'true', title: `${transition ?? 'overlap'}: ${seconds(overlap)}` },
          },
          transition ?? '',
        );
        span.style.left = percent(clip.start, timeline.duration);
        span.style.width = percent(overlap, timeline.duration);
        lane.append(span);
      }
      body.append(
        el(
          'tr',
          { class: selected ? 'selected' : '' },
          el('td', {}, track + 1),
          el('td', {}, clip.index + 1),
          el('td', {}, clip.type + (overlap > 0 ? ` (${transition ?? 'overlap'} ${seconds(overlap)})` : '')),
          el('td', {}, seconds(clip.start)),
          el('td', {}, seconds(clip.end)),
          el('td', {}, found.map((problem) => problem.error).join('; ')),
        ),
      );
    });
    row.append(lane);
    rows.append(row);
  }
  table.append(body);
  replace(container, drawing.stale ? el('p', { class: 'stale' }, drawing.stale) : null, ruler, rows, table);
}
