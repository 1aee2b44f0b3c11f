import assert from 'node:assert/strict';
import { execa } from 'execa';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { withTone } from './helpers/fixtures.js';
import {
  assertNearRgb,
  audioOf,
  audioPacketHashes,
  durationOf,
  frameRgb,
  probe,
  videoOf,
  type Rgb,
} from './helpers/media.js';
import { makeMedia, UUID, useOperation, type Refusal } from './helpers/operation.js';

const MESSAGE = 'Video cropped successfully';
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];

/**
 * A 3 s picture for a video with a 440 Hz tone: blue, green bands 300 px wide at the left and right edges, a red
 * square in the middle.
 */
const LANDSCAPE =
  'color=c=blue:s=1280x720:r=25:d=3,drawbox=x=0:y=0:w=300:h=720:color=lime:t=fill,' +
  'drawbox=x=980:y=0:w=300:h=720:color=lime:t=fill,drawbox=x=540:y=260:w=200:h=200:color=red:t=fill';

/** How many pixels of a colour a frame has (every other pixel both ways, within 60 on each channel). */
function count(frame: Awaited<ReturnType<typeof frameRgb>>, colour: Rgb): number {
  let found = 0;
  for (let y = 0; y < frame.height; y += 2)
    for (let x = 0; x < frame.width; x += 2)
      if (frame.pixel(x, y).every((value, i) => Math.abs(value - colour[i]!) < 60)) found++;
  return found;
}

