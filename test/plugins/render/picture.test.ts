import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { assertNearRgb, brightPixels, durationOf, frameRgb, probe, videoOf, type Rgb } from '../../helpers/media.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import type { Clip } from '../../../src/plugins/render/timeline.js';
import { decodedFrames, timelineOf, Workspace } from './picture-helpers.js';

const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const WHITE: Rgb = [255, 255, 255];
const YELLOW: Rgb = [255, 255, 0];
const GREY: Rgb = [64, 64, 64];
const BACKGROUND = '#404040';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** A full-frame image clip. */
const still = (media: LocalInput, track: number, start: number, end: number, more: Partial<Clip> = {}): Clip =>
  ({ type: 'image', track, start, end, media, layout: { fit: 'cover' }, motion: 'none', ...more }) as Clip;

/** The mean x of the bright pixels of a row (the white bar a pan moves). */
function brightX(frame: Frame, y: number): number {
  const xs = Array.from({ length: frame.width }, (_, x) => x).filter((x) => frame.pixel(x, y)[0] > 128);
  return xs.reduce((sum, x) => sum + x, 0) / xs.length;
}

/** Pixels of a rectangle near a colour. */
function pixelsNear(frame: Frame, colour: Rgb, [x0, y0, w, h]: [number, number, number, number]): number {
  let count = 0;
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++)
      if (frame.pixel(x, y).every((channel, i) => Math.abs(channel - colour[i]!) < 60)) count++;
  return count;
}

