import {
  parseTime,
  problemsError,
  type LocalInput,
  type PluginSettings,
  type Problem,
  type SpeechInput,
} from '../../sdk.js';
import { captionStyleOf } from '../captions/caption-style.js';
import { spokenWords } from '../captions/spoken-captions.js';
import { clipPath } from './json-path.js';
import { DEFAULTS, type ClipOf, type DocumentClip, type EditDocument } from './schema.js';
import type { Clip, Layout, Timeline, Transition } from './timeline.js';

/**
 * The resolver: an edit document (merged and checked) and its media's probed facts make the timeline (timeline.ts),
 * every `auto` worked out, every time absolute. It is pure. Before anything is fetched it also runs on the document
 * alone (`documentProblems`), with the media's lengths unknown, to refuse what the document shows is wrong: a clip
 * that overlaps another, a `from` naming no clip, a transition with no clip before it, a document past the limits.
 */

/** A clip of the document, with where it is. */
export interface Placed {
  track: number;
  index: number;
  path: string;
  clip: DocumentClip;
}

/** The media of a clip, once probed: its src's input (a voice clip's, its speech). */
export type MediaOf = (placed: Placed) => LocalInput | undefined;

/** The limits a document is held to (PluginSettings). */
export type Limits = Pick<PluginSettings, 'maxDuration' | 'maxPixels' | 'maxInputs' | 'maxClips'>;

/** Where a clip is on the timeline; a time not yet known (a media's length before probing) is undefined. */
interface Span {
  start?: number;
  end?: number;
}

/** Two times closer than this are the same (a millisecond, well under a frame). */
const EPSILON = 0.001;

const seconds = (value: number | string): number => (typeof value === 'number' ? value : parseTime('time', value));
const given = (value: number | string | undefined): number | undefined =>
  value === undefined || value === 'auto' ? undefined : seconds(value);
