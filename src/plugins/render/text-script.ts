import type { HeardWord } from '../../sdk.js';
import { assScript, karaokeTags } from '../captions/ass-captions.js';
import { assLines } from '../captions/ass-script.js';
import { restyle } from '../captions/caption-style.js';
import { splitCues } from '../captions/cue-lines.js';
import { lineEvents, timedWords, type TimedWord } from '../captions/transcript.js';
import type { Span } from './clock.js';
import { checkScriptCost } from '../captions/ass-cost.js';
import { mergeScripts, type ScriptPart } from '../captions/ass-merge.js';
import type { AudioClip, CaptionsClip, Clip, TextClip, Timeline, VideoClip, VoiceClip } from './timeline.js';

/**
 * The one ASS script of a span's text and captions clips, timed on the timeline's clock (0 at the span's start), drawn
 * by one `ass` filter: text as add-text draws it (literally: the user's strings are escaped into the script, never
 * tags), captions in add-subtitles' styles, word by word highlighted as generate-subtitles and transcribe do.
 */

/** The highlight moves from white to this colour when the style names no text colour. */
const TEXT_COLOUR = '#FFFFFF';

/** The clips captions can be made from: those with sound. */
export type SpokenClip = AudioClip | VideoClip | VoiceClip;

/** What a transcription heard in spoken clips: whisper's words by the `id` of the clip, on its media's own clock. */
export type HeardSpeech = ReadonlyMap<string, readonly HeardWord[]>;

const overlaps = (clip: Clip, span: Span) => clip.start < span.end && clip.end > span.start;

/** A captions clip made from the speech of another clip. */
type FromSpeech = CaptionsClip & { source: { from: string } };

const isFromSpeech = (clip: Clip): clip is FromSpeech => clip.type === 'captions' && 'from' in clip.source;

/** The captions clip's spoken clip: the one its `from` names (the resolver has checked it is there and has sound). */
function spokenClip(timeline: Timeline, captions: FromSpeech): SpokenClip {
  const clip = timeline.clips.find((candidate) => candidate.id === captions.source.from);
  if (!clip || (clip.type !== 'audio' && clip.type !== 'video' && clip.type !== 'voice'))
    throw new Error(`${captions.path}: no clip with sound has the id its \`from\` names`);
  return clip;
}

/**
 * The clips whose speech must be transcribed before the span's script is written (with `textScript`): those named by
 * a captions clip's `from` that have no word times of their own (an audio or video clip, not a voice).
 */
export function speechToTranscribe(timeline: Timeline, span: Span): SpokenClip[] {
  const spoken = timeline.clips
    .filter((clip): clip is FromSpeech => isFromSpeech(clip) && overlaps(clip, span))
    .map((clip) => spokenClip(timeline, clip))
    .filter((clip) => clip.type !== 'voice');
  return [...new Set(spoken)];
}

/**
 * The words the spoken clip says, on the timeline's clock: a voice's own, as its synthesis timed them, else the
 * transcription's (times of its media, after the clip's trim and at its speed); only those said while the clip plays,
 * none past its end.
 */
function spokenWords(clip: SpokenClip, heard: HeardSpeech): TimedWord[] {
  let words: TimedWord[];
  if (clip.type === 'voice') {
    words = clip.words.map((word) => ({ ...word, start: clip.start + word.start, end: clip.start + word.end }));
  } else {
    const said = clip.id === undefined ? undefined : heard.get(clip.id);
    if (!said) throw new Error(`${clip.path}: its speech has not been transcribed for the captions made from it`);
    const speed = clip.type === 'video' ? clip.speed : 1;
    const onTimeline = (time: number) => clip.start + (time - clip.trim) / speed;
    words = timedWords(said, clip.media.facts.duration).map((word) => ({
      ...word,
      start: onTimeline(word.start),
      end: onTimeline(word.end),
    }));
  }
  return words
    .filter((word) => word.start >= clip.start && word.start < clip.end)
    .map((word) => ({ ...word, end: Math.min(word.end, clip.end) }));
}

