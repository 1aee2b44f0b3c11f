import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { lavfi, withTone } from './helpers/fixtures.js';
import { assertNearRgb, audioPacketHashes, frameRgb, probe, videoOf } from './helpers/media.js';
import { turned, UUID, useOperation } from './helpers/operation.js';

const MESSAGE = 'Image overlaid successfully';

/** A one-frame PNG drawn by lavfi in RGBA. */
const png = (source: string) => [...lavfi(`${source},format=rgba`), '-frames:v', '1'];

describe('overlay-image', () => {
  const op = useOperation({
    fixtures: ['clip-1s-321x241-odd.webm', 'not-media.txt'],
    make: {
      'black.mp4': withTone('color=c=black:s=640x360:r=25:d=3'),
      'blue.mp4': withTone('color=c=blue:s=640x360:r=25:d=3'),
      'portrait.mp4': withTone('color=c=black:s=360x640:r=25:d=3'),
      // Stored 640x360 and turned a quarter by the display matrix, as phones write portrait videos: shown 360x640.
      'rotated.mp4': turned('black.mp4'),
      // Red at half opacity, and red whose left half is fully transparent.
      'half-red.png': png('color=c=red@0.5:s=100x100'),
      'half-clear.png': png("color=c=red:s=100x100,format=rgba,geq=r='255':g='0':b='0':a='255*gte(X,50)'"),
      'red.png': png('color=c=red:s=100x100'),
    },
  });

  const overlay = async (fields: Record<string, string>, ext = 'mp4') =>
    (await op.expectOutput('/overlay-image/', fields, { message: MESSAGE, name: `${UUID}/overlaid\\.${ext}` })).file;

  it('puts a half-transparent red logo at the top right of a black video as half red, 15% wide', async () => {
    const file = await overlay({
      video_url: op.local('black.mp4'),
      image_url: op.local('half-red.png'),
    });
    const frame = await frameRgb(file, 1);
    // 640 wide: the logo is 96 px (0.15), 19 px (0.03) from the top and right edges: x 525 to 620, y 19 to 114.
    assertNearRgb(frame.pixel(572, 66), [128, 0, 0], 24, 'the middle of the logo');
    assertNearRgb(frame.pixel(530, 24), [128, 0, 0], 24, "the logo's top-left corner");
    assertNearRgb(frame.pixel(615, 109), [128, 0, 0], 24, "the logo's bottom-right corner");
    for (const [x, y] of [
      [515, 66],
      [630, 66],
      [572, 10],
      [572, 124],
      [40, 40],
      [40, 320],
      [600, 320],
      [320, 180],
    ] as const) {
      assertNearRgb(frame.pixel(x, y), [0, 0, 0], 24, `outside the logo at ${x},${y}`);
    }
  });

  it("keeps a PNG's transparency: its clear pixels show the video, at any opacity", async () => {
    const file = await overlay({
      video_url: op.local('blue.mp4'),
      image_url: op.local('half-clear.png'),
      position: 'bottom-left',
      width: '0.25',
      margin: '0',
    });
    const frame = await frameRgb(file, 1);
    // 160 px wide at the bottom-left corner: its left half clear, its right half red.
    assertNearRgb(frame.pixel(40, 300), [0, 0, 255], 40, 'a clear pixel of the logo');
    assertNearRgb(frame.pixel(120, 300), [255, 0, 0], 40, 'an opaque pixel of the logo');
    const faint = await overlay({
      video_url: op.local('blue.mp4'),
      image_url: op.local('half-clear.png'),
      position: 'bottom-left',
      width: '0.25',
      margin: '0',
      opacity: '0.5',
    });
    const half = await frameRgb(faint, 1);
    assertNearRgb(half.pixel(40, 300), [0, 0, 255], 40, 'a clear pixel at half opacity');
    assertNearRgb(half.pixel(120, 300), [128, 0, 128], 40, 'an opaque pixel at half opacity');
  });

  it('shows the logo from start to end only, at each position', async () => {
    const file = await overlay({
      video_url: op.local('black.mp4'),
      image_url: op.local('red.png'),
      position: 'center',
      start: '1',
      end: '00:00:02',
    });
    assertNearRgb((await frameRgb(file, 0.5)).pixel(320, 180), [0, 0, 0], 24, 'before start');
    assertNearRgb((await frameRgb(file, 1.5)).pixel(320, 180), [255, 0, 0], 40, 'between start and end');
    assertNearRgb((await frameRgb(file, 2.5)).pixel(320, 180), [0, 0, 0], 24, 'after end');
    const spots = { 'top-left': [30, 30], 'bottom-right': [610, 330] } as const;
    for (const [position, [x, y]] of Object.entries(spots)) {
      const placed = await frameRgb(
        await overlay({ video_url: op.local('black.mp4'), image_url: op.local('red.png'), position }),
        0.5,
      );
      assertNearRgb(placed.pixel(x, y), [255, 0, 0], 40, position);
      assertNearRgb(placed.pixel(640 - x, 360 - y), [0, 0, 0], 24, `${position}: the opposite corner`);
    }
  });

  it("scales to a portrait video's width, and to a rotated video's width as shown", async () => {
    for (const video of ['portrait', 'rotated']) {
      const file = await overlay({
        video_url: op.local(`${video}.mp4`),
        image_url: op.local('red.png'),
        position: 'bottom-left',
      });
      const frame = await frameRgb(file, 1);
      assert.deepEqual([frame.width, frame.height], [360, 640], video);
      // 360 wide as shown: the logo is 54 px, 11 px from the left and bottom edges: x 11 to 64, y 575 to 628.
      assertNearRgb(frame.pixel(14, 578), [255, 0, 0], 40, `${video}: the logo's top-left corner`);
      assertNearRgb(frame.pixel(61, 625), [255, 0, 0], 40, `${video}: the logo's bottom-right corner`);
      assertNearRgb(frame.pixel(70, 600), [0, 0, 0], 24, `${video}: right of the logo`);
      assertNearRgb(frame.pixel(30, 568), [0, 0, 0], 24, `${video}: above the logo`);
      // The picture is turned once, by the decoder; the output has no rotation left to apply.
      const info = await probe(file);
      assert.equal(
        JSON.stringify(videoOf(info)).includes('rotation'),
        false,
        `${video}: no display matrix in the output`,
      );
    }
  });

  it("copies the audio packets unchanged, keeps the input's container or takes another", async () => {
    const file = await overlay({ video_url: op.local('black.mp4'), image_url: op.local('red.png') });
    assert.deepEqual(await audioPacketHashes(file), await audioPacketHashes(op.made['black.mp4']!));
    const mkv = await overlay(
      { video_url: op.local('black.mp4'), image_url: op.local('red.png'), format: 'mkv' },
      'mkv',
    );
    assert.equal((await probe(mkv)).format.format_name.split(',')[0], 'matroska');
    assert.deepEqual(await audioPacketHashes(mkv), await audioPacketHashes(op.made['black.mp4']!));
    // A WebM stays WebM; as MP4 (H.264 in 4:2:0) an odd size gets a black column and row.
    const odd = { video_url: op.files.url('/f/clip-1s-321x241-odd.webm'), image_url: op.local('red.png') };
    const webm = videoOf(await probe(await overlay(odd, 'webm')))!;
    assert.deepEqual([webm.codec_name, webm.width, webm.height], ['vp9', 321, 241]);
    const mp4 = videoOf(await probe(await overlay({ ...odd, format: 'mp4' })))!;
    assert.deepEqual([mp4.codec_name, mp4.width, mp4.height], ['h264', 322, 242]);
  });

  it('refuses an image that is not one, an opacity of 2 and an end before the start, leaving nothing', async () => {
    const base = { video_url: op.local('black.mp4'), image_url: op.local('red.png') };
    await op.expectRefusals('/overlay-image/', [
      [
        { ...base, image_url: op.local('black.mp4') },
        422,
        /black\.mp4 is not an image file: found mov with video h264 and audio aac$/,
      ],
      [{ ...base, image_url: op.files.url('/f/not-media.txt') }, 422, /not-media\.txt is not readable media/],
      [{ ...base, opacity: '2' }, 400, 'Expected `opacity` to be a number from 0 to 1, got `2`'],
      [{ ...base, start: '2', end: '1' }, 400, 'Expected `end` (1 s) to be after `start` (2 s)'],
      [{ ...base, end: '9' }, 400, '`end` is 9 s, past the end of the input, which lasts 3 s'],
      [
        { ...base, position: 'middle' },
        400,
        /^Expected `position` to be one of top-right, top-left, bottom-left, bottom-right, center/,
      ],
    ]);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const fields = { video_url: op.local('black.mp4'), image_url: op.local('half-red.png') };
    const { file } = await op.asJob('/overlay-image/', fields, MESSAGE);
    assertNearRgb((await frameRgb(file, 1)).pixel(572, 66), [128, 0, 0], 24, 'the logo');
  });

  it('runs from the CLI on local files', async () => {
    const [black, halfRed] = [op.made['black.mp4']!, op.made['half-red.png']!];
    await assertCliParity({
      args: ['overlay-image', '--video-url', black, '--image-url', halfRed, '--position', 'top-left'],
      message: MESSAGE,
      output: /\/overlaid\.mp4$/,
      check: async (file) => assertNearRgb((await frameRgb(file, 1)).pixel(66, 66), [128, 0, 0], 24, 'CLI: the logo'),
      refused: {
        args: ['overlay-image', '--video-url', black, '--image-url', halfRed, '--opacity', '2'],
        stderr: /Expected `(--)?opacity` to be a number from 0 to 1, got `2`/,
      },
    });
  });

  it('runs as a pipeline step', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: branded
        description: A logo over a video, then the same logo again at the opposite corner
        inputs:
          clip: url
          logo: url
        steps:
          first:
            op: overlay-image
            with: { video_url: "{{ inputs.clip }}", image_url: "{{ inputs.logo }}" }
          second:
            op: overlay-image
            with: { video_url: "{{ steps.first.output }}", image_url: "{{ inputs.logo }}", position: bottom-left }
        results:
          video: "{{ steps.second.output }}"
      `,
      { clip: op.made['black.mp4']!, logo: op.made['red.png']! },
    );
    assert.deepEqual(written, ['video.mp4']);
    const frame = await frameRgb(path.join(out, 'video.mp4'), 1);
    assertNearRgb(frame.pixel(572, 66), [255, 0, 0], 40, 'pipeline: the first logo');
    assertNearRgb(frame.pixel(66, 300), [255, 0, 0], 40, 'pipeline: the second logo');
    assertNearRgb(frame.pixel(320, 180), [0, 0, 0], 24, 'pipeline: the middle');
  });
});
