import { Optional, Param, QUALITIES, TIME_PATTERN, Type, type Static } from '../../sdk.js';
import { captionStyleFields, COLOUR_PATTERN } from '../captions/caption-style.js';

/**
 * The edit document of `/render/`: one schema, read by the document's checks (document-check.ts), the OpenAPI
 * document and the MCP tool (the `edit` parameter's schema) and docs/render.md (its reference is made from it, and a
 * test holds the two together). Snake_case throughout; every object refuses fields it does not name.
 */

/** The defaults the resolver gives what a document leaves out, as the schema states them. */
export const DEFAULTS = {
  format: 'mp4',
  width: 1080,
  height: 1920,
  fps: 30,
  quality: 'balanced',
  background: '#000000',
  trim: 0,
  volume: 0,
  speed: 1,
  fit: 'cover',
  motion: 'none',
  overlayWidth: 0.15,
  opacity: 1,
  margin: 0.03,
  transitionDuration: 0.5,
  loop: false,
  fade: 0,
  role: 'music',
  duck: false,
  highlight: 'none',
  highlightColor: '#FFD700',
  wordsPerLine: 8,
  waveformStyle: 'line',
  waveformColor: '#FFFFFF',
  waveformPosition: 'bottom',
  waveformWidth: 1,
  waveformHeight: 0.25,
} as const;

export const RENDER_FORMATS = ['mp4', 'mov', 'mkv', 'webm', 'gif'] as const;
export const FITS = ['cover', 'contain', 'contain-blur', 'stretch'] as const;
export const OVERLAY_POSITIONS = ['top-right', 'top-left', 'bottom-left', 'bottom-right', 'center'] as const;
export const MOTIONS = ['none', 'zoom-in', 'zoom-out', 'pan-left', 'pan-right', 'pan-up', 'pan-down'] as const;
export const TRANSITIONS = [
  'fade',
  'wipeleft',
  'wiperight',
  'slideup',
  'slidedown',
  'slideleft',
  'slideright',
  'circleopen',
  'dissolve',
] as const;

/** A clip's `id`, which `from` names. */
const ID_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
const TIME_WORDS = 'a time: seconds (12.5) or [HH:]MM:SS[.mmm] (01:02:03.5)';

const timeBranches = () => [Type.Number({ minimum: 0 }), Type.String({ pattern: TIME_PATTERN })];

/** A time, as every time field of mediaflow takes one. */
const time = (description: string, options: { default?: number } = {}) =>
  Type.Union(timeBranches(), { title: TIME_WORDS, description, ...options });

/** A time, or `auto` (the default): worked out from the media and the clips around it. */
const timeOrAuto = (description: string) =>
  Type.Union([...timeBranches(), Type.Literal('auto')], {
    title: `${TIME_WORDS}, or auto`,
    description,
    default: 'auto',
  });

const colour = (description: string, fallback: string) =>
  Type.String({
    pattern: '^#[0-9A-Fa-f]{6}$',
    title: 'a colour as #RRGGBB',
    description: `${description}, as #RRGGBB (default ${fallback})`,
    default: fallback,
  });

const src = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 4096,
    description:
      `The ${what}: an http(s) URL; a file sent with the request in a part named after a merge field ` +
      '(`"src": "{{PHOTO}}"`); on the CLI, a local path',
  });

const gain = (what: string) =>
  Type.Number({
    minimum: -60,
    maximum: 20,
    default: DEFAULTS.volume,
    description: `${what} in dB (0: as it is); every clip is mixed at its own level, summed, with no normalisation`,
  });

/** What every clip has: its type, an optional id, and where it sits on the timeline. */
const clipBase = <T extends string>(type: T, what: string) => ({
  type: Type.Literal(type, { description: `\`${type}\`: ${what}` }),
  id: Optional(
    Type.String({
      pattern: ID_PATTERN,
      title: 'an id of 1 to 64 letters, digits, -, _ and .',
      description: 'A name for the clip, unique in the document, by which `from` names it',
    }),
  ),
  start: Optional(
    timeOrAuto(
      'When the clip starts on the timeline; `auto`: at the end of the clip before it on its track (less its ' +
        "`transition`'s duration), or for `captions` and `waveform` with `from`, where the clip they follow starts",
    ),
  ),
});

/** `duration` of a clip whose media gives its length. */
const mediaDuration = (auto: string) =>
  Optional(timeOrAuto(`How long the clip lasts on the timeline; \`auto\`: ${auto}`));