/** The script of captions made from speech: lines of the words said while the captions clip shows. */
function speechCaptions(captions: CaptionsClip, spoken: SpokenClip, heard: HeardSpeech): string {
  const words = spokenWords(spoken, heard).filter((word) => word.start >= captions.start && word.start < captions.end);
  const highlight = captions.highlight === 'word' ? { highlight: captions.highlightColor } : {};
  return assScript(
    lineEvents(splitCues(words, captions.wordsPerLine), { style: captions.style, ...highlight }),
    captions.style,
  );
}

/**
 * An event's text of a subtitle file with karaoke tags before each word (what is not an override block, a line
 * break or a space), each lit for a share of the event in proportion to its length, as generate-subtitles times them.
 */
export function highlightWords(text: string, seconds: number, highlight: string, base: string): string {
  const tokens = text.match(/\{[^}]*\}|\\[Nnh]|\s+|(?:[^\s{\\]|\\(?![Nnh]))+|[{\\]/g) ?? [];
  const isWord = (token: string) => !/^(\{|\\[Nnh]$|\s)/.test(token);
  const words = tokens.filter(isWord);
  if (words.length === 0) return text;
  const tags = karaokeTags(
    words.map((word) => Array.from(word).length),
    seconds,
    highlight,
    base,
  );
  let next = 0;
  return tokens.map((token) => (isWord(token) ? `${tags[next++]}${token}` : token)).join('');
}

/** A text or captions clip's part of the script. */
function partOf(clip: TextClip | CaptionsClip, timeline: Timeline, heard: HeardSpeech): ScriptPart {
  const placed = {
    prefix: `t${clip.track}c${clip.index}-`,
    window: { start: clip.start, end: clip.end },
    track: clip.track,
  };
  if (clip.type === 'text') {
    const ass = assScript([{ start: clip.start, end: clip.end, text: assLines(clip.text) }], clip.style);
    return { ...placed, ass, shift: 0, keepLayout: false };
  }
  const { source } = clip;
  if ('from' in source) {
    const spoken = spokenClip(timeline, { ...clip, source });
    return { ...placed, ass: speechCaptions(clip, spoken, heard), shift: 0, keepLayout: false };
  }
  const { subtitles } = source;
  if (subtitles.ass === undefined) throw new Error(`${clip.path}: the subtitles were not converted to ASS`);
  const base = clip.style.color ?? TEXT_COLOUR;
  return {
    ...placed,
    // Restyled as add-subtitles restyles a subtitle file, its times shifted to the clip's start.
    ass: restyle(subtitles.ass, clip.style, timeline.output.height),
    shift: clip.start,
    keepLayout: true,
    ...(clip.highlight === 'word'
      ? { text: (text: string, seconds: number) => highlightWords(text, seconds, clip.highlightColor, base) }
      : {}),
  };
}

/**
 * The ASS script of the span's text and captions clips, or undefined when it has none; `heard` holds the speech of
 * the clips `speechToTranscribe` names. The step that transcribes them writes the file with this same function.
 */
export function textScript(timeline: Timeline, span: Span, heard: HeardSpeech = new Map()): string | undefined {
  const clips = timeline.clips.filter(
    (clip): clip is TextClip | CaptionsClip =>
      (clip.type === 'text' || clip.type === 'captions') && overlaps(clip, span),
  );
  if (clips.length === 0) return undefined;
  const script = mergeScripts(
    clips.map((clip) => partOf(clip, timeline, heard)),
    span,
    timeline.output.height,
  );
  // A subtitle file drawn by a captions clip costs libass what it costs add-subtitles: held to the same limit.
  checkScriptCost(script, { fps: timeline.output.fps, duration: span.end - span.start }, "the render's text clips");
  return script;
}
