import type { LocalInput, Quality } from '../../sdk.js';
import type { CaptionStyle } from '../captions/caption-style.js';
import type { TimedWord } from '../captions/transcript.js';

/**
 * The resolved timeline: what `resolve` makes of an edit document and its inputs' facts, and the only thing the
 * compiler (picture, sound, captions, scenes) reads. Every time is absolute, in seconds on the output's clock;
 * every `auto` is replaced by a number; merge fields are substituted; every media clip carries its input. The
 * dry run answers a view of it (docs/render.md).
 */
export interface Timeline {
  output: RenderOutput;
  /** Every clip of every track, track by track (a later track is drawn above an earlier one), each in time order. */
  clips: Clip[];
  /** The value each merge field took (the request's, else the document's default). */
  merge: Record<string, string>;
}

export type RenderFormat = 'mp4' | 'mov' | 'mkv' | 'webm' | 'gif';

export interface RenderOutput {
  format: RenderFormat;
  /** Even, 16 to 4096. */
  width: number;
  height: number;
  fps: number;
  quality: Quality;
  /** Shown where nothing is drawn: `#RRGGBB`. */
  background: string;
  /** The output's length: the document's, else the end of the last clip. */
  duration: number;
}

export type ClipType = Clip['type'];

/** What every clip has. */
export interface ClipBase {
  /** The track's index in the document (0: drawn first, at the bottom). */
  track: number;
  /** The clip's index on its track, in the document's order. */
  index: number;
  /** The document's `id`, when it gave one. */
  id?: string;
  /** Where the clip is in the document, for errors: `tracks[1].clips[0]`. */
  path: string;
  /** When the clip starts and ends on the output's clock; `end > start`. */
  start: number;
  end: number;
}

/** How a video or image fills the frame. */
export type Fit = 'cover' | 'contain' | 'contain-blur' | 'stretch';

/** A corner or the centre, as overlay-image places a logo. */
export type OverlayPosition = 'top-right' | 'top-left' | 'bottom-left' | 'bottom-right' | 'center';

/** A picture drawn over the frame at a corner instead of filling it (a logo, a picture in picture). */
export interface Overlay {
  position: OverlayPosition;
  /** Share of the frame's width, 0 to 1; the height follows the picture's aspect ratio. */
  width: number;
  /** 0 to 1. */
  opacity: number;
  /** Share of the frame's width between the picture and the frame's edges. */
  margin: number;
}

export type TransitionType =
  'fade' | 'wipeleft' | 'wiperight' | 'slideup' | 'slidedown' | 'slideleft' | 'slideright' | 'circleopen' | 'dissolve';

/**
 * The passage from the clip before this one on its track: the two overlap by `duration` seconds, from this
 * clip's `start` to the previous clip's `end` (= start + duration).
 */
export interface Transition {
  type: TransitionType;
  duration: number;
}

export type Motion = 'none' | 'zoom-in' | 'zoom-out' | 'pan-left' | 'pan-right' | 'pan-up' | 'pan-down';

/** How a visual media clip is laid out: filling the frame, or as an overlay. */
export type Layout = { fit: Fit } | { overlay: Overlay };

export interface VideoClip extends ClipBase {
  type: 'video';
  media: LocalInput;
  /** Seconds of the media skipped at its start. */
  trim: number;
  /** Playback speed (1: as it is); the clip shows (end - start) * speed seconds of the media from `trim`. */
  speed: number;
  /** The clip's sound: its gain in dB, or muted. A media without sound is muted whatever this says. */
  volume: number | 'mute';
  layout: Layout;
  transition?: Transition;
}

export interface ImageClip extends ClipBase {
  type: 'image';
  media: LocalInput;
  layout: Layout;
  motion: Motion;
  transition?: Transition;
}

/** Text drawn with libass, in add-subtitles' caption style. */
export interface TextClip extends ClipBase {
  type: 'text';
  /** The lines, as given (drawn literally: never ASS tags). */
  text: string;
  style: CaptionStyle;
}

export interface AudioClip extends ClipBase {
  type: 'audio';
  media: LocalInput;
  trim: number;
  /** Gain in dB: every clip at its own level, summed, with no normalisation of the whole. */
  volume: number;
  /** Repeats until the clip's end. */
  loop: boolean;
  fadeIn: number;
  fadeOut: number;
  role: 'music' | 'voice';
  /** A music clip dips while any voice clip sounds. */
  duck: boolean;
}

/** Speech made from text; `media` is the synthesised sound, whose length is the clip's by default. */
export interface VoiceClip extends ClipBase {
  type: 'voice';
  text: string;
  /** The voice that spoke, `<engine>:<name>` (the document's, or the server's default). */
  voice: string;
  speed: number;
  volume: number;
  media: LocalInput;
  /**
   * The text's words as captions show them, each with where it is spoken, in seconds from the clip's start: captions
   * `from` this clip take these, never a transcription.
   */
  words: TimedWord[];
}

/** Captions drawn with libass: from a subtitle file, or from the speech of another clip. */
export interface CaptionsClip extends ClipBase {
  type: 'captions';
  /**
   * A subtitle file (its `ass` text is on the LocalInput), its times shifted to the clip's start; or the clip whose
   * speech is captioned: a voice clip's own word timings, else a transcription of an audio or video clip.
   */
  source: { subtitles: LocalInput } | { from: string };
  style: CaptionStyle;
  highlight: 'none' | 'word';
  /** The highlight's colour, `#RRGGBB`. */
  highlightColor: string;
  /** Captions from speech: the most words of a line (a line also ends at a sentence's end). */
  wordsPerLine: number;
}

/** The sound of another clip drawn as a moving waveform: the podcast audiogram. */
export interface WaveformClip extends ClipBase {
  type: 'waveform';
  /** The `id` of the clip whose sound is drawn. */
  from: string;
  style: 'line' | 'bars';
  /** `#RRGGBB`. */
  color: string;
  /** Where its box sits, and its size as shares of the frame. */
  position: OverlayPosition | 'bottom' | 'top';
  width: number;
  height: number;
}

export type Clip = VideoClip | ImageClip | TextClip | AudioClip | VoiceClip | CaptionsClip | WaveformClip;

/** The clips drawn in the picture, in drawing order. */
export type VisualClip = VideoClip | ImageClip | TextClip | CaptionsClip | WaveformClip;
/** The clips heard, each mixed at its own level. */
export type SoundClip = VideoClip | AudioClip | VoiceClip;

export const isMediaVisual = (clip: Clip): clip is VideoClip | ImageClip =>
  clip.type === 'video' || clip.type === 'image';

export const isSound = (clip: Clip): clip is SoundClip =>
  clip.type === 'audio' || clip.type === 'voice' || (clip.type === 'video' && clip.volume !== 'mute');

/** The facts the dry run shows of a clip's media, in the answer's snake_case. */
export interface ClipFacts {
  /** Seconds, when the file says (a picture has none). */
  duration: number | null;
  /** A still picture rather than a video. */
  image: boolean;
  video?: { width: number; height: number; fps: number };
  audio?: { sample_rate: number; channels: number };
  subtitles?: boolean;
}