/** `duration` of a clip that has no length of its own. */
const givenDuration = (what: string) =>
  Type.Union(timeBranches(), {
    title: `${TIME_WORDS} (not auto: a ${what} has no length of its own)`,
    description: `How long the ${what} is shown: required`,
  });

/** How a video or image is laid out: filling the frame by `fit`, or as an overlay with `position`. */
const layoutFields = {
  fit: Optional(
    Param.choice(FITS, {
      default: DEFAULTS.fit,
      description:
        'How it fills the frame: cover (cropped around the centre), contain (letterboxed on the background), ' +
        'contain-blur (letterboxed on a blurred, enlarged copy of itself), stretch',
    }),
  ),
  position: Optional(
    Param.choice(OVERLAY_POSITIONS, {
      description:
        'Placed as an overlay (a logo, a picture in picture) at this corner or the centre, instead of filling the ' +
        'frame; with `width`, `opacity` and `margin`',
    }),
  ),
  width: Optional(
    Type.Number({
      minimum: 0.01,
      maximum: 1,
      default: DEFAULTS.overlayWidth,
      description: "An overlay's width as a share of the frame's width; its height follows its aspect ratio",
    }),
  ),
  opacity: Optional(
    Type.Number({ minimum: 0, maximum: 1, default: DEFAULTS.opacity, description: "An overlay's opacity, 0 to 1" }),
  ),
  margin: Optional(
    Type.Number({
      minimum: 0,
      maximum: 0.5,
      default: DEFAULTS.margin,
      description: "Space between an overlay and the frame's edges, as a share of the frame's width",
    }),
  ),
};