describe('crop-video', () => {
  const op = useOperation({
    fixtures: ['tone-2s-44k-stereo.mp3'],
    make: {
      'landscape.mp4': withTone(LANDSCAPE),
      // The same picture stored 640 pixels wide with pixels twice as wide as high (a sample aspect ratio of 2:1).
      'anamorphic.mp4': (file, made) =>
        makeMedia(file, [
          ...['-i', made['landscape.mp4']!, '-vf', 'scale=640:720,setsar=2'],
          ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'copy'],
        ]),
      'portrait.mp4': withTone('color=c=blue:s=720x1280:r=25:d=3,drawbox=x=100:y=200:w=100:h=100:color=red:t=fill'),
    },
  });

  const crop = async (fields: Record<string, string>, ext = 'mp4') =>
    (await op.expectOutput('/crop-video/', fields, { message: MESSAGE, name: `${UUID}/cropped\\.${ext}` })).file;

  it('crops a landscape video to 720x1280 around its centre, its length and sound kept', async () => {
    const output = await crop({ video_url: op.local('landscape.mp4') });
    const [source, result] = [await probe(op.made['landscape.mp4']!), await probe(output)];
    const video = videoOf(result)!;
    assert.deepEqual([video.codec_name, video.width, video.height], ['h264', 720, 1280]);
    assert.ok(Math.abs(durationOf(result) - durationOf(source)) < 0.05, `lasts ${durationOf(result)} s`);
    // The sound is copied into the MP4 as it was.
    assert.equal(audioOf(result)?.codec_name, 'aac');
    assert.deepEqual(await audioPacketHashes(output), await audioPacketHashes(op.made['landscape.mp4']!));

    // Scaled 1.78 times to 2276x1280, the middle 720 columns kept: the red square (200 px, now 356) in the middle,
    // blue around it, and nothing of the green edges.
    const frame = await frameRgb(output, 1);
    assertNearRgb(frame.pixel(360, 640), RED, 40, 'the centre');
    for (const [x, y] of [
      [200, 480],
      [520, 800],
    ] as const)
      assertNearRgb(frame.pixel(x, y), RED, 40, `the square at ${x},${y}`);
    for (const [x, y] of [
      [10, 640],
      [160, 640],
      [710, 640],
      [360, 420],
      [360, 860],
      [10, 10],
    ] as const)
      assertNearRgb(frame.pixel(x, y), BLUE, 40, `the blue at ${x},${y}`);
    assert.equal(count(frame, GREEN), 0, 'the green edges were cut off');
  });

  it('reads the display aspect ratio: an anamorphic picture is cropped as it is shown', async () => {
    // Scaled by its stored size alone, the square would come out half as wide as high.
    const output = await crop({ video_url: op.local('anamorphic.mp4') });
    // prettier-ignore
    const { stdout } = await execa('ffprobe', [
      '-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=sample_aspect_ratio', '-of', 'csv=p=0', output,
    ]);
    assert.equal(stdout.trim(), '1:1', 'square pixels');
    const frame = await frameRgb(output, 1);
    for (const [x, y] of [
      [200, 480],
      [520, 800],
      [360, 640],
    ] as const)
      assertNearRgb(frame.pixel(x, y), RED, 40, `the square at ${x},${y}`);
    assertNearRgb(frame.pixel(160, 640), BLUE, 40, 'left of the square');
    assert.equal(count(frame, GREEN), 0, 'the green edges were cut off');
  });

  it('keeps a 720x1280 picture as it is, and crops to another size (1080x1080, in Matroska)', async () => {
    const kept = await frameRgb(await crop({ video_url: op.local('portrait.mp4') }), 1);
    assert.deepEqual([kept.width, kept.height], [720, 1280]);
    assertNearRgb(kept.pixel(150, 250), RED, 40, 'the square where it was');
    for (const [x, y] of [
      [90, 250],
      [210, 250],
      [150, 190],
      [360, 640],
    ] as const)
      assertNearRgb(kept.pixel(x, y), BLUE, 40, `the blue at ${x},${y}`);

    // Scaled 1.5 times to 1920x1080, the middle 1080 columns kept: 30 columns of each green band remain.
    const square = await crop(
      { video_url: op.local('landscape.mp4'), width: '1080', height: '1080', format: 'mkv' },
      'mkv',
    );
    const result = await probe(square);
    assert.equal(result.format.format_name.split(',')[0], 'matroska');
    assert.deepEqual([videoOf(result)!.width, videoOf(result)!.height], [1080, 1080]);
    assert.deepEqual(await audioPacketHashes(square), await audioPacketHashes(op.made['landscape.mp4']!));
    const frame = await frameRgb(square, 1);
    assertNearRgb(frame.pixel(540, 540), RED, 40, 'the centre');
    assertNearRgb(frame.pixel(10, 540), GREEN, 40, 'what is left of the left band');
    assertNearRgb(frame.pixel(1070, 540), GREEN, 40, 'what is left of the right band');
    assertNearRgb(frame.pixel(60, 540), BLUE, 40, 'past the left band');
    assertNearRgb(frame.pixel(1020, 540), BLUE, 40, 'before the right band');
  });

  it('refuses a bad side (400) before fetching, and audio alone (422), leaving nothing', async () => {
    const hits = op.files.hits.get('/local/landscape.mp4') ?? 0;
    const cases: Array<[Record<string, string>, string]> = [
      [{ width: '721' }, 'Expected `width` to be an even number from 16 to 4096, got 721'],
      [{ height: '1279' }, 'Expected `height` to be an even number from 16 to 4096, got 1279'],
      [{ width: '0' }, 'Expected `width` to be an integer from 16 to 4096, got `0`'],
      [{ width: 'wide' }, 'Expected `width` to be an integer from 16 to 4096, got `wide`'],
      [{ height: '720.5' }, 'Expected `height` to be an integer from 16 to 4096, got `720.5`'],
      [{ height: '4098' }, 'Expected `height` to be an integer from 16 to 4096, got `4098`'],
      [{ format: 'gif' }, "Unsupported format 'gif'. Supported formats: mp4, mov, mkv, avi, webm."],
    ];
    await op.expectRefusals('/crop-video/', [
      ...cases.map(([fields, error]): Refusal => [{ video_url: op.local('landscape.mp4'), ...fields }, 400, error]),
      [
        { video_url: op.files.url('/f/tone-2s-44k-stereo.mp3') },
        422,
        /tone-2s-44k-stereo\.mp3 is not a video file: found mp3 with audio mp3$/,
      ],
    ]);
    assert.equal(op.files.hits.get('/local/landscape.mp4') ?? 0, hits, 'a bad side is refused before fetching');
    assert.equal((await fetch(`${op.server.base}/health`)).status, 200);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const { file } = await op.asJob(
      '/crop-video',
      { video_url: op.local('landscape.mp4'), width: '360', height: '640' },
      MESSAGE,
    );
    const frame = await frameRgb(file, 1);
    assert.deepEqual([frame.width, frame.height], [360, 640]);
    assertNearRgb(frame.pixel(180, 320), RED, 40, 'the centre');
  });

  it('runs from the CLI on a local file', async () => {
    const landscape = op.made['landscape.mp4']!;
    await assertCliParity({
      args: ['crop-video', '--video-url', landscape, '--width', '480', '--height', '480'],
      message: MESSAGE,
      output: /\/cropped\.mp4$/,
      check: async (file) => {
        const frame = await frameRgb(file, 1);
        assert.deepEqual([frame.width, frame.height], [480, 480]);
        assertNearRgb(frame.pixel(240, 240), RED, 40, 'the centre');
      },
      refused: {
        args: ['crop-video', '--video-url', landscape, '--width', '721'],
        stderr: /Expected `(--)?width` to be an even number from 16 to 4096, got 721/,
      },
    });
  });
});
