import assert from 'node:assert/strict';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, lavfi, sine } from './helpers/fixtures.js';
import {
  assertNear,
  audioOf,
  docType,
  durationOf,
  frameRgb,
  probe,
  videoOf,
  type Probed,
  videoPacketHashes,
} from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';

/** The container as a player tells it: mp4 and mov share ffprobe's format name but not their brand. */
async function container(file: string, info: Probed): Promise<string> {
  if (info.format.format_name === 'avi') return 'avi';
  if (info.format.format_name.startsWith('matroska')) return (await docType(file)) ?? 'unknown matroska';
  if (info.format.format_name.startsWith('mov')) {
    const brand = (info.format as { tags?: Record<string, string> }).tags?.major_brand;
    return brand === 'qt  ' ? 'mov' : 'mp4';
  }
  return info.format.format_name;
}

/** Mean absolute difference (0..255) of two files' decoded pictures at `seconds`: small when it is the same picture. */
async function pictureDifference(a: string, b: string, seconds: number): Promise<number> {
  const [fa, fb] = await Promise.all([frameRgb(a, seconds), frameRgb(b, seconds)]);
  const width = Math.min(fa.width, fb.width);
  const height = Math.min(fa.height, fb.height);
  let sum = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const pa = fa.pixel(x, y);
      const pb = fb.pixel(x, y);
      sum += Math.abs(pa[0] - pb[0]) + Math.abs(pa[1] - pb[1]) + Math.abs(pa[2] - pb[2]);
    }
  return sum / (width * height * 3);
}

/** Codecs that suit each container, as the issue lists them. */
const SUITS: Record<string, { video: string[]; audio: string[] }> = {
  mp4: { video: ['h264'], audio: ['aac'] },
  mov: { video: ['h264'], audio: ['aac'] },
  avi: { video: ['mpeg4'], audio: ['mp3'] },
  webm: { video: ['vp9', 'vp8'], audio: ['opus', 'vorbis'] },
};