const TRANSITION = Type.Object(
  {
    type: Param.choice(TRANSITIONS, { description: 'How the picture passes from the clip before to this one' }),
    duration: Optional(
      Type.Number({
        minimum: 0.01,
        maximum: 60,
        default: DEFAULTS.transitionDuration,
        description: 'Seconds the two clips overlap',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'a transition',
    description:
      'The passage from the clip before this one on its track: the two overlap by `duration`, and with ' +
      '`start: auto` this clip starts that much before the end of the one before (two 2 s clips with a 0.5 s fade ' +
      'last 3.5 s)',
  },
);

export const VIDEO_CLIP = Type.Object(
  {
    ...clipBase('video', 'a video, its picture and its sound'),
    src: src('video'),
    duration: mediaDuration("the video's length after `trim`, at `speed`"),
    trim: Optional(time('Seconds of the video skipped at its start', { default: DEFAULTS.trim })),
    volume: Optional(
      Type.Union([Type.Number({ minimum: -60, maximum: 20 }), Type.Literal('mute')], {
        title: 'a gain in dB from -60 to 20, or mute',
        default: DEFAULTS.volume,
        description: 'Its sound in dB (0: as it is), or `mute`',
      }),
    ),
    speed: Optional(
      Type.Number({
        minimum: 0.25,
        maximum: 4,
        default: DEFAULTS.speed,
        description: 'Playback speed, 0.25 to 4 (the sound keeps its pitch)',
      }),
    ),
    ...layoutFields,
    transition: Optional(TRANSITION),
  },
  { additionalProperties: false, title: 'a video clip' },
);

export const IMAGE_CLIP = Type.Object(
  {
    ...clipBase('image', 'a picture, shown still or with motion'),
    src: src('picture'),
    duration: givenDuration('picture'),
    ...layoutFields,
    motion: Optional(
      Param.choice(MOTIONS, {
        default: DEFAULTS.motion,
        description: 'A slow movement over the picture: a zoom in or out, or a pan',
      }),
    ),
    transition: Optional(TRANSITION),
  },
  { additionalProperties: false, title: 'an image clip' },
);

export const TEXT_CLIP = Type.Object(
  {
    ...clipBase('text', "text drawn over the picture, in add-subtitles' caption style"),
    duration: givenDuration('text'),
    text: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'The text, drawn literally (a newline starts another line)',
    }),
    ...captionStyleFields,
  },
  { additionalProperties: false, title: 'a text clip' },
);

export const AUDIO_CLIP = Type.Object(
  {
    ...clipBase('audio', 'a sound: music, a voice recording, an effect'),
    src: src('sound (an audio file, or a video whose sound is taken)'),
    duration: mediaDuration("the sound's length after `trim`; required with `loop`"),
    trim: Optional(time('Seconds of the sound skipped at its start', { default: DEFAULTS.trim })),
    volume: Optional(gain('Its level')),
    loop: Optional(
      Type.Boolean({ default: DEFAULTS.loop, description: 'Repeat the sound until the clip ends (give `duration`)' }),
    ),
    fade_in: Optional(time('Seconds the sound fades in over at its start', { default: DEFAULTS.fade })),
    fade_out: Optional(time('Seconds the sound fades out over at its end', { default: DEFAULTS.fade })),
    role: Optional(
      Param.choice(['music', 'voice'], {
        default: DEFAULTS.role,
        description: 'What the sound is: `voice` clips make `duck` music dip',
      }),
    ),
    duck: Optional(
      Type.Boolean({
        default: DEFAULTS.duck,
        description: 'A music clip dips (by at least 6 dB) while any voice clip sounds, as mix-audio ducks',
      }),
    ),
  },
  { additionalProperties: false, title: 'an audio clip' },
);

export const VOICE_CLIP = Type.Object(
  {
    ...clipBase('voice', 'speech made from text'),
    duration: mediaDuration("the speech's own length"),
    text: Type.String({ minLength: 1, maxLength: 5000, description: 'What is said' }),
    voice: Optional(
      Type.String({
        pattern: '^([a-z][a-z0-9]*:[A-Za-z0-9_.+-]{1,100})?$',
        title: 'a voice as <engine>:<name> (flite:slt, espeak:en-us), or empty',
        description:
          "The voice, `<engine>:<name>` (GET /voices/ lists them); default (or empty, as a template's merge field " +
          "may leave it): the server's default voice",
      }),
    ),
    speed: Optional(
      Type.Number({ minimum: 0.5, maximum: 2, default: DEFAULTS.speed, description: 'Speaking speed, 0.5 to 2' }),
    ),
    volume: Optional(gain('Its level')),
  },
  { additionalProperties: false, title: 'a voice clip' },
);

export const CAPTIONS_CLIP = Type.Object(
  {
    ...clipBase('captions', 'captions from a subtitle file, or from the speech of another clip'),
    duration: mediaDuration('to the end of the subtitles, or with `from` to the end of the clip they follow'),
    src: Optional(src("subtitles (SRT, WebVTT or ASS), whose times are shifted to the clip's `start`")),
    from: Optional(
      Type.String({
        pattern: ID_PATTERN,
        title: "a clip's id",
        description:
          'The `id` of an audio, voice or video clip whose speech is captioned (transcribed with the configured ' +
          'model; a voice clip by the times its synthesis gave its words, never transcribed); give `src` or `from`',
      }),
    ),
    words_per_line: Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: DEFAULTS.wordsPerLine,
        description:
          'With `from`: the most words in one caption line, a line also ending at the end of a sentence (as ' +
          'generate-subtitles breaks a text)',
      }),
    ),
    ...captionStyleFields,
    highlight: Optional(
      Param.choice(['none', 'word'], {
        default: DEFAULTS.highlight,
        description: 'word: each word lights up as it is said',
      }),
    ),
    highlight_color: Optional(
      Type.String({
        pattern: COLOUR_PATTERN,
        title: 'a colour as #RRGGBB or #RRGGBBAA',
        description:
          "The highlighted word's colour with `highlight: word`, as #RRGGBB or #RRGGBBAA " +
          `(default ${DEFAULTS.highlightColor})`,
        default: DEFAULTS.highlightColor,
      }),
    ),
  },
  { additionalProperties: false, title: 'a captions clip' },
);

export const WAVEFORM_CLIP = Type.Object(
  {
    ...clipBase('waveform', 'the sound of another clip drawn as a moving waveform (an audiogram)'),
    duration: mediaDuration('the span of the clip it follows'),
    from: Type.String({
      pattern: ID_PATTERN,
      title: "a clip's id",
      description: 'The `id` of the audio, voice or video clip whose sound is drawn',
    }),
    style: Optional(
      Param.choice(['line', 'bars'], { default: DEFAULTS.waveformStyle, description: 'A line, or bars' }),
    ),
    color: Optional(colour('Its colour', DEFAULTS.waveformColor)),
    position: Optional(
      Param.choice([...OVERLAY_POSITIONS, 'bottom', 'top'], {
        default: DEFAULTS.waveformPosition,
        description: 'Where its box sits in the frame',
      }),
    ),
    width: Optional(
      Type.Number({
        minimum: 0.05,
        maximum: 1,
        default: DEFAULTS.waveformWidth,
        description: "Its box's width as a share of the frame's",
      }),
    ),
    height: Optional(
      Type.Number({
        minimum: 0.05,
        maximum: 1,
        default: DEFAULTS.waveformHeight,
        description: "Its box's height as a share of the frame's",
      }),
    ),
  },
  { additionalProperties: false, title: 'a waveform clip' },
);

