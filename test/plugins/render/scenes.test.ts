import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import type { LocalInput, Plan } from '../../../src/engine/contract/plugin.js';
import { FrameClock } from '../../../src/plugins/render/clock.js';
import { compile } from '../../../src/plugins/render/compile.js';
import { cutFrames, SCENE_MEDIA, scenesOf } from '../../../src/plugins/render/scenes.js';
import type { Clip, Timeline } from '../../../src/plugins/render/timeline.js';
import { timelineOf } from './picture-helpers.js';

/**
 * scenes.ts: where a timeline may be cut (nothing drawn across the cut but what is drawn alike on both sides), how
 * its scenes are chosen among those frames, and the plan compile.ts makes of them, without ffmpeg.
 */

const picture = (file: string): LocalInput => ({
  file,
  source: `https://example.com/${file}`,
  facts: {
    formatName: 'png_pipe',
    isImage: true,
    video: { codec: 'png', width: 640, height: 360, fps: 25, pixFmt: 'rgb24' },
  },
});
const movie = (file: string, seconds = 600): LocalInput => ({
  file,
  source: `https://example.com/${file}`,
  facts: {
    formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
    isImage: false,
    duration: seconds,
    video: { codec: 'h264', width: 640, height: 360, fps: 25, pixFmt: 'yuv420p' },
    audio: { codec: 'aac', sampleRate: 48000, channels: 2 },
  },
});
/** Subtitles as the engine hands them over: their cues as ASS events (from 1 to 3 s, and from 5 to 6 s). */
const subtitles: LocalInput = {
  ...picture('cues.srt'),
  facts: { formatName: 'srt', isImage: false, subtitle: { codec: 'subrip' } },
  ass: [
    '[Script Info]',
    'ScriptType: v4.00+',
    'PlayResX: 384',
    'PlayResY: 288',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, ' +
      'Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, ' +
      'MarginR, MarginV, Encoding',
    'Style: Default,Arial,16,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0',
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    'Dialogue: 0,0:00:01.00,0:00:03.00,Default,,0,0,0,,one',
    'Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,two',
    '',
  ].join('\n'),
};

const still = (media: LocalInput, start: number, end: number, more: Partial<Clip> = {}): Clip =>
  ({ type: 'image', track: 0, start, end, media, layout: { fit: 'cover' }, motion: 'none', ...more }) as Clip;
const video = (media: LocalInput, start: number, end: number, more: Partial<Clip> = {}): Clip =>
  ({
    ...{ type: 'video', track: 0, start, end, media, trim: start, speed: 1, volume: 0 },
    ...{ layout: { fit: 'cover' }, ...more },
  }) as Clip;
const logo = (start: number, end: number, track = 1): Clip =>
  still(picture('logo.png'), start, end, {
    track,
    layout: { overlay: { position: 'top-right', width: 0.2, opacity: 1, margin: 0.03 } },
  });
const fade = { transition: { type: 'fade' as const, duration: 1 } };

/** Pictures of `seconds` each, back to back on track 0, each a file of its own. */
const pictures = (count: number, seconds: number): Clip[] =>
  Array.from({ length: count }, (_, i) => still(picture(`p${i}.png`), i * seconds, (i + 1) * seconds));

/** The cut frames of a timeline at 25 fps, as seconds. */
const cutsOf = (timeline: Timeline) => cutFrames(timeline).map((frame) => frame / 25);

const LIMITS = { seconds: 60, media: SCENE_MEDIA };

