import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import { mergeScripts } from '../../../src/plugins/captions/ass-merge.js';
import { InputList } from '../../../src/plugins/render/input-list.js';
import { pictureGraph, type Span } from '../../../src/plugins/render/picture.js';
import { highlightWords } from '../../../src/plugins/render/text-script.js';
import type { Clip, Timeline } from '../../../src/plugins/render/timeline.js';
import { timelineOf } from './picture-helpers.js';

/** Inputs as the engine hands them over (the facts a probe finds); their names are the engine's, or hostile ones. */
const picture = (file: string, pixFmt = 'rgb24'): LocalInput => ({
  file,
  source: `https://example.com/${file}`,
  facts: { formatName: 'png_pipe', isImage: true, video: { codec: 'png', width: 640, height: 360, fps: 25, pixFmt } },
});
const movie = (file: string): LocalInput => ({
  file,
  source: `https://example.com/${file}`,
  facts: {
    formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
    isImage: false,
    duration: 10,
    video: { codec: 'h264', width: 1280, height: 720, fps: 30, pixFmt: 'yuv420p' },
    audio: { codec: 'aac', sampleRate: 48000, channels: 2 },
  },
});

const still = (media: LocalInput, start: number, end: number, more: Partial<Clip> = {}): Clip =>
  ({ type: 'image', track: 0, start, end, media, layout: { fit: 'cover' }, motion: 'none', ...more }) as Clip;

/** The graph of a timeline's span, and the input options it opened. */
function compile(timeline: Timeline, span: Span = { start: 0, end: timeline.output.duration }) {
  // 20 frames a second: the times of these timelines fall on frames.
  timeline.output.fps = 20;
  const inputs = new InputList((input) => ['-i', input.file]);
  return { ...pictureGraph(timeline, inputs, span), args: inputs.args() };
}

const HOSTILE = `x'];[0:v]drawtext=text=pwned:fontfile=/etc/passwd;movie=/etc/shadow[y`;

