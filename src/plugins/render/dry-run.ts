import { Optional, Type, type LocalInput } from '../../sdk.js';
import type { Clip, ClipFacts, Timeline } from './timeline.js';

/**
 * What `dry_run=true` answers: the resolved timeline as docs/render.md shows it, with absolute times in seconds
 * (to the millisecond) and the facts of each clip's media.
 */

const seconds = (value: number) => Math.round(value * 1000) / 1000;

/** The facts of a media as the answer shows them. */
function factsOf(input: LocalInput): ClipFacts {
  const { facts } = input;
  return {
    duration: facts.duration === undefined ? null : seconds(facts.duration),
    image: facts.isImage,
    ...(facts.video ? { video: { width: facts.video.width, height: facts.video.height, fps: facts.video.fps } } : {}),
    ...(facts.audio ? { audio: { sample_rate: facts.audio.sampleRate, channels: facts.audio.channels } } : {}),
    ...(facts.subtitle ? { subtitles: true } : {}),
  };
}

/** A clip's media: its own, or its subtitle file; none for text, and for captions and waveforms that follow a clip. */
function mediaOf(clip: Clip): LocalInput | undefined {
  if ('media' in clip) return clip.media;
  if (clip.type === 'captions' && 'subtitles' in clip.source) return clip.source.subtitles;
  return undefined;
}

/** One clip of the answer: a voice clip has no src (its speech was made here), and says which voice spoke. */
function clipView(clip: Clip) {
  const media = mediaOf(clip);
  return {
    track: clip.track,
    index: clip.index,
    id: clip.id ?? null,
    type: clip.type,
    start: seconds(clip.start),
    end: seconds(clip.end),
    src: clip.type === 'voice' ? null : (media?.source ?? null),
    facts: media ? factsOf(media) : null,
    ...(clip.type === 'voice' ? { voice: clip.voice } : {}),
  };
}

/** The answer's `timeline`. */
export const timelineView = (timeline: Timeline) => ({
  duration: seconds(timeline.output.duration),
  width: timeline.output.width,
  height: timeline.output.height,
  fps: timeline.output.fps,
  clips: timeline.clips.map(clipView),
  merge: timeline.merge,
});

const nullable = <T extends ReturnType<typeof Type.Number>>(schema: T) => Type.Union([schema, Type.Null()]);

/** The `timeline` answer's schema, for the API docs. */
export const TIMELINE_VIEW = Type.Object(
  {
    duration: Type.Number({ description: 'Seconds the output lasts' }),
    width: Type.Integer(),
    height: Type.Integer(),
    fps: Type.Number(),
    clips: Type.Array(
      Type.Object({
        track: Type.Integer({ description: "The track's index in the document" }),
        index: Type.Integer({ description: "The clip's index on its track, in the document" }),
        id: Type.Union([Type.String(), Type.Null()]),
        type: Type.String({ examples: ['image'] }),
        start: Type.Number({ description: 'Seconds on the output, where the clip starts' }),
        end: Type.Number({ description: 'Seconds on the output, where the clip ends' }),
        src: Type.Union([Type.String(), Type.Null()], { description: "The clip's media, as the document gave it" }),
        voice: Optional(
          Type.String({
            description: 'A voice clip: the voice that spoke, as <engine>:<name>',
            examples: ['flite:slt'],
          }),
        ),
        facts: Type.Union(
          [
            Type.Object({
              duration: nullable(Type.Number()),
              image: Type.Boolean(),
              video: Optional(Type.Object({ width: Type.Integer(), height: Type.Integer(), fps: Type.Number() })),
              audio: Optional(Type.Object({ sample_rate: Type.Integer(), channels: Type.Integer() })),
              subtitles: Optional(Type.Boolean()),
            }),
            Type.Null(),
          ],
          { description: 'What the probe found of the media (null: the clip has none)' },
        ),
      }),
      { description: 'Every clip, track by track, each in time order' },
    ),
    merge: Type.Record(Type.String(), Type.String(), { description: 'The value each merge field took' }),
  },
  { description: 'dry_run=true: the resolved timeline' },
);