describe('where a timeline may be cut', () => {
  it('cuts between pictures, but not under a line of text, a transition, a video overlay or a waveform', () => {
    const timeline = timelineOf([
      ...pictures(10, 2),
      { type: 'text', track: 1, start: 1, end: 5, text: 'Title', style: {} } as Clip,
      still(picture('x.png'), 20, 22),
      still(picture('y.png'), 21, 24, fade),
      video(movie('pip.mp4'), 12, 15, {
        track: 2,
        layout: { overlay: { position: 'bottom-left', width: 0.3, opacity: 1, margin: 0 } },
      }),
      { type: 'audio', track: 3, id: 'music', start: 0, end: 24, media: movie('song.m4a') } as Clip,
      ...[{ type: 'waveform', track: 4, start: 15.5, end: 17, from: 'music', style: 'line' } as Clip],
    ]);
    // 2 and 4 are under the title (1 to 5 s); 14 under the video in the corner (12 to 15 s); 15.5 and 17, where the
    // waveform starts and ends, under pictures; 22 inside the fade (21 to 22 s). A transition's start (21) is a cut:
    // the picture before it runs on into the next scene, blended there.
    assert.deepEqual(cutsOf(timeline), [6, 8, 10, 12, 18, 20, 21]);
  });

  it('cuts a run of cross-faded pictures where each fade starts, and never inside one', () => {
    const timeline = timelineOf([
      still(picture('a.png'), 0, 5),
      still(picture('b.png'), 4, 9, fade),
      still(picture('c.png'), 8, 13, fade),
    ]);
    assert.deepEqual(cutsOf(timeline), [4, 8]);
  });

  it('cuts across a logo, and across captions only between their lines', () => {
    const timeline = timelineOf([
      ...pictures(4, 2),
      logo(0, 8),
      {
        ...{ type: 'captions', track: 2, start: 0, end: 8, source: { subtitles } },
        ...{ style: {}, highlight: 'word', highlightColor: '#FFFF00' },
      } as Clip,
    ]);
    // The lines show from 1 to 3 s and from 5 to 6 s: 2 is under the first.
    assert.deepEqual(cutsOf(timeline), [4, 6]);
  });

  it('never cuts inside a video clip, nor on the timeline’s ends', () => {
    const talk = movie('talk.mp4');
    const timeline = timelineOf([video(talk, 0, 300), video(talk, 300, 400)]);
    assert.deepEqual(cutsOf(timeline), [300]);
  });
});

describe('the scenes of a timeline', () => {
  /** The scenes' bounds in frames, checking that each starts where the one before ends, on a frame. */
  function frames(timeline: Timeline, limits = LIMITS): number[] {
    const scenes = scenesOf(timeline, limits);
    const clock = new FrameClock(timeline.output.fps, { start: 0, end: timeline.output.duration });
    assert.equal(scenes[0]!.start, 0);
    assert.equal(scenes.at(-1)!.end, timeline.output.duration);
    scenes.forEach((scene, i) => {
      if (i > 0) assert.equal(scene.start, scenes[i - 1]!.end, `scene ${i} starts where the one before ends`);
      assert.equal(clock.duration(clock.frame(scene.start)), scene.start, `scene ${i} starts on a frame`);
    });
    return [...scenes.map((scene) => clock.frame(scene.start)), clock.frames];
  }

  it('keeps a short in one scene: six pictures under a logo, a title and captions', () => {
    const timeline = timelineOf([
      ...pictures(6, 5),
      logo(0, 30),
      { type: 'text', track: 2, start: 0, end: 3, text: 'Title', style: {} } as Clip,
    ]);
    assert.deepEqual(frames(timeline), [0, 750]);
  });

  it('cuts a long timeline near every MEDIAFLOW_PART_SECONDS, as evenly as its clips allow', () => {
    const talk = movie('talk.mp4');
    const clips = Array.from({ length: 8 }, (_, i) => video(talk, i * 30, (i + 1) * 30));
    assert.deepEqual(frames(timelineOf(clips)), [0, 1500, 3000, 4500, 6000]);
    // 61 s: two scenes of about half (30 s and 31 s), not one of 60 s and one of 1 s.
    assert.deepEqual(frames(timelineOf(pictures(61, 1)), { seconds: 60, media: 100 }), [0, 750, 1525]);
    assert.deepEqual(frames(timelineOf(pictures(12, 10)), { seconds: 45, media: 100 }), [0, 1000, 2000, 3000]);
  });

  it('starts a new scene before one would draw more than its media files, however short', () => {
    const bounds = frames(timelineOf([...pictures(60, 0.5), logo(0, 30)]));
    // The logo is drawn in every scene: seven pictures of 0.5 s (12.5 frames) and it.
    assert.deepEqual(bounds, [0, 88, 175, 263, 350, 438, 525, 613, 700, 750]);
  });

  it('keeps one scene where nothing allows a cut, however long', () => {
    const timeline = timelineOf([
      video(movie('talk.mp4'), 0, 600),
      { type: 'text', track: 1, start: 0, end: 600, text: 'Live', style: {} } as Clip,
    ]);
    assert.deepEqual(frames(timeline), [0, 15000]);
  });

  it('cuts on frames of an NTSC rate, which add up to the one pass’s', () => {
    const timeline = timelineOf(pictures(30, 7.3), { fps: 30000 / 1001 });
    const bounds = frames(timeline, { seconds: 60, media: 100 });
    assert.equal(bounds.length, 5);
    assert.equal(bounds.at(-1), Math.round((219 * 30000) / 1001));
  });
});

