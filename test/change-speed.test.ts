import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, H264, lavfi } from './helpers/fixtures.js';
import {
  assertNear,
  audioOf,
  beepAt,
  docType,
  flashAt,
  pcm,
  probe,
  toneLevel,
  videoOf,
  type Probed,
} from './helpers/media.js';
import { outOfRange, UUID, useOperation } from './helpers/operation.js';

const FRAME = 1 / 25;
const MESSAGE = 'Speed changed successfully';

const streamSeconds = (stream: Probed['streams'][number] | undefined) => Number(stream?.duration);

describe('change-speed', () => {
  const op = useOperation({
    fixtures: ['clip-2s-640x360-25fps.mp4', 'clip-1s-321x241-odd.webm', 'tone-2s-44k-stereo.mp3', 'small-300x200.png'],
    make: {
      // Black, with a white flash and a 1 kHz beep that both start at exactly 1 s: sync is visible in both.
      'flash-beep.mp4': [
        ...lavfi(
          "color=c=black:s=160x120:r=25:d=3,drawbox=c=white:t=fill:enable='between(t,1,1.39)'",
          "aevalsrc=exprs='if(between(t,1,1.4),0.8*sin(2*PI*1000*t),0)':s=48000:d=3",
        ),
        ...H264,
        ...['-c:a', 'aac', '-f', 'mp4'],
      ],
    },
  });

  const speed = async (fields: Record<string, string>, ext: string) => {
    const { file } = await op.expectOutput('/change-speed/', fields, {
      message: MESSAGE,
      name: `${UUID}/speed\\.${ext}`,
    });
    return { file, info: await probe(file) };
  };

  for (const factor of [2, 0.5, 4, 0.25]) {
    it(`at speed ${factor} a video lasts its length / ${factor} within a frame, pitch and container kept`, async () => {
      const url = op.files.url('/f/clip-2s-640x360-25fps.mp4');
      const { file, info } = await speed({ media_url: url, speed: String(factor) }, 'mp4');
      assert.equal(info.format.format_name.split(',')[0], 'mov');
      assertNear(streamSeconds(videoOf(info)), 2 / factor, FRAME, 'video duration');
      // AAC frames are 1024 samples (21 ms at 48 kHz): the sound ends within one of them, and one of priming.
      assertNear(streamSeconds(audioOf(info)), 2 / factor, 0.05, 'audio duration');
      assert.equal(videoOf(info)!.avg_frame_rate, '25/1');
      // The 440 Hz tone is still 440 Hz: atempo stretches time, not pitch.
      const samples = await pcm(file, 0.2, 0.4);
      const at440 = toneLevel(samples, 440);
      assert.ok(at440 > 0.05 && at440 > 10 * toneLevel(samples, 440 * factor), `440 Hz level ${at440}`);
    });
  }

  it('keeps a beep and a flash that start together within one frame of each other', async () => {
    for (const factor of [2, 0.5, 3, 0.25, 4]) {
      const { file } = await speed({ media_url: op.local('flash-beep.mp4'), speed: String(factor) }, 'mp4');
      const flash = await flashAt(file);
      const beep = await beepAt(file);
      assertNear(flash, 1 / factor, FRAME, `flash at speed ${factor}`);
      assertNear(beep, flash, FRAME, `beep against the flash at speed ${factor}`);
    }
  });

  it('keeps an audio-only input audio-only, in its own container', async () => {
    const { info } = await speed({ media_url: op.files.url('/f/tone-2s-44k-stereo.mp3'), speed: '2' }, 'mp3');
    assert.equal(info.format.format_name, 'mp3');
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
    );
    assert.equal(audioOf(info)!.sample_rate, '44100');
    const input = Number((await probe(await fixture('tone-2s-44k-stereo.mp3'))).format.duration);
    // An MP3 frame is 26 ms at 44.1 kHz: the encoder pads to whole frames.
    assertNear(Number(info.format.duration), input / 2, 0.03, 'duration');
  });

  it('keeps a WebM input as WebM, pads an odd size for H.264 when asked for mp4, and takes a format', async () => {
    const webm = await speed({ media_url: op.files.url('/f/clip-1s-321x241-odd.webm'), speed: '0.5' }, 'webm');
    let { info } = webm;
    assert.equal(await docType(webm.file), 'webm');
    assert.equal(videoOf(info)!.codec_name, 'vp9');
    assertNear(streamSeconds(videoOf(info)) || Number(info.format.duration), 2, 0.1, 'duration');
    ({ info } = await speed(
      { media_url: op.files.url('/f/clip-1s-321x241-odd.webm'), speed: '0.5', format: 'mp4' },
      'mp4',
    ));
    assert.equal(videoOf(info)!.codec_name, 'h264');
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [322, 242]);
    ({ info } = await speed(
      { media_url: op.files.url('/f/tone-2s-44k-stereo.mp3'), speed: '2', format: 'mkv' },
      'mkv',
    ));
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
    );
  });

  it('refuses a speed of 0 or 5, or none, with a 400 and leaves no file behind', async () => {
    const clip = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    await op.expectRefusals('/change-speed/', [
      ...outOfRange({ media_url: clip }, [
        ['speed', '0', '0.25 to 4'],
        ['speed', '5', '0.25 to 4'],
        ['speed', 'fast', '0.25 to 4'],
      ]),
      [{ media_url: clip, speed: '' }, 400, 'Missing required parameter `speed`'],
      [
        { media_url: clip, speed: '2', format: 'mp3' },
        400,
        "Unsupported format 'mp3'. Supported formats: mp4, mov, mkv, avi, webm.",
      ],
      // A picture is media to the input check, but has no time to change.
      [
        { media_url: op.files.url('/f/small-300x200.png'), speed: '2' },
        422,
        /small-300x200\.png is a picture: its speed cannot change$/,
      ],
    ]);
  });

  it('runs asynchronously as a job with progress, its result the synchronous answer', async () => {
    const { file } = await op.asJob(
      '/change-speed/',
      { media_url: op.files.url('/f/clip-2s-640x360-25fps.mp4'), speed: '2' },
      MESSAGE,
    );
    assertNear(streamSeconds(videoOf(await probe(file))), 1, FRAME, 'video duration');
  });

  it('runs from the CLI on a local file, naming the output after the input container', async () => {
    const tone = await fixture('tone-2s-44k-stereo.mp3');
    await assertCliParity({
      args: ['change-speed', '--media-url', tone, '--speed', '0.5'],
      message: MESSAGE,
      output: /\/speed\.mp3$/,
      check: async (file) => {
        const info = await probe(file);
        assert.equal(info.format.format_name, 'mp3');
        assertNear(Number(info.format.duration), Number((await probe(tone)).format.duration) / 0.5, 0.03, 'duration');
      },
      // The name is checked against the input's container, before anything runs.
      refused: {
        args: ['change-speed', '--media-url', tone, '--speed', '2', '-o', path.join(op.scratch, 'fast.mp4')],
        stderr:
          /^mediaflow: Expected `--output` to end in \.mp3, the kind of file change-speed makes here, got `.*fast\.mp4` \(--format chooses another\)$/m,
      },
    });
  });

  it('runs in a pipeline: twice as fast, then half as fast, gives the input length back', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: there-and-back
        description: Speeds a clip up, then down again
        inputs:
          clip: url
        steps:
          fast:
            op: change-speed
            with: { media_url: "{{ inputs.clip }}", speed: 2 }
          back:
            op: change-speed
            with: { media_url: "{{ steps.fast.output }}", speed: 0.5 }
        results:
          back: "{{ steps.back.output }}"
      `,
      { clip: await fixture('tone-2s-44k-stereo.mp3') },
    );
    assert.deepEqual(written, ['back.mp3']);
    assertNear(Number((await probe(path.join(out, 'back.mp3'))).format.duration), 2, 0.1, 'duration');
  });
});