describe("a render's picture", () => {
  let work: Workspace;
  const media: Record<string, LocalInput> = {};

  before(async () => {
    work = await Workspace.create();
    media.red = await work.image('red.png', 'color=c=red:s=320x180');
    media.blue = await work.image('blue.jpg', 'color=c=blue:s=180x320');
    media.green = await work.media('green.mp4', ['color=c=0x00FF00:s=240x136:r=30:d=2'], ['-pix_fmt', 'yuv420p']);
    // Portrait: a white strip on top, red above the middle, blue below it.
    media.tall = await work.image(
      'tall.png',
      'color=c=red:s=90x160,drawbox=x=0:y=0:w=90:h=16:color=white:t=fill,drawbox=x=0:y=80:w=90:h=80:color=blue:t=fill',
    );
    // A logo whose left half is opaque yellow and right half transparent.
    media.logo = await work.image(
      'logo.png',
      "color=c=black@0:s=64x64,format=rgba,geq=r='255':g='255':b='0':a='255*lt(X,32)'",
    );
    // Black with a white upright bar in the middle, and black with a white square in the middle.
    media.bar = await work.image('bar.png', 'color=c=black:s=320x180,drawbox=x=150:y=0:w=20:h=180:color=white:t=fill');
    media.square = await work.image(
      'square.png',
      'color=c=black:s=320x180,drawbox=x=140:y=70:w=40:h=40:color=white:t=fill',
    );
    media.tone = await work.media('tone.wav', ['aevalsrc=0.8*sin(2*PI*440*t):s=48000:d=1']);
  });
  after(() => work.remove());

  it("draws each clip at its times on the background, at the output's size, rate and length", async () => {
    const timeline = timelineOf(
      [
        still(media.red!, 0, 0, 1),
        {
          ...{ type: 'video', track: 0, start: 1.5, end: 2.5, media: media.green! },
          ...{ layout: { fit: 'cover' }, trim: 0.5, speed: 1, volume: 'mute' },
        } as Clip,
      ],
      { background: BACKGROUND, duration: 3 },
    );
    const { file, picture } = await work.render('colours.mp4', timeline);
    // A track of full-frame clips is one stream on the background: nothing is overlaid.
    assert.doesNotMatch(picture.graph, /overlay/);
    const info = await probe(file);
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height, videoOf(info)!.r_frame_rate], [160, 90, '25/1']);
    assert.ok(Math.abs(durationOf(info) - 3) < 0.05, `duration ${durationOf(info)}`);
    assert.deepEqual(await decodedFrames(file), { frames: 75, errors: '' });
    for (const [time, colour] of [
      [0.5, RED],
      [1.25, GREY],
      [2, GREEN],
      [2.8, GREY],
    ] as const)
      assertNearRgb((await frameRgb(file, time)).pixel(80, 45), colour, 12, `at ${time} s`);
  });

  it('fits pictures: contain on the background, contain-blur on a blurred copy, cover and stretch', async () => {
    const fits = ['contain', 'contain-blur', 'cover', 'stretch'] as const;
    const timeline = timelineOf(
      fits.map((fit, i) => still(media.tall!, 0, i * 0.4, (i + 1) * 0.4, { layout: { fit } })),
      { background: BACKGROUND },
    );
    const { file } = await work.render('fits.mp4', timeline);
    const [contain, blur, cover, stretch] = await Promise.all([0.2, 0.6, 1.0, 1.4].map((t) => frameRgb(file, t)));
    // contain: the whole picture, its white strip on top, between bars of the background.
    assertNearRgb(contain!.pixel(80, 3), WHITE, 20, 'contain: the top strip');
    assertNearRgb(contain!.pixel(80, 70), BLUE, 20, 'contain: the lower half');
    assertNearRgb(contain!.pixel(10, 45), GREY, 12, 'contain: the left bar');
    assertNearRgb(contain!.pixel(150, 45), GREY, 12, 'contain: the right bar');
    // contain-blur: the same picture, its bars the picture's own colours, red above and blue below.
    assertNearRgb(blur!.pixel(80, 3), WHITE, 20, 'contain-blur: the top strip');
    for (const x of [10, 150]) {
      const [top, bottom] = [blur!.pixel(x, 15), blur!.pixel(x, 80)];
      assert.ok(top[0] > top[2] + 60 && bottom[2] > bottom[0] + 60, `contain-blur bars at x ${x}: ${top} ${bottom}`);
    }
    // cover: the middle of the picture fills the frame (the strip is cut off); stretch: all of it fills the frame.
    assertNearRgb(cover!.pixel(80, 3), RED, 20, 'cover: the top edge');
    assertNearRgb(cover!.pixel(5, 80), BLUE, 20, 'cover: the left edge');
    assertNearRgb(stretch!.pixel(5, 3), WHITE, 20, 'stretch: the top left corner');
    assertNearRgb(stretch!.pixel(5, 30), RED, 20, 'stretch: the upper left edge');
    assertNearRgb(stretch!.pixel(155, 80), BLUE, 20, 'stretch: the lower right edge');
  });

  it('places overlays at their corners, in their times, keeping PNG transparency and their opacity', async () => {
    const logo = (track: number, position: string, opacity: number, margin: number): Clip =>
      ({
        ...{ type: 'image', track, start: 0.5, end: 1.5, media: media.logo!, motion: 'none' },
        layout: { overlay: { position, width: 0.25, opacity, margin } },
      }) as Clip;
    const timeline = timelineOf([
      still(media.red!, 0, 0, 2),
      logo(1, 'top-right', 1, 0.05),
      logo(2, 'bottom-left', 0.5, 0),
    ]);
    const { file } = await work.render('overlay.mp4', timeline);
    // 40 pixels wide and high: top-right at x 112 to 151, y 8 to 47; bottom-left at x 0 to 39, y 50 to 89.
    const during = await frameRgb(file, 1);
    assertNearRgb(during.pixel(118, 25), YELLOW, 20, "the logo's opaque half");
    assertNearRgb(during.pixel(145, 25), RED, 20, "the logo's transparent half");
    assertNearRgb(during.pixel(100, 25), RED, 20, 'left of the logo');
    assertNearRgb(during.pixel(8, 70), [255, 128, 0], 30, 'the half-opaque logo');
    assertNearRgb(during.pixel(30, 70), RED, 20, "the half-opaque logo's transparent half");
    for (const time of [0.25, 1.75]) {
      const frame = await frameRgb(file, time);
      assertNearRgb(frame.pixel(118, 25), RED, 20, `no logo at ${time} s`);
      assertNearRgb(frame.pixel(8, 70), RED, 20, `no half-opaque logo at ${time} s`);
    }
    assert.equal((await decodedFrames(file)).errors, '');
  });

  it('blends two clips over a transition, and wipes', async () => {
    const timeline = timelineOf([
      still(media.red!, 0, 0, 1),
      still(media.blue!, 0, 0.5, 1.5, { transition: { type: 'fade', duration: 0.5 } }),
      still(media.red!, 0, 1, 2, { transition: { type: 'wipeleft', duration: 0.5 } }),
    ]);
    const { file, picture } = await work.render('transitions.mp4', timeline);
    assert.equal(picture.graph.match(/xfade/g)?.length, 2);
    assert.deepEqual(await decodedFrames(file), { frames: 50, errors: '' });
    assertNearRgb((await frameRgb(file, 0.25)).pixel(80, 45), RED, 12, 'before the fade');
    assertNearRgb((await frameRgb(file, 0.76)).pixel(80, 45), [128, 0, 128], 30, 'half way through the fade');
    assertNearRgb((await frameRgb(file, 1.0)).pixel(80, 45), BLUE, 12, 'after the fade');
    // The wipe moves a border across: more of the frame is red the further it has gone.
    const reds = [];
    for (const time of [1.1, 1.25, 1.4]) reds.push(pixelsNear(await frameRgb(file, time), RED, [0, 45, 160, 1]));
    assert.ok(reds[0]! > 10 && reds[0]! < reds[1]! && reds[1]! < reds[2]! && reds[2]! < 150, `red pixels ${reds}`);
    assertNearRgb((await frameRgb(file, 1.9)).pixel(80, 45), RED, 12, 'after the wipe');
  });

  it('moves pictures: a pan slides them, a zoom grows them', async () => {
    const timeline = timelineOf([
      still(media.bar!, 0, 0, 1, { motion: 'pan-left' }),
      still(media.square!, 0, 1, 2, { motion: 'zoom-in' }),
      still(media.square!, 0, 2, 3, { motion: 'zoom-out' }),
    ]);
    const { file } = await work.render('motion.mp4', timeline);
    const xs = [];
    for (const time of [0.1, 0.5, 0.9]) xs.push(brightX(await frameRgb(file, time), 45));
    assert.ok(xs[0]! > xs[1]! + 3 && xs[1]! > xs[2]! + 3, `the bar moves left: ${xs}`);
    const area = async (time: number) => brightPixels(await frameRgb(file, time), 40, 10, 80, 70, 128);
    const [zoomStart, zoomEnd, outStart, outEnd] = [
      await area(1.05),
      await area(1.95),
      await area(2.05),
      await area(2.95),
    ];
    assert.ok(zoomEnd > zoomStart * 1.25, `zoom-in grows the square: ${zoomStart} -> ${zoomEnd}`);
    assert.ok(outStart > outEnd * 1.25, `zoom-out shrinks it: ${outStart} -> ${outEnd}`);
    assert.equal((await decodedFrames(file)).errors, '');
  });

  it('shows the layers below through an upper contain fit, and plays a video as a picture in picture', async () => {
    const timeline = timelineOf([
      still(media.red!, 0, 0, 2),
      still(media.blue!, 1, 0, 1, { layout: { fit: 'contain' } }),
      {
        ...{ type: 'video', track: 2, start: 1, end: 2, media: media.green!, trim: 0, speed: 2, volume: 'mute' },
        layout: { overlay: { position: 'top-left', width: 0.5, opacity: 1, margin: 0 } },
      } as Clip,
    ]);
    const { file } = await work.render('layers.mp4', timeline);
    const [upper, inPicture] = [await frameRgb(file, 0.5), await frameRgb(file, 1.5)];
    assertNearRgb(upper.pixel(80, 45), BLUE, 20, 'the contained picture');
    assertNearRgb(upper.pixel(10, 45), RED, 20, 'the track below, in its bars');
    assertNearRgb(inPicture.pixel(20, 10), GREEN, 20, 'the video in its box');
    assertNearRgb(inPicture.pixel(140, 80), RED, 20, 'outside the box');
    // The green clip lasts 2 s at twice its speed: it plays to the end of its 1 s, its last frame is green too.
    assertNearRgb((await frameRgb(file, 1.96)).pixel(20, 10), GREEN, 20, 'the last frame of the video');
    assert.deepEqual(await decodedFrames(file), { frames: 50, errors: '' });
  });

  it("draws a waveform of a clip's sound while it plays", async () => {
    const timeline = timelineOf([
      { type: 'audio', track: 0, start: 0.5, end: 1.5, id: 'music', media: media.tone!, trim: 0, volume: 0 } as Clip,
      {
        ...{ type: 'waveform', track: 1, start: 0, end: 2, from: 'music', style: 'bars', color: '#00FF00' },
        ...{ position: 'bottom', width: 0.8, height: 0.4 },
      } as Clip,
    ]);
    const { file } = await work.render('waveform.mp4', timeline);
    // The box: 128 by 36 pixels, centred, its bottom 5 pixels above the frame's.
    const box: [number, number, number, number] = [16, 49, 128, 36];
    const greens = [];
    for (const time of [0.25, 1, 1.75]) greens.push(pixelsNear(await frameRgb(file, time), GREEN, box));
    assert.ok(greens[1]! > 2000, `the tone's waveform fills its box: ${greens}`);
    assert.ok(greens[0]! < 200 && greens[2]! < 200, `at most a flat line in silence: ${greens}`);
    assert.equal(pixelsNear(await frameRgb(file, 1), GREEN, [0, 0, 160, 45]), 0, 'nothing above the box');
  });

  it('draws a span of the timeline (a scene) as the whole timeline draws it there', async () => {
    const timeline = timelineOf([
      still(media.bar!, 0, 0, 2, { motion: 'pan-right' }),
      {
        ...{ type: 'video', track: 1, start: 0.5, end: 2, media: media.green!, trim: 0.2, speed: 1, volume: 'mute' },
        layout: { overlay: { position: 'bottom-right', width: 0.25, opacity: 1, margin: 0 } },
      } as Clip,
    ]);
    const whole = await work.render('whole.mp4', timeline);
    const scene = await work.render('scene.mp4', timeline, { start: 1.2, end: 2 });
    assert.deepEqual(await decodedFrames(scene.file), { frames: 20, errors: '' });
    for (const [time, inScene] of [
      [1.3, 0.1],
      [1.9, 0.7],
    ]) {
      const [a, b] = [await frameRgb(whole.file, time!), await frameRgb(scene.file, inScene!)];
      assert.ok(
        Math.abs(brightX(a, 20) - brightX(b, 20)) < 0.5,
        `the bar at ${time} s: ${brightX(a, 20)}, ${brightX(b, 20)}`,
      );
      assertNearRgb(b.pixel(150, 80), GREEN, 20, `the video at ${time} s`);
    }
  });
});