describe('the plan of a render in scenes', () => {
  const open = (input: LocalInput) => ['-i', input.file];
  const song = (end: number) =>
    ({
      ...{ type: 'audio', track: 1, id: 'music', start: 0, end, media: movie('song.m4a'), trim: 0, volume: 0 },
      ...{ loop: false, fadeIn: 0, fadeOut: 0, role: 'music', duck: false },
    }) as Clip;
  const output = (args: readonly string[]) => args.at(-1)!;
  const opened = (args: readonly string[]) => args.filter((_, i) => args[i - 1] === '-i');

  it('keeps a short in one command: picture and sound, one encode', () => {
    const plan = compile(timelineOf([...pictures(6, 5), song(30)]), open, 'render.mp4', {
      scenes: LIMITS,
      fanout: true,
    });
    assert.equal(plan.commands.length, 1);
    assert.equal(plan.readyParts, undefined);
    assert.ok(plan.commands[0]!.includes('libx264'));
  });

  it('makes each scene with its own inputs, the sound once, then joins them; as ready parts with fanout', () => {
    const timeline = timelineOf([...pictures(24, 10), song(240)], { width: 320, height: 180 });
    const plan: Plan = compile(timeline, open, 'render.mp4', { scenes: LIMITS, fanout: true });
    const [sound, ...rest] = plan.commands;
    const join = rest.pop()!;
    assert.deepEqual(opened(sound!), ['song.m4a'], 'the sound reads the song alone');
    assert.equal(output(sound!), 'sound.m4a');
    assert.deepEqual(
      rest.map(output),
      ['scene-000.mp4', 'scene-001.mp4', 'scene-002.mp4', 'scene-003.mp4'],
      'a scene a minute',
    );
    rest.forEach((args, i) => {
      // Six pictures of 10 s in each minute, and no sound.
      assert.deepEqual(
        opened(args),
        Array.from({ length: 6 }, (_, j) => `p${i * 6 + j}.png`),
      );
      assert.ok(args.includes('-an'));
    });
    assert.equal(
      plan.files!['scenes.txt'],
      [0, 1, 2, 3]
        .map((i) => `file 'scene-00${i}.mp4'\n`)
        .join('')
        .replace(/(scene-00[0-2]\.mp4'\n)/g, '$1duration 60\n'),
    );
    assert.deepEqual(join.slice(join.indexOf('-map')), [
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      'render.mp4',
    ]);
    assert.deepEqual(plan.parts, [0, 60, 60, 60, 60, 0]);
    const ready = plan.readyParts!;
    assert.deepEqual(
      ready.parts.map((part) => [part.command, part.frames, part.start, part.seconds, part.label]),
      rest.map((args, i) => [
        args,
        1500,
        i * 60,
        60,
        `Scene ${i + 1} of 4 (${i * 60} to ${i * 60 + 60} s of the timeline)`,
      ]),
    );
    assert.deepEqual(ready.parts[1]!.reads, [...opened(rest[1]!), 'scene-001.graph']);
    assert.deepEqual(ready.audio, { command: sound, output: 'sound.m4a' });
    assert.equal(ready.output, 'render.mp4');
    assert.equal(compile(timeline, open, 'render.mp4', { scenes: LIMITS, fanout: false }).readyParts, undefined);
  });
});