const shown = (value: number) => `${Number(value.toFixed(3))} s`;
/** A clip type with its article: `an image clip`, `a video clip`. */
const aClip = (type: string) => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} clip`;

/** Every clip of the document, track by track, in the document's order. */
export const placedClips = (document: EditDocument): Placed[] =>
  document.tracks.flatMap((track, t) =>
    track.clips.map((clip, index) => ({ track: t, index, path: clipPath(t, index), clip })),
  );

/** A text with something to say: a letter or a digit, of any script (as POST /speak/ asks). */
const HAS_WORDS = /[\p{L}\p{N}]/u;

const isVisual = (clip: DocumentClip) => clip.type !== 'audio' && clip.type !== 'voice';
const SPEAKERS = ['audio', 'voice', 'video'];

/** A clip's media source, when it has one (a voice clip's media is made, not fetched). */
export const srcOf = (clip: DocumentClip): string | undefined =>
  clip.type === 'video' || clip.type === 'image' || clip.type === 'audio' || clip.type === 'captions'
    ? clip.src
    : undefined;

/** What a voice clip asks to be said: voice clips that say the same with the same voice share their speech. */
export const speechKey = (clip: ClipOf<'voice'>): string =>
  JSON.stringify([clip.text, clip.voice ?? '', clip.speed ?? DEFAULTS.speed]);

/**
 * The speech the document's voice clips need, each once (`speechKey`), with the path of the first clip that says it:
 * the engine speaks each into an input of its own (NamedInput.speak).
 */
export function voiceSources(document: EditDocument): Array<{ key: string; speak: SpeechInput }> {
  const found = new Map<string, SpeechInput>();
  for (const { clip, path } of placedClips(document)) {
    if (clip.type !== 'voice' || found.has(speechKey(clip))) continue;
    found.set(speechKey(clip), {
      text: clip.text,
      ...(clip.voice !== undefined ? { voice: clip.voice } : {}),
      speed: clip.speed ?? DEFAULTS.speed,
      at: path,
    });
  }
  return [...found].map(([key, speak]) => ({ key, speak }));
}

/** What a clip needs of its media: the engine checks it for each input (input kinds). */
const kindOf = (clip: DocumentClip) =>
  ({ video: 'video', image: 'image', audio: 'audio', captions: 'subtitle' })[clip.type as string] as
    'video' | 'image' | 'audio' | 'subtitle';

/**
 * The media the document names, each src once with the kind its clips need of it (a video and its sound used apart:
 * `video`; a picture used as a video too: `media`, each clip's need checked once probed), and the src that is both
 * subtitles and media, which is a problem.
 */
export function mediaSources(document: EditDocument): {
  sources: Array<{ src: string; kind: 'video' | 'image' | 'audio' | 'subtitle' | 'media' }>;
  problems: Problem[];
} {
  const kinds = new Map<string, Set<string>>();
  const problems: Problem[] = [];
  for (const { clip, path } of placedClips(document)) {
    const src = srcOf(clip);
    if (src === undefined) continue;
    const set = kinds.get(src) ?? new Set();
    const kind = kindOf(clip);
    if (set.size > 0 && set.has('subtitle') !== (kind === 'subtitle'))
      problems.push({
        path: `${path}.src`,
        error: 'this file is used as subtitles and as media: one file is one of them',
      });
    else kinds.set(src, set.add(kind));
  }
  const sources = [...kinds].map(([src, set]) => ({
    src,
    kind:
      set.size === 1
        ? ([...set][0] as 'video' | 'image' | 'audio' | 'subtitle')
        : [...set].every((kind) => kind === 'video' || kind === 'audio')
          ? ('video' as const)
          : ('media' as const),
  }));
  return { sources, problems };
}

/** When a subtitle file's last cue ends, from its ASS text (its `Dialogue` lines' End times). */
export function subtitlesEnd(input: LocalInput): number | undefined {
  let end: number | undefined;
  for (const [, h, m, s] of (input.ass ?? '').matchAll(/^Dialogue:\s*[^,]*,[^,]*,(\d+):(\d\d):(\d\d(?:\.\d+)?),/gm)) {
    const seconds = Number(h) * 3600 + Number(m) * 60 + Number(s);
    end = Math.max(end ?? 0, seconds);
  }
  return end ?? input.facts.duration;
}

/** The length of a clip's media, as `auto` reads it: subtitles to their last cue, the rest by their duration. */
const mediaLength = (placed: Placed, media: LocalInput | undefined): number | undefined =>
  media === undefined ? undefined : placed.clip.type === 'captions' ? subtitlesEnd(media) : media.facts.duration;

/** The spans of every clip, and what is wrong with the document's times. */
interface Laid {
  spans: Map<string, Span>;
  problems: Problem[];
  placed: Placed[];
  /** The clip each captions or waveform clip follows (`from`), by its path. */
  follows: Map<string, Placed>;
  duration?: number;
}

/**
 * Works out every clip's start and end, and finds what is wrong with them. `media` is undefined before anything is
 * fetched: a time that needs a media's length is then unknown, and not a problem.
 */
function layOut(document: EditDocument, media: MediaOf | undefined, limits: Limits | undefined): Laid {
  const placed = placedClips(document);
  const problems: Problem[] = [];
  const problem = (path: string, error: string) => problems.push({ path, error });
  const ids = new Map<string, Placed>();
  for (const p of placed) {
    const id = p.clip.id;
    if (id === undefined) continue;
    const taken = ids.get(id);
    if (taken) problem(`${p.path}.id`, `the id '${id}' is already ${taken.path}'s: an id names one clip`);
    else ids.set(id, p);
  }
  // The clips are in the document's order, track by track: the one before a clip on its track is the one before it.
  const before = new Map(placed.map((p, i) => [p.path, p.index > 0 ? placed[i - 1] : undefined]));
  const previous = (p: Placed): Placed | undefined => before.get(p.path);
  const follows = new Map<string, Placed>();
  for (const p of placed) {
    const { clip } = p;
    if ('transition' in clip && clip.transition) {
      const prior = previous(p);
      if (!prior || (prior.clip.type !== 'video' && prior.clip.type !== 'image'))
        problem(`${p.path}.transition`, 'a transition needs a video or image clip before it on its track');
    }
    if (clip.type === 'captions' && (clip.src === undefined) === (clip.from === undefined))
      problem(
        `${p.path}.${clip.src === undefined ? 'src' : 'from'}`,
        clip.src === undefined
          ? 'missing: a captions clip needs `src` (a subtitle file) or `from` (a clip whose speech it captions)'
          : 'give `src` or `from`, not both',
      );
    if (clip.type === 'voice' && !HAS_WORDS.test(clip.text))
      problem(`${p.path}.text`, 'has no words to speak (no letter or digit)');
    if (clip.type === 'captions' && clip.src !== undefined && clip.words_per_line !== undefined)
      problem(`${p.path}.words_per_line`, "captions from `src` keep the file's own lines: leave it out, or use `from`");
    if (clip.type === 'audio' && clip.loop && given(clip.duration) === undefined)
      problem(`${p.path}.duration`, 'missing: a looping clip needs it (it repeats until then)');
    if ((clip.type === 'captions' || clip.type === 'waveform') && clip.from !== undefined) {
      const followed = ids.get(clip.from);
      if (!followed) problem(`${p.path}.from`, `no clip has the id '${clip.from}'`);
      else if (!SPEAKERS.includes(followed.clip.type))
        problem(
          `${p.path}.from`,
          `'${clip.from}' is ${followed.path}, ${aClip(followed.clip.type)}: ${clip.type} clips follow an audio, ` +
            'voice or video clip',
        );
      else follows.set(p.path, followed);
    }
    if ((clip.type === 'video' || clip.type === 'image') && clip.position === undefined)
      for (const key of ['width', 'opacity', 'margin'] as const)
        if (clip[key] !== undefined)
          problem(`${p.path}.${key}`, 'an overlay field: give `position` too, or leave it out');
    if ((clip.type === 'video' || clip.type === 'image') && clip.position !== undefined && clip.fit !== undefined)
      problem(`${p.path}.fit`, 'an overlay (`position`) keeps its own aspect ratio: leave `fit` out');
  }

  const spans = new Map<string, Span>();
  const visiting = new Set<string>();
  const transitionOf = (clip: DocumentClip): number =>
    'transition' in clip && clip.transition ? (clip.transition.duration ?? DEFAULTS.transitionDuration) : 0;
  const spanOf = (p: Placed): Span => {
    const known = spans.get(p.path);
    if (known) return known;
    if (visiting.has(p.path)) {
      problem(`${p.path}.start`, 'its start depends on its own end (through `from` and `start: auto`)');
      return {};
    }
    visiting.add(p.path);
    const span = compute(p);
    visiting.delete(p.path);
    spans.set(p.path, span);
    return span;
  };
  const compute = (p: Placed): Span => {
    const { clip } = p;
    const followed = follows.get(p.path);
    let start = given(clip.start);
    if (start === undefined && followed) start = spanOf(followed).start;
    else if (start === undefined) {
      const prior = previous(p);
      const end = prior ? spanOf(prior).end : 0;
      start = end === undefined ? undefined : prior ? end - transitionOf(clip) : end;
    }
    let length = given(clip.duration);
    if (length === undefined) length = autoLength(p, start, followed);
    return { start, ...(start !== undefined && length !== undefined ? { end: start + length } : {}) };
  };
  const autoLength = (p: Placed, start: number | undefined, followed: Placed | undefined): number | undefined => {
    const { clip } = p;
    if (followed) {
      const end = spanOf(followed).end;
      return end === undefined || start === undefined ? undefined : end - start;
    }
    // Only media have a length of their own (captions without a file follow a clip, or are refused already).
    if (srcOf(clip) === undefined && clip.type !== 'voice') return undefined;
    if (clip.type !== 'video' && clip.type !== 'audio' && clip.type !== 'voice' && clip.type !== 'captions')
      return undefined;
    if (clip.type === 'audio' && clip.loop) return undefined;
    const own = media && mediaLength(p, media(p));
    if (own === undefined) {
      if (media) problem(`${p.path}.duration`, "the media's length is not known: give the clip's `duration`");
      return undefined;
    }
    const trim = clip.type === 'video' || clip.type === 'audio' ? seconds(clip.trim ?? DEFAULTS.trim) : 0;
    const speed = clip.type === 'video' ? (clip.speed ?? DEFAULTS.speed) : 1;
    return (own - trim) / speed;
  };
  for (const p of placed) spanOf(p);

  for (const p of placed) {
    const { clip, path } = p;
    const span = spans.get(path)!;
    const length = span.start !== undefined && span.end !== undefined ? span.end - span.start : undefined;
    const own = media && mediaLength(p, media(p));
    const trim = clip.type === 'video' || clip.type === 'audio' ? seconds(clip.trim ?? DEFAULTS.trim) : 0;
    if (own !== undefined && trim > 0 && trim >= own - EPSILON)
      problem(`${path}.trim`, `is ${shown(trim)}, past the end of the media, which lasts ${shown(own)}`);
    else if (length !== undefined && length <= EPSILON) {
      const followed = follows.get(path);
      problem(
        `${path}.${followed && given(clip.duration) === undefined ? 'start' : 'duration'}`,
        followed && given(clip.duration) === undefined
          ? `the clip starts at ${shown(span.start!)}, not before the end of ${followed.path}`
          : 'a clip lasts more than 0 s',
      );
    } else if (
      own !== undefined &&
      length !== undefined &&
      (clip.type === 'video' || (clip.type === 'audio' && !clip.loop)) &&
      length * (clip.type === 'video' ? (clip.speed ?? DEFAULTS.speed) : 1) > own - trim + EPSILON
    ) {
      problem(
        `${path}.duration`,
        `lasts ${shown(length)}, past the end of the media: it has ${shown(own - trim)} after \`trim\`` +
          (clip.type === 'video' && (clip.speed ?? 1) !== 1
            ? `, ${shown((own - trim) / clip.speed!)} at its speed`
            : ''),
      );
    }
    if ('transition' in clip && clip.transition) {
      const earlier = previous(p);
      const d = transitionOf(clip);
      const prior = earlier && spans.get(earlier.path);
      const priorLength = prior?.start !== undefined && prior.end !== undefined ? prior.end - prior.start : undefined;
      if (priorLength !== undefined && d > priorLength + EPSILON)
        problem(
          `${path}.transition.duration`,
          `is ${shown(d)}, longer than the clip before it (${shown(priorLength)})`,
        );
      else if (length !== undefined && d > length + EPSILON)
        problem(`${path}.transition.duration`, `is ${shown(d)}, longer than the clip itself (${shown(length)})`);
      else if (given(clip.start) !== undefined && prior?.end !== undefined && span.start !== undefined) {
        const overlap = prior.end - span.start;
        if (Math.abs(overlap - d) > EPSILON)
          problem(
            `${path}.start`,
            `with its ${shown(d)} transition the clip starts ${shown(d)} before the end of ${earlier!.path}, at ` +
              `${shown(prior.end - d)} (or give \`start: auto\`)`,
          );
      }
    }
  }
  overlaps(placed, spans, previous, transitionOf, problem);

  const ends = [...spans.values()].map((span) => span.end);
  const known = ends.filter((end): end is number => end !== undefined);
  const stated = given(document.output?.duration);
  const duration = stated ?? (ends.length > 0 && known.length === ends.length ? Math.max(...known) : undefined);
  if (placed.length === 0) problem('tracks', 'the document has no clip');
  if (stated !== undefined && stated <= 0) problem('output.duration', 'an output lasts more than 0 s');
  if (limits) limitProblems(document, placed, stated ?? (known.length > 0 ? Math.max(...known) : 0), limits, problem);
  return { spans, problems, placed, follows, ...(duration !== undefined ? { duration } : {}) };
}

