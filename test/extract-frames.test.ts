import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { lavfi } from './helpers/fixtures.js';
import { frameRgb, probe, videoOf } from './helpers/media.js';
import { makeMedia, turned, UUID, useOperation, type Refusal } from './helpers/operation.js';
import extractFrames from '../src/plugins/extract-frames.js';
import type { LocalInput } from '../src/sdk.js';

const MESSAGE = 'Frames extracted successfully';

/**
 * Ten seconds of 320x240 at 25 fps, a keyframe every 2 s, one colour per second: second s has red
 * 25 s and green 255 - 25 s, so a picture's colour tells the second its frame was taken in.
 */
const SECONDS_SOURCE = "color=c=black:s=320x240:r=25:d=10,format=gbrp,geq=r='25*floor(T)':g='255-25*floor(T)':b=128";

/** The second a picture's pixel at (x, y) was taken in, from its colour (see SECONDS_SOURCE). */
function secondAt(frame: Awaited<ReturnType<typeof frameRgb>>, x: number, y: number): number {
  const [r, g, b] = frame.pixel(x, y);
  const second = Math.round(r / 25);
  assert.ok(Math.abs(g - (255 - 25 * second)) <= 12 && Math.abs(b - 128) <= 12, `colour ${r},${g},${b} at ${x},${y}`);
  return second;
}

/** The second a picture file was taken in, from its middle. */
async function secondOf(file: string): Promise<number> {
  const frame = await frameRgb(file);
  return secondAt(frame, frame.width >> 1, frame.height >> 1);
}

const sizeOf = async (file: string) => {
  const video = videoOf(await probe(file))!;
  return { codec: video.codec_name, width: video.width, height: video.height };
};

/** A probed 10-minute 720p input, as a builder sees it, for the plans alone (nothing runs). */
const longInput = (width = 1280, height = 720): LocalInput => ({
  file: 'in0.mp4',
  source: 'https://example.com/long.mp4',
  facts: {
    formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
    duration: 600,
    isImage: false,
    video: { codec: 'h264', width, height, fps: 25, pixFmt: 'yuv420p' },
  },
});

/** The plan extract-frames builds for `params` on `video`, writing `outputs`. */
function planOf(params: Record<string, unknown>, video: LocalInput, outputs: string[]) {
  const full = { format: 'jpg', sheet: false, ...params } as Parameters<typeof extractFrames.build>[0]['params'];
  const built = extractFrames.build({
    params: full,
    inputs: { video_url: [video] },
    output: outputs[0]!,
    outputs,
    input: (input) => ['-i', input.file],
  });
  assert.ok(!Array.isArray(built));
  return built;
}

/** The `-ss` values of a command, in order. */
const seeks = (command: readonly string[]) =>
  command.flatMap((arg, i) => (arg === '-ss' ? [Number(command[i + 1])] : []));