describe('convert-video', () => {
  const op = useOperation({
    fixtures: [
      'clip-2s-640x360-25fps.mp4',
      'clip-2s-320x240.webm',
      'clip-1s-320x240-30fps-silent.mp4',
      'clip-1s-321x241-odd.webm',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    ],
    make: {
      // An AVI as other tools write it: MPEG-4 Part 2 (Xvid) and MP3, made here as fixtures.ts has no avi muxer.
      'xvid-mp3.avi': [
        ...lavfi('testsrc2=size=320x240:rate=25:duration=1', sine(440, 1, 44100)),
        ...['-c:v', 'mpeg4', '-vtag', 'XVID', '-q:v', '4', '-c:a', 'libmp3lame', '-q:a', '4', '-shortest', '-f', 'avi'],
      ],
    },
  });

  const convert = async (url: string, format: string) => {
    const { file } = await op.expectOutput(
      '/convert-video/',
      { video_url: url, format },
      { message: `Conversion to .${format} successful`, name: `${UUID}_input_video\\.${format}` },
    );
    return { file, info: await probe(file) };
  };

  // Each target from a source whose codecs it does not take as they are, so a renamed file fails.
  const cases: Array<{ source: string; format: string }> = [
    { source: 'clip-2s-320x240.webm', format: 'mp4' },
    { source: 'clip-2s-320x240.webm', format: 'mov' },
    { source: 'clip-2s-320x240.webm', format: 'avi' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'webm' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'avi' },
    { source: 'xvid-mp3.avi', format: 'mp4' },
  ];
  for (const { source, format } of cases) {
    it(`converts ${source} to ${format} with codecs ${format} suits, keeping picture, sound and duration`, async () => {
      const made = op.made[source];
      const sourcePath = made ?? (await fixture(source));
      const url = made ? op.local(source) : op.files.url(`/f/${source}`);
      const { file, info } = await convert(url, format);
      const input = await probe(sourcePath);
      assert.equal(await container(file, info), format);
      assert.ok(
        SUITS[format]!.video.includes(videoOf(info)!.codec_name),
        `video codec ${videoOf(info)!.codec_name} in ${format}`,
      );
      assert.ok(
        SUITS[format]!.audio.includes(audioOf(info)!.codec_name),
        `audio codec ${audioOf(info)!.codec_name} in ${format}`,
      );
      assert.equal(info.streams.filter((s) => s.codec_type === 'audio').length, 1);
      assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [videoOf(input)!.width, videoOf(input)!.height]);
      assertNear(durationOf(info), durationOf(input), 0.1);
      const difference = await pictureDifference(sourcePath, file, 0.5);
      assert.ok(difference < 8, `picture differs from the source by ${difference}`);
    });
  }

  it('converts to mkv as Matroska, copying the H.264 and AAC it takes', async () => {
    const source = await fixture('clip-2s-640x360-25fps.mp4');
    const { file, info } = await convert(op.files.url('/f/clip-2s-640x360-25fps.mp4'), 'mkv');
    assert.equal(await container(file, info), 'matroska');
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.equal(audioOf(info)?.codec_name, 'aac');
    assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
    assertNear(durationOf(info), 2, 0.1);
  });

  it('copies streams that already suit the target (mp4 to mp4 and to mov) instead of re-encoding', async () => {
    const source = await fixture('clip-2s-640x360-25fps.mp4');
    for (const format of ['mp4', 'mov']) {
      const { file, info } = await convert(op.files.url('/f/clip-2s-640x360-25fps.mp4'), format);
      assert.equal(await container(file, info), format);
      assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
      assert.equal(audioOf(info)?.codec_name, 'aac');
      assert.equal(audioOf(info)?.sample_rate, '48000');
    }
  });

  it('converts a video without sound, and adds none', async () => {
    for (const format of ['webm', 'avi']) {
      const { file, info } = await convert(op.files.url('/f/clip-1s-320x240-30fps-silent.mp4'), format);
      assert.equal(await container(file, info), format);
      assert.ok(SUITS[format]!.video.includes(videoOf(info)!.codec_name));
      assert.equal(info.streams.filter((s) => s.codec_type === 'audio').length, 0);
      assertNear(durationOf(info), 1, 0.1);
    }
  });

  it('converts a video of odd width and height to H.264 (padded to even) and to MPEG-4', async () => {
    let { info } = await convert(op.files.url('/f/clip-1s-321x241-odd.webm'), 'mp4');
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.deepEqual([videoOf(info)?.width, videoOf(info)?.height], [322, 242]);
    assertNear(durationOf(info), 1, 0.1);
    ({ info } = await convert(op.files.url('/f/clip-1s-321x241-odd.webm'), 'avi'));
    assert.equal(videoOf(info)?.codec_name, 'mpeg4');
    assertNear(durationOf(info), 1, 0.1);
  });

  it('answers the errors: unsupported format, missing URL, a failed download, inputs that are not video', async () => {
    const video = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    const missing = op.files.url('/f/missing.mp4');
    await op.expectRefusals('/convert-video/', [
      [
        { video_url: video, format: 'flv' },
        400,
        "Unsupported format 'flv'. Supported formats: mp4, mov, mkv, avi, webm.",
      ],
      [{ format: 'mp4' }, 400, /video_url/],
      [{ video_url: missing, format: 'mp4' }, 502, `Failed to download ${missing}: HTTP 404 Not Found`],
      [{ video_url: op.files.url('/f/tone-2s-44k-stereo.mp3'), format: 'mp4' }, 422, /is not a video file/],
      [{ video_url: op.files.url('/f/not-media.txt'), format: 'webm' }, 422, /not readable media/],
    ]);
  });

  it('runs from the CLI with a local path, printing the same JSON', async () => {
    const webm = await fixture('clip-2s-320x240.webm');
    await assertCliParity({
      args: ['convert-video', '--video-url', webm, '--format', 'avi'],
      message: 'Conversion to .avi successful',
      output: /_input_video\.avi$/,
      check: async (file) => {
        const info = await probe(file);
        assert.equal(info.format.format_name, 'avi');
        assert.equal(videoOf(info)?.codec_name, 'mpeg4');
        assert.equal(audioOf(info)?.codec_name, 'mp3');
      },
      refused: { args: ['convert-video', '--video-url', webm, '--format', 'gif'], stderr: /Unsupported format 'gif'/ },
    });
  });
});