/** Clips of one track that overlap, other than by the later one's transition from the one before it. */
function overlaps(
  placed: Placed[],
  spans: Map<string, Span>,
  previous: (p: Placed) => Placed | undefined,
  transitionOf: (clip: DocumentClip) => number,
  problem: (path: string, error: string) => void,
): void {
  const visual = placed.filter((p) => isVisual(p.clip));
  for (const [i, b] of visual.entries()) {
    const late = spans.get(b.path)!;
    if (late.start === undefined || late.end === undefined) continue;
    for (const a of visual.slice(0, i)) {
      const early = spans.get(a.path)!;
      if (a.track !== b.track || early.start === undefined || early.end === undefined) continue;
      const overlap = Math.min(early.end, late.end) - Math.max(early.start, late.start);
      if (overlap <= EPSILON) continue;
      // The passage of a transition from the clip before: its own checks above tell what is wrong with it.
      if (previous(b) === a && transitionOf(b.clip) > 0) continue;
      problem(
        `${b.path}.start`,
        `the clip (${shown(late.start)} to ${shown(late.end)}) overlaps ${a.path} (${shown(early.start)} to ` +
          `${shown(early.end)}) on its track: clips of one track meet only by a transition; put one on another track`,
      );
    }
  }
}

/** A document past the server's limits: clips, different media, pixels, length. */
function limitProblems(
  document: EditDocument,
  placed: Placed[],
  duration: number,
  limits: Limits,
  problem: (path: string, error: string) => void,
): void {
  if (placed.length > limits.maxClips)
    problem('tracks', `${placed.length} clips, more than the limit of ${limits.maxClips} (MEDIAFLOW_MAX_CLIPS)`);
  // Each speech is an input of its own, as each media file is.
  const speeches = voiceSources(document).length;
  const sources = mediaSources(document).sources.length + speeches;
  if (sources > limits.maxInputs)
    problem(
      'tracks',
      `${sources} different media files${speeches > 0 ? ' and speeches' : ''}, more than the limit of ` +
        `${limits.maxInputs} (MEDIAFLOW_MAX_INPUTS)`,
    );
  const width = document.output?.width ?? DEFAULTS.width;
  const height = document.output?.height ?? DEFAULTS.height;
  if (width * height > limits.maxPixels)
    problem(
      'output',
      `${width}x${height} is ${width * height} pixels a frame, more than the limit of ${limits.maxPixels} ` +
        '(MEDIAFLOW_MAX_PIXELS)',
    );
  if (duration > limits.maxDuration)
    problem(
      document.output?.duration !== undefined ? 'output.duration' : 'tracks',
      `the timeline lasts ${shown(duration)}, more than the limit of ${limits.maxDuration} s (MEDIAFLOW_MAX_DURATION)`,
    );
}