/** Every clip type, by its `type`. */
export const CLIP_TYPES = {
  video: VIDEO_CLIP,
  image: IMAGE_CLIP,
  text: TEXT_CLIP,
  audio: AUDIO_CLIP,
  voice: VOICE_CLIP,
  captions: CAPTIONS_CLIP,
  waveform: WAVEFORM_CLIP,
} as const;

const CLIP = Type.Union(Object.values(CLIP_TYPES), {
  title: 'a clip',
  description: 'One clip: its `type` says which fields it has',
  discriminator: { propertyName: 'type' },
});

export const OUTPUT = Type.Object(
  {
    format: Optional(Param.format(RENDER_FORMATS, { default: DEFAULTS.format, description: 'The container' })),
    width: Optional(
      Type.Integer({
        minimum: 16,
        maximum: 4096,
        multipleOf: 2,
        default: DEFAULTS.width,
        description: 'Frame width in pixels, even',
      }),
    ),
    height: Optional(
      Type.Integer({
        minimum: 16,
        maximum: 4096,
        multipleOf: 2,
        default: DEFAULTS.height,
        description: 'Frame height in pixels, even',
      }),
    ),
    fps: Optional(Type.Number({ minimum: 1, maximum: 120, default: DEFAULTS.fps, description: 'Frames per second' })),
    quality: Optional(
      Param.choice(QUALITIES, {
        default: DEFAULTS.quality,
        description: 'Speed against size of the encode: fast, balanced, small',
      }),
    ),
    background: Optional(colour('Shown where nothing is drawn', DEFAULTS.background)),
    duration: Optional(time('How long the output lasts (default: until the last clip ends)')),
  },
  { additionalProperties: false, title: 'the output', description: 'The video made: its container, frame and length' },
);

const TRACK = Type.Object(
  {
    clips: Type.Array(CLIP, { description: 'The clips of the track, in the order `start: auto` follows' }),
  },
  {
    additionalProperties: false,
    title: 'a track',
    description: 'A layer: a later track is drawn above an earlier one; the sound of every clip is mixed',
  },
);

/** An example: two pictures crossing with a fade, a title from a merge field, looped music. */
export const EXAMPLE = {
  output: { width: 1080, height: 1920, fps: 30 },
  merge: { TITLE: 'Episode 12' },
  tracks: [
    {
      clips: [
        { type: 'image', src: 'https://example.com/a.jpg', duration: 5, motion: 'zoom-in' },
        {
          type: 'image',
          src: 'https://example.com/b.jpg',
          duration: 5,
          transition: { type: 'fade', duration: 0.5 },
        },
      ],
    },
    { clips: [{ type: 'text', text: '{{TITLE}}', start: 0, duration: 3, position: 'top' }] },
    {
      clips: [{ type: 'audio', src: 'https://example.com/music.mp3', volume: -12, loop: true, duration: 9.5 }],
    },
  ],
};

export const EDIT_SCHEMA = Type.Object(
  {
    description: Optional(
      Type.String({ maxLength: 1000, description: 'What the edit is (a template says it in the list of templates)' }),
    ),
    output: Optional(OUTPUT),
    merge: Optional(
      Type.Object(
        {},
        {
          additionalProperties: Type.Union([Type.String({ maxLength: 4096 }), Type.Number()], {
            title: 'text or a number',
          }),
          title: 'the merge defaults',
          description:
            "Defaults of the merge fields: `{{NAME}}` anywhere in the document's text is the request's `merge` " +
            "value of NAME, else this one's",
        },
      ),
    ),
    tracks: Type.Array(TRACK, { minItems: 1, description: 'The layers, from the bottom up' }),
  },
  { additionalProperties: false, title: 'the edit document' },
);

export type EditDocument = Static<typeof EDIT_SCHEMA>;
export type DocumentClip = EditDocument['tracks'][number]['clips'][number];
export type ClipOf<T extends DocumentClip['type']> = Extract<DocumentClip, { type: T }>;
