import assert from 'node:assert/strict';
import { before, describe, it } from '../helpers/lifecycle.js';
import { useOperation } from '../helpers/operation.js';
import { frameRgb, probe, videoOf } from '../helpers/media.js';
import { watchFfmpeg } from '../helpers/process-tree.js';
import { animatedGif, assScript as script, assertStillServing, expectRefused, literal, ready } from './hostile.js';

/**
 * Inputs of a few kilobytes or megabytes that would cost ffmpeg half an hour: an animated GIF logo whose every frame
 * is a huge canvas, and subtitle scripts of thousands of blurred lines or drawings shown at once. Each is refused from
 * what its file says, before the video is decoded.
 */

/** `count` events shown together over the whole clip (2 s), each made by `text(i)`. */
const together = (count: number, text: (i: number) => string) =>
  script(Array.from({ length: count }, (_, i) => ({ start: '0:00:00.00', end: '0:00:02.00', text: text(i) })));

const COST = (url: string) =>
  new RegExp(
    `^The subtitles of ${literal(url)} would cost (\\d+) to draw \\(each event's frames on screen, weighted by ` +
      'blur and drawings\\), more than the limit of 1000000$',
  );

describe('inputs that cost far more than their size', () => {
  const op = useOperation({ fixtures: ['clip-2s-640x360-25fps.mp4'] });
  const { serve } = op;
  const video = () => op.files.url('/f/clip-2s-640x360-25fps.mp4');

  before(async () => {
    await ready(op.server);
  });

  it('refuses a 9 KB GIF logo of 400 frames of a 9900x9900 canvas before decoding it: 422', async () => {
    const gif = animatedGif(9900, 9900, 400);
    assert.ok(gif.length < 10_000, `${gif.length} bytes`);
    const url = serve('canvas.gif', 'image/gif', gif);
    const watch = watchFfmpeg();
    await expectRefused(
      op.server,
      '/overlay-image/',
      { video_url: video(), image_url: url },
      {
        status: 422,
        error:
          `Input ${url} is an animation of 400 frames of 9900x9900 pixels, 39204000000 pixels to decode: ` +
          'an overlay may decode at most 1000000000',
      },
    );
    // Nothing was decoded: no ffmpeg ran at all (the probe is ffprobe's, and the video's is read in process).
    assert.deepEqual((await watch.stop()).commands, []);
  });

  it('still lays an animated GIF logo within the budget over the video', async () => {
    const url = serve('small.gif', 'image/gif', animatedGif(200, 200, 50));
    const res = await op.server.post('/overlay-image/', { video_url: video(), image_url: url, position: 'center' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const file = op.server.pathOf(res.body.output_file!);
    assert.equal(videoOf(await probe(file))?.width, 640);
    // The canvas is black but for one white pixel, scaled to 96 pixels square at the centre.
    const [r, g, b] = (await frameRgb(file, 1)).pixel(320, 180);
    assert.ok(r < 40 && g < 40 && b < 40, `the logo's black at the centre: ${[r, g, b]}`);
  });

  /** Posts a script that costs too much, checks the 422 as expectRefused does, and returns the cost it names. */
  async function refusedCost(url: string): Promise<number> {
    const res = await op.server.post('/add-subtitles/', { video_url: video(), subtitle_url: url });
    assert.equal(res.status, 422, JSON.stringify(res.body).slice(0, 500));
    assert.deepEqual(Object.keys(res.body), ['error', 'code']);
    const cost = COST(url).exec(res.body.error!);
    assert.ok(cost, res.body.error);
    await assertStillServing(op.server);
    return Number(cost[1]);
  }

  it('refuses a script of 50,000 blurred lines shown together, before the video is decoded: 422', async () => {
    const ass = together(50_000, (i) => `{\\pos(${i % 600},${(i * 7) % 360})\\blur20}Hello world ${i}`);
    assert.ok(ass.length > 3_000_000 && ass.length < 5 * 1024 ** 2, `${ass.length} bytes`);
    const watch = watchFfmpeg();
    // 50,000 lines x 50 frames x (1 + 20/5).
    assert.equal(await refusedCost(serve('blurred.ass', 'text/plain', ass)), 12_500_000);
    // ffmpeg read the script as subtitles (to ASS), and never opened the video to draw it.
    const commands = (await watch.stop()).commands;
    assert.ok(commands.length > 0, 'the subtitles were converted');
    for (const command of commands) assert.ok(!command.some((arg) => arg.startsWith('ass=')), command.join(' '));
  });

  it('refuses thousands of drawings shown together, weighing each by its points', async () => {
    const points = Array.from({ length: 200 }, (_, k) => `${(k * 37) % 600} ${(k * 53) % 340}`).join(' ');
    const drawn = together(2000, (i) => `{\\pos(${i % 600},0)\\p1}m 0 0 l ${points}{\\p0}`);
    // 2,000 drawings x 50 frames x (1 + 10 + 201 points / 100).
    assert.equal(await refusedCost(serve('drawings.ass', 'text/plain', drawn)), 1_301_000);
  });

  it('draws a script of many blurred lines shown one after another: the cost is what is on screen', async () => {
    // 2,000 lines with blur 20, each for a frame: 2,000 x 5 units, far within the limit.
    const lines = Array.from({ length: 2000 }, (_, i) => {
      const at = (i % 50) * 0.04;
      const time = (t: number) => `0:00:0${t.toFixed(2)}`;
      return { start: time(at), end: time(at + 0.04), text: `{\\blur20}Line ${i}` };
    });
    const url = serve('one-by-one.ass', 'text/plain', script(lines));
    const res = await op.server.post('/add-subtitles/', { video_url: video(), subtitle_url: url });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });
});