describe('extract-frames', () => {
  const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-pix_fmt', 'yuv420p'];
  const op = useOperation({
    fixtures: ['tone-2s-44k-stereo.mp3'],
    make: {
      // The 10-second colour-per-second video (SECONDS_SOURCE).
      'seconds.mp4': [...lavfi(SECONDS_SOURCE), ...X264],
      // Stored 320x240, shown turned a quarter by the display matrix (ffmpeg 5.1 writes it from the `rotate` tag
      // when copying; later versions take -display_rotation).
      'rotated.mp4': turned('seconds.mp4'),
      // Pixels twice as wide as high: shown 640x240.
      'wide-pixels.mp4': [...lavfi(`${SECONDS_SOURCE},setsar=2`), ...X264],
      // The colours of the first 4 s with 8 s of sound.
      'short-picture.mp4': (file, made) =>
        makeMedia(file, [
          ...['-t', '4', '-i', made['seconds.mp4']!, ...lavfi('sine=duration=8')],
          ...['-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac'],
        ]),
    },
  });
  const url = (name: string) => (op.made[name] ? op.local(name) : op.files.url(`/f/${name}`));

  /** POSTs to /extract-frames/, expects its success answer, and returns the local paths of its files. */
  const extract = async (fields: Record<string, string>): Promise<string[]> => {
    const { body } = await op.expectOutput('/extract-frames/', fields, {
      message: MESSAGE,
      name: `${UUID}/(frame_001|sheet)\\.(jpg|png|webp)`,
    });
    const urls = body.output_files as string[];
    assert.ok(Array.isArray(urls), JSON.stringify(body));
    assert.equal(body.output_file, urls[0]);
    return urls.map((u) => op.server.pathOf(u));
  };

  describe('plans (no media)', () => {
    it('seeks before opening the input, once per frame, and never filters the whole file', () => {
      const plan = planOf({ at: [300] }, longInput(), ['output.jpg']);
      assert.equal(plan.commands.length, 1);
      const [command] = plan.commands;
      assert.deepEqual(command!.slice(0, 5), ['-noaccurate_seek', '-ss', '300', '-i', 'in0.mp4']);
      // Frames before the time (from the keyframe on) are dropped; the last is repeated only past the picture's end.
      const filter = command![command!.indexOf('-vf') + 1]!;
      assert.match(filter, /^tpad=stop_mode=clone:stop_duration=301,trim=start=0,scale=/);
      assert.ok(!command!.join(' ').includes('select'), command!.join(' '));
    });

    it('spreads `count` frames over the middles of as many equal parts, and takes one at 10% by default', () => {
      const outputs = Array.from({ length: 4 }, (_, i) => `out${i}.jpg`);
      assert.deepEqual(seeks(planOf({ count: 4 }, longInput(), outputs).commands[0]!), [75, 225, 375, 525]);
      assert.deepEqual(seeks(planOf({}, longInput(), ['output.jpg']).commands[0]!), [60]);
    });

    it('takes many frames ten to a command, each input decoded on one thread; fewer for larger pictures', () => {
      const outputs = Array.from({ length: 25 }, (_, i) => `out${i}.jpg`);
      const plan = planOf({ count: 25 }, longInput(), outputs);
      assert.deepEqual(
        plan.commands.map((command) => seeks(command).length),
        [10, 10, 5],
      );
      assert.deepEqual(
        plan.commands.flatMap(seeks),
        [...Array(25).keys()].map((i) => 12 + 24 * i),
      );
      for (const command of plan.commands) {
        assert.equal(command.filter((arg) => arg === '-threads').length, seeks(command).length);
        // Each output takes its own input's picture, in order.
        assert.deepEqual(
          command.flatMap((arg, i) => (arg === '-map' ? [command[i + 1]] : [])),
          seeks(command).map((_, i) => `${i}:v:0`),
        );
      }
      assert.deepEqual(plan.commands.at(-1)!.slice(-1), ['out24.jpg']);
      const uhd = planOf({ count: 25 }, longInput(3840, 2160), outputs);
      assert.deepEqual(
        uhd.commands.map((command) => seeks(command).length),
        [...Array(12).fill(2), 1],
      );
      // One frame alone: its decoder takes every thread it likes.
      assert.ok(!planOf({ at: [1] }, longInput(), ['o.jpg']).commands[0]!.includes('-threads'));
    });

    it('lays out a sheet `columns` wide, no wider than its frames, in as many rows as they fill', () => {
      const tileOf = (plan: ReturnType<typeof planOf>) => /tile=(\d+x\d+)/.exec(plan.commands.at(-1)!.join(' '))![1];
      assert.equal(tileOf(planOf({ count: 10, sheet: true }, longInput(), ['sheet.jpg'])), '4x3');
      assert.equal(tileOf(planOf({ count: 10, sheet: true, columns: 5 }, longInput(), ['sheet.jpg'])), '5x2');
      assert.equal(tileOf(planOf({ count: 3, sheet: true }, longInput(), ['sheet.jpg'])), '3x1');
    });

    it('sizes a sheet by the picture as shown: a video turned a quarter tiles its frames the other way', () => {
      const sheet = { count: 20, columns: 20, sheet: true, format: 'webp' };
      // 20 frames across: 25600 pixels of upright 1280x720, too wide for WebP; 14400 of the same turned.
      assert.throws(() => planOf(sheet, longInput(), ['sheet.webp']), /would be 25600x720 pixels/);
      const turned = longInput();
      turned.facts.video!.rotation = -90;
      assert.equal(/tile=(\d+x\d+)/.exec(planOf(sheet, turned, ['sheet.webp']).commands.at(-1)!.join(' '))![1], '20x1');
    });
  });

  it('takes the frames at the times of `at`, in the order given, in every time form', async () => {
    const frames = await extract({ video_url: url('seconds.mp4'), at: '7.5, 0, 00:02.5,0:00:04.000,9.99' });
    assert.equal(frames.length, 5);
    frames.forEach((file, i) => assert.match(file, new RegExp(`/${UUID}/frame_00${i + 1}\\.jpg$`)));
    assert.deepEqual(await Promise.all(frames.map(secondOf)), [7, 0, 2, 4, 9]);
    for (const file of frames) assert.deepEqual(await sizeOf(file), { codec: 'mjpeg', width: 320, height: 240 });
  });

  it('takes `count` evenly spaced frames, and one at a tenth of the video without either', async () => {
    const frames = await extract({ video_url: url('seconds.mp4'), count: '5' });
    // Middles of five 2-second parts: 1, 3, 5, 7 and 9 s.
    assert.deepEqual(await Promise.all(frames.map(secondOf)), [1, 3, 5, 7, 9]);
    const [single, ...rest] = await extract({ video_url: url('seconds.mp4') });
    assert.deepEqual(rest, []);
    assert.match(single!, /\/frame_001\.jpg$/);
    assert.equal(await secondOf(single!), 1);
  });

  it('takes the last picture at the end, and past the picture where the sound outlasts it', async () => {
    const [end] = await extract({ video_url: url('seconds.mp4'), at: '10' });
    assert.equal(await secondOf(end!), 9);
    // The picture stops at 4 s, the sound at 8 s: the file lasts 8 s.
    const frames = await extract({ video_url: url('short-picture.mp4'), at: '3.5,6,8' });
    assert.deepEqual(await Promise.all(frames.map(secondOf)), [3, 3, 3]);
    const spread = await extract({ video_url: url('short-picture.mp4'), count: '2' });
    assert.deepEqual(await Promise.all(spread.map(secondOf)), [2, 3]);
  });

  it('writes jpg, png and webp pictures, `width` wide with the height in proportion, odd sizes kept', async () => {
    const [png] = await extract({ video_url: url('seconds.mp4'), at: '3.5', format: 'png', width: '101' });
    assert.deepEqual(await sizeOf(png!), { codec: 'png', width: 101, height: 76 });
    assert.equal(await secondOf(png!), 3);
    const [webp] = await extract({ video_url: url('seconds.mp4'), at: '6.5', format: 'webp', width: '640' });
    assert.deepEqual(await sizeOf(webp!), { codec: 'webp', width: 640, height: 480 });
    assert.equal(await secondOf(webp!), 6);
  });

  it('shows the picture as a player does: turned by its display matrix, in square pixels', async () => {
    let [frame] = await extract({ video_url: url('rotated.mp4'), at: '2.5' });
    assert.deepEqual(await sizeOf(frame!), { codec: 'mjpeg', width: 240, height: 320 });
    assert.equal(await secondOf(frame!), 2);
    [frame] = await extract({ video_url: url('rotated.mp4'), at: '2.5', width: '120' });
    assert.deepEqual(await sizeOf(frame!), { codec: 'mjpeg', width: 120, height: 160 });
    [frame] = await extract({ video_url: url('wide-pixels.mp4'), at: '2.5' });
    assert.deepEqual(await sizeOf(frame!), { codec: 'mjpeg', width: 640, height: 240 });
    [frame] = await extract({ video_url: url('wide-pixels.mp4'), at: '2.5', width: '320' });
    assert.deepEqual(await sizeOf(frame!), { codec: 'mjpeg', width: 320, height: 120 });
  });

  it('tiles the frames into one contact sheet, in order, `columns` across', async () => {
    const [sheet, ...rest] = await extract({
      video_url: url('seconds.mp4'),
      count: '6',
      sheet: 'true',
      width: '80',
      format: 'png',
    });
    assert.deepEqual(rest, []);
    assert.match(sheet!, new RegExp(`/${UUID}/sheet\\.png$`));
    // Four columns of 80x60 frames, two rows; the last two cells are black.
    assert.deepEqual(await sizeOf(sheet!), { codec: 'png', width: 320, height: 120 });
    const picture = await frameRgb(sheet!);
    const cells = [0, 1, 2, 3, 4, 5].map((i) => secondAt(picture, 80 * (i % 4) + 40, 60 * Math.floor(i / 4) + 30));
    // Middles of six parts of 10 s: 0.83, 2.5, 4.17, 5.83, 7.5 and 9.17 s.
    assert.deepEqual(cells, [0, 2, 4, 5, 7, 9]);
    assert.deepEqual(picture.pixel(280, 90), [0, 0, 0]);
    const [narrow] = await extract({ video_url: url('seconds.mp4'), at: '1,8', sheet: 'true', columns: '1' });
    assert.deepEqual(await sizeOf(narrow!), { codec: 'mjpeg', width: 320, height: 480 });
    const stacked = await frameRgb(narrow!);
    assert.deepEqual([secondAt(stacked, 160, 120), secondAt(stacked, 160, 360)], [1, 8]);
  });

  it('refuses bad fields and unusable inputs with their errors, and leaves no file behind', async () => {
    const video = url('seconds.mp4');
    const refusals: Refusal[] = [
      [{ at: '1', count: '2' }, 400, 'Give either `at` (the times of the frames) or `count` (how many), not both'],
      [{ count: '101' }, 400, 'Expected `count` to be an integer from 1 to 100, got `101`'],
      [{ count: '0' }, 400, 'Expected `count` to be an integer from 1 to 100, got `0`'],
      [{ at: Array.from({ length: 101 }, (_, i) => String(i / 20)).join(',') }, 400, /at most 100 times, got 101$/],
      [{ at: '1,soon' }, 400, /^Expected each item of `at` to be a time/],
      [{ at: '12.5' }, 400, '`at` is 12.5 s, past the end of the input, which lasts 10 s'],
      [{ format: 'gif' }, 400, "Unsupported format 'gif'. Supported formats: jpg, png, webp."],
      [{ width: '8' }, 400, 'Expected `width` to be an integer from 16 to 7680, got `8`'],
      [{ columns: '3' }, 400, '`columns` lays out a contact sheet: give it with `sheet=true`'],
      [
        { count: '12', sheet: 'true', width: '7680', format: 'webp' },
        422,
        'The contact sheet would be 30720x17280 pixels, more than a webp sheet may be (at most 16383 pixels a ' +
          'side): give a smaller `width`, fewer frames or other `columns`',
      ],
    ];
    await op.expectRefusals('/extract-frames/', [
      ...refusals.map(([fields, status, error]): Refusal => [{ video_url: video, ...fields }, status, error]),
      [{ video_url: url('tone-2s-44k-stereo.mp3') }, 422, /tone-2s-44k-stereo\.mp3/],
    ]);
  });

  it('runs asynchronously as a job, its result the synchronous answer', async () => {
    const { result } = await op.asJob('/extract-frames/', { video_url: url('seconds.mp4'), at: '8.5,1.5' }, MESSAGE);
    const outputs = result.output_files as string[];
    assert.equal(outputs.length, 2);
    assert.equal(result.output_file, outputs[0]);
    assert.deepEqual(await Promise.all(outputs.map((u) => secondOf(op.server.pathOf(u)))), [8, 1]);
  });

  it('runs from the CLI on a local file, writing each frame', async () => {
    const seconds = op.made['seconds.mp4']!;
    await assertCliParity({
      args: ['extract-frames', '--video-url', seconds, '--at', '4.5,00:00:05.5', '--format', 'png'],
      message: MESSAGE,
      output: /\/frame_001\.png$/,
      check: async (file, body) => {
        assert.deepEqual(body.output_files, [file, path.join(path.dirname(file), 'frame_002.png')]);
        assert.equal(await secondOf(file), 4);
        assert.equal(await secondOf(path.join(path.dirname(file), 'frame_002.png')), 5);
      },
      refused: {
        args: ['extract-frames', '--video-url', seconds, '--count', '101'],
        stderr: /Expected `(--)?count` to be an integer from 1 to 100, got `101`/,
      },
    });
  });

  it('runs in a pipeline, its frames a list the next step takes one by one', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: frames-then-thumbnails
        description: Takes three frames, then makes each a 64x48 thumbnail
        inputs:
          clip: url
        steps:
          frames:
            op: extract-frames
            with: { video_url: "{{ inputs.clip }}", count: 3 }
          small:
            op: resize-image
            each: "{{ steps.frames.output }}"
            with: { image_url: "{{ item }}", width: 64, height: 48 }
        results:
          small: "{{ steps.small.output }}"
      `,
      { clip: op.made['seconds.mp4']! },
    );
    assert.equal(written.length, 3, written.join(', '));
    const thumbnails = written.map((name) => path.join(out, name));
    for (const file of thumbnails) assert.deepEqual(await sizeOf(file), { codec: 'mjpeg', width: 64, height: 48 });
    // Middles of three parts of 10 s: 1.67, 5 and 8.33 s.
    assert.deepEqual(await Promise.all(thumbnails.map(secondOf)), [1, 5, 8]);
  });
});