/** What the document alone shows is wrong, before anything is fetched (its media's lengths unknown). */
export function documentProblems(document: EditDocument, limits: Limits): Problem[] {
  return [...mediaSources(document).problems, ...layOut(document, undefined, limits).problems];
}

/**
 * A clip whose media lacks what its type needs (a video clip's moving picture, an audio clip's sound), once probed:
 * the engine checks each file for one kind, and a file several clips use in different ways is checked here.
 */
export function mediaKindProblems(document: EditDocument, media: MediaOf): Problem[] {
  const needs: Record<string, [(input: LocalInput) => boolean, string]> = {
    video: [(input) => Boolean(input.facts.video) && !input.facts.isImage, 'video stream'],
    image: [(input) => input.facts.isImage, 'picture'],
    audio: [(input) => Boolean(input.facts.audio), 'sound'],
  };
  return placedClips(document).flatMap((p) => {
    const need = needs[p.clip.type];
    const input = need && media(p);
    if (!input || need[0](input)) return [];
    return [{ path: `${p.path}.src`, error: `${input.source} has no ${need[1]}, which ${aClip(p.clip.type)} needs` }];
  });
}

/** The layout of a video or image clip: filling the frame, or as an overlay. */
function layoutOf(clip: Extract<DocumentClip, { type: 'video' | 'image' }>): Layout {
  if (clip.position === undefined) return { fit: clip.fit ?? DEFAULTS.fit };
  return {
    overlay: {
      position: clip.position,
      width: clip.width ?? DEFAULTS.overlayWidth,
      opacity: clip.opacity ?? DEFAULTS.opacity,
      margin: clip.margin ?? DEFAULTS.margin,
    },
  };
}