describe("the picture's graph", () => {
  it('carries nothing of the document but numbers: text, ids and file names stay out of it', () => {
    const timeline = timelineOf([
      still(picture(`${HOSTILE}.png`), 0, 1, { id: HOSTILE }),
      { type: 'text', track: 1, start: 0, end: 1, text: `${HOSTILE}\n{\\pos(0,0)\\c&H0000FF&}`, style: {} } as Clip,
    ]);
    const { graph, files, args } = compile(timeline);
    for (const fragment of ['pwned', 'passwd', 'shadow', 'pos(', HOSTILE])
      assert.ok(!graph.includes(fragment), fragment);
    // The file is opened by its name on the command line (an argument of its own, never parsed by a shell).
    assert.ok(args.includes(`${HOSTILE}.png`));
    assert.match(graph, /ass=filename=text-0\.ass:shaping=complex/);
    // The text is drawn literally: its braces escaped in the script, so no override tag takes effect.
    const script = files['text-0.ass']!;
    assert.match(script, /\\\{\\⁠pos\(0,0\)\\⁠c&H0000FF&\\\}/);
    assert.ok(!/(?<!\\)\{\\pos/.test(script), 'no override tag from the text');
  });

  it('refuses a colour that is not one, rather than pasting it into the graph', () => {
    const timeline = timelineOf([still(picture('a.png'), 0, 1)], { background: '#000000:drawtext=text=x' });
    assert.throws(() => compile(timeline), /Not a #RRGGBB colour/);
  });

  it('joins a track of full-frame clips into one stream, each image decoded once and looped', () => {
    const shared = picture('shared.png');
    const timeline = timelineOf([
      still(shared, 0, 1),
      still(picture('b.png'), 1, 2, { motion: 'zoom-in' }),
      still(shared, 1.5, 3, { transition: { type: 'circleopen', duration: 0.5 }, motion: 'pan-up' }),
    ]);
    const { graph, args } = compile(timeline);
    assert.doesNotMatch(graph, /overlay|color=/, 'no background, nothing composited');
    assert.deepEqual(args, ['-i', 'shared.png', '-i', 'b.png'], 'each image opened once, without -loop');
    assert.equal(graph.match(/\[0:v:0\]trim=end_frame=1/g)?.length, 2, 'its one frame taken for each clip');
    assert.match(graph, /loop=loop=19:size=1/);
    assert.match(graph, /concat=n=2:v=1:a=0/);
    assert.match(graph, /xfade=transition=circleopen:duration=0\.5:offset=1\.5/);
    assert.match(graph, /perspective=.*\(in\+0\)\/20/);
    assert.match(graph, /\[vout\]\n$/);
  });

  it('opens a video where its clip starts reading it, and draws a span from where it starts', () => {
    const timeline = timelineOf([
      {
        ...{ type: 'video', track: 0, start: 0, end: 4, media: movie('talk.mp4') },
        ...{ layout: { fit: 'contain-blur' }, trim: 1, speed: 2, volume: 0 },
      } as Clip,
      still(picture('a.png'), 4, 6, { motion: 'zoom-out' }),
    ]);
    const whole = compile(timeline);
    assert.deepEqual(whole.args.slice(0, 5), ['-ss', '1', '-t', '8.25', '-i']);
    assert.match(whole.graph, /setpts=\(PTS-STARTPTS\)\/2/);
    // A scene from 3 s: the video from 1 + 3 × 2 s into its media; from 5 s, the picture's motion 1 s (20 frames) in.
    const scene = compile(timeline, { start: 3, end: 5 });
    assert.deepEqual(scene.args.slice(0, 5), ['-ss', '7', '-t', '2.25', '-i']);
    assert.match(scene.graph, /perspective=.*\(in\+0\)\/40/);
    const later = compile(timeline, { start: 5, end: 6 });
    assert.match(later.graph, /perspective=.*\(in\+20\)\/40/);
    assert.match(later.graph, /loop=loop=19:size=1/);
  });

  it('refuses a span whose edge cuts through a transition', () => {
    const timeline = timelineOf([
      still(picture('a.png'), 0, 2),
      still(picture('b.png'), 1.5, 3, { transition: { type: 'fade', duration: 0.5 } }),
    ]);
    assert.throws(() => compile(timeline, { start: 1.75, end: 3 }), /crosses the edge of the span/);
    // A span may start where the transition does: the earlier clip's tail is drawn in it.
    assert.match(compile(timeline, { start: 1.5, end: 3 }).graph, /xfade=transition=fade:duration=0\.5:offset=0,/);
  });

  it('fades overlays into each other, where xfade cannot join them', () => {
    const logo = (start: number, end: number, more: Partial<Clip> = {}) =>
      still(picture('logo.png', 'rgba'), start, end, {
        track: 1,
        layout: { overlay: { position: 'center', width: 0.2, opacity: 0.8, margin: 0 } },
        ...more,
      });
    const timeline = timelineOf([
      still(picture('a.png'), 0, 3),
      logo(0, 2),
      logo(1.5, 3, { transition: { type: 'slideleft', duration: 0.5 } }),
    ]);
    const { graph } = compile(timeline);
    assert.doesNotMatch(graph, /xfade/);
    assert.match(graph, /fade=t=out:s=30:n=10:alpha=1/);
    assert.match(graph, /fade=t=in:s=0:n=10:alpha=1/);
    assert.match(graph, /colorchannelmixer=aa=0\.8/);
    assert.equal(
      graph.match(/overlay=x=\(main_w-overlay_w\)\/2:y=\(main_h-overlay_h\)\/2:eof_action=pass/g)?.length,
      2,
    );
  });
});

describe('the combined ASS script', () => {
  const ssa = [
    '[Script Info]',
    'ScriptType: v4.00',
    'PlayResX: 640',
    'PlayResY: 480',
    '',
    '[V4 Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, TertiaryColour, BackColour, Bold, Italic, ' +
      'BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, AlphaLevel, Encoding',
    'Style: Title,Arial,40,16777215,65535,255,0,0,0,1,2,2,6,10,10,20,0,0',
    '',
    '[Events]',
    'Format: Marked, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    'Dialogue: Marked=0,0:00:01.00,0:00:03.00,*title,,0000,0000,0000,,Hello, {\\b1}world',
    'Dialogue: Marked=0,0:00:09.00,0:00:10.00,Title,,0,0,0,,past the clip',
  ].join('\n');
  const generated = [
    '[Script Info]',
    'PlayResX: 1920',
    'PlayResY: 1080',
    'ScaledBorderAndShadow: yes',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, OutlineColour, Outline, Alignment, MarginL, MarginR, MarginV',
    'Style: Default,Noto Sans,90,&H000000FF,4,2,480,480,60',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    'Dialogue: 0,0:00:00.50,0:00:02.00,Default,,0,0,0,,Title',
  ].join('\n');

  it("keeps a subtitle file's layout, scales the other parts to it, and puts every event on the span's clock", () => {
    const script = mergeScripts(
      [
        { ass: generated, prefix: 't2c0-', shift: 0, window: { start: 0, end: 2 }, track: 2, keepLayout: false },
        { ass: ssa, prefix: 't1c0-', shift: 4, window: { start: 4, end: 8 }, track: 1, keepLayout: true },
      ],
      { start: 1, end: 8 },
      1080,
    );
    const lines = script.split('\n');
    assert.ok(lines.includes('PlayResX: 640') && lines.includes('PlayResY: 480'));
    // 90 units of 1080 are 40 of 480, side margins of 1920 are in 640; borders the SSA script gives in pixels of the
    // 1080-high frame are in its units too; the alignment of SSA's top centre (6) is ASS's 8.
    const styles = lines.filter((line) => line.startsWith('Style:'));
    assert.deepEqual(styles, [
      'Style: t2c0-Default,Noto Sans,40,&H00FFFFFF,&H00FFFFFF,&H000000FF,&H00000000,0,0,0,0,100,100,0,0,1,1.78,0,2,' +
        '160,160,26.67,1',
      'Style: t1c0-Title,Arial,40,16777215,65535,255,0,0,0,0,0,100,100,0,0,1,0.89,0.89,8,10,10,20,0',
    ]);
    assert.deepEqual(
      lines.filter((line) => line.startsWith('Dialogue:')),
      [
        'Dialogue: 200,0:00:00.00,0:00:01.00,t2c0-Default,,0,0,0,,Title',
        'Dialogue: 100,0:00:04.00,0:00:06.00,t1c0-Title,,0,0,0,,Hello, {\\b1}world',
      ],
    );
  });

  it("reads the events of a section without a Format line in libass's order, as libass draws them", () => {
    const bare = ['[Events]', 'Dialogue: 0,0:00:01.00,0:00:02.,Default,,0,0,0,,Hi, there'].join('\n');
    const script = mergeScripts(
      [{ ass: bare, prefix: 't0c0-', shift: 0, window: { start: 0, end: 5 }, track: 0, keepLayout: true }],
      { start: 0, end: 5 },
      1080,
    );
    assert.deepEqual(
      script.split('\n').filter((line) => line.startsWith('Dialogue:')),
      ['Dialogue: 0,0:00:01.00,0:00:02.00,t0c0-Default,,0,0,0,,Hi, there'],
    );
  });

  it("highlights a subtitle cue's words in turn, around its own tags and line breaks", () => {
    // Three words of 5, 5 and 6 characters share the 1.5 s cue: lit until 0.47, 0.94 and 1.5 s.
    const lit = (centiseconds: number, until: number) =>
      `{\\k${centiseconds}\\1c&H0000FF&\\t(${until},${until},\\1c&HFFFFFF&)}`;
    assert.equal(
      highlightWords('Hello {\\i1}there{\\i0}\\Nfriend', 1.5, '#FF0000', '#FFFFFF'),
      `${lit(47, 470)}Hello {\\i1}${lit(47, 940)}there{\\i0}\\N${lit(56, 1500)}friend`,
    );
    assert.equal(highlightWords('{\\an8}', 1, '#FF0000', '#FFFFFF'), '{\\an8}', 'no words, nothing to light');
  });
});