const transitionOf = (clip: Extract<DocumentClip, { type: 'video' | 'image' }>): { transition?: Transition } =>
  clip.transition
    ? { transition: { type: clip.transition.type, duration: clip.transition.duration ?? DEFAULTS.transitionDuration } }
    : {};

/** One clip of the timeline, from its place, its times and its media. */
function timelineClip(p: Placed, span: Required<Span>, media: MediaOf): Clip {
  const { clip } = p;
  const base = {
    track: p.track,
    index: p.index,
    path: p.path,
    start: span.start,
    end: span.end,
    ...(clip.id !== undefined ? { id: clip.id } : {}),
  };
  const input = (): LocalInput => {
    const found = media(p);
    if (!found) throw new Error(`no media for ${p.path}`);
    return found;
  };
  switch (clip.type) {
    case 'video':
      return {
        ...base,
        type: 'video',
        media: input(),
        trim: seconds(clip.trim ?? DEFAULTS.trim),
        speed: clip.speed ?? DEFAULTS.speed,
        volume: clip.volume ?? DEFAULTS.volume,
        layout: layoutOf(clip),
        ...transitionOf(clip),
      };
    case 'image':
      return {
        ...base,
        type: 'image',
        media: input(),
        layout: layoutOf(clip),
        motion: clip.motion ?? DEFAULTS.motion,
        ...transitionOf(clip),
      };
    case 'text':
      return { ...base, type: 'text', text: clip.text, style: captionStyleOf(clip) };
    case 'audio':
      return {
        ...base,
        type: 'audio',
        media: input(),
        trim: seconds(clip.trim ?? DEFAULTS.trim),
        volume: clip.volume ?? DEFAULTS.volume,
        loop: clip.loop ?? DEFAULTS.loop,
        fadeIn: seconds(clip.fade_in ?? DEFAULTS.fade),
        fadeOut: seconds(clip.fade_out ?? DEFAULTS.fade),
        role: clip.role ?? DEFAULTS.role,
        duck: clip.duck ?? DEFAULTS.duck,
      };
    case 'voice': {
      const media = input();
      if (!media.speech) throw new Error(`no speech for ${p.path}`);
      return {
        ...base,
        type: 'voice',
        text: clip.text,
        voice: media.speech.voice.id,
        speed: clip.speed ?? DEFAULTS.speed,
        volume: clip.volume ?? DEFAULTS.volume,
        media,
        words: spokenWords(media.speech.sentences),
      };
    }
    case 'captions':
      return {
        ...base,
        type: 'captions',
        source: clip.src !== undefined ? { subtitles: input() } : { from: clip.from! },
        style: captionStyleOf(clip),
        highlight: clip.highlight ?? DEFAULTS.highlight,
        highlightColor: clip.highlight_color ?? DEFAULTS.highlightColor,
        wordsPerLine: clip.words_per_line ?? DEFAULTS.wordsPerLine,
      };
    case 'waveform':
      return {
        ...base,
        type: 'waveform',
        from: clip.from,
        style: clip.style ?? DEFAULTS.waveformStyle,
        color: clip.color ?? DEFAULTS.waveformColor,
        position: clip.position ?? DEFAULTS.waveformPosition,
        width: clip.width ?? DEFAULTS.waveformWidth,
        height: clip.height ?? DEFAULTS.waveformHeight,
      };
  }
}

/**
 * The timeline of a merged, checked document whose media are probed (`merge`: the value each merge field took).
 * Every problem of its times is a 400 naming each where it is (`problemsError`); `limits` (when given) hold its
 * length to MEDIAFLOW_MAX_DURATION.
 */
export function resolve(
  document: EditDocument,
  merge: Record<string, string>,
  media: MediaOf,
  limits?: Limits,
): Timeline {
  const laid = layOut(document, media, limits);
  if (laid.problems.length > 0) throw problemsError(laid.problems);
  const output = document.output ?? {};
  const clips = laid.placed
    .map((p) => timelineClip(p, laid.spans.get(p.path) as Required<Span>, media))
    // Track by track, each in time order (the document's order among clips that start together).
    .sort((a, b) => a.track - b.track || a.start - b.start || a.index - b.index);
  return {
    output: {
      format: output.format ?? DEFAULTS.format,
      width: output.width ?? DEFAULTS.width,
      height: output.height ?? DEFAULTS.height,
      fps: output.fps ?? DEFAULTS.fps,
      quality: output.quality ?? DEFAULTS.quality,
      background: output.background ?? DEFAULTS.background,
      duration: laid.duration!,
    },
    clips,
    merge,
  };
}
