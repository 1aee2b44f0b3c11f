import assert from 'node:assert/strict';
import { execa } from 'execa';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import {
  audioOf,
  durationOf,
  frameRgb,
  meanLuma,
  packetTimes,
  pcm,
  probe,
  type Probed,
  toneLevel,
  videoOf,
} from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';

/** MD5 of every decoded video frame: the output of a join by copy decodes to exactly the inputs' frames. */
async function frameHashes(file: string): Promise<string[]> {
  const { stdout } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:v:0', '-f', 'framemd5', 'pipe:1']);
  return stdout
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(',').pop()!.trim());
}

/** MD5 of every packet's data in one stream (`v:0`, `a:0`), in file order: a copy keeps them byte for byte. */
async function packetHashes(file: string, stream: string): Promise<string[]> {
  const { stdout } = await execa('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    stream,
    '-show_data_hash',
    'md5',
    '-show_entries',
    'packet=data_hash',
    '-of',
    'json',
    file,
  ]);
  return (JSON.parse(stdout) as { packets: Array<{ data_hash: string }> }).packets.map((packet) => packet.data_hash);
}

const rms = (samples: Float32Array) =>
  Math.sqrt(samples.reduce((sum, x) => sum + x * x, 0) / Math.max(1, samples.length));
const close = (actual: number, expected: number, tolerance: number, what = 'duration') =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);
const audioStreams = (info: Probed) => info.streams.filter((s) => s.codec_type === 'audio');

/** What a join by copy must keep of the first input's video stream. */
const videoShape = (info: Probed) => {
  const v = videoOf(info)!;
  return {
    codec: v.codec_name,
    profile: (v as { profile?: string }).profile,
    width: v.width,
    height: v.height,
    pixFmt: v.pix_fmt,
    fps: v.avg_frame_rate,
  };
};

describe('merge-videos', () => {
  const op = useOperation({
    fixtures: [
      'clip-2s-640x360-25fps.mp4',
      'clip-3s-640x360-25fps.mp4',
      'clip-3s-640x360-25fps-90k.mp4',
      'clip-1s-320x240-30fps-silent.mp4',
      'clip-2s-320x240.webm',
      'clip-2s-480x270-black.mp4',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    ],
  });

  const merge = async (names: string[], separator = ',') => {
    const { file } = await op.expectOutput(
      '/merge-videos/',
      { video_urls: names.map((n) => op.files.url(`/f/${n}`)).join(separator) },
      { message: 'Videos merged successfully', name: `${UUID}_merged\\.mp4` },
    );
    return { file, info: await probe(file) };
  };

  it('joins compatible inputs by stream copy, in order (spaces after commas tolerated)', async () => {
    const { file, info } = await merge(['clip-2s-640x360-25fps.mp4', 'clip-3s-640x360-25fps.mp4'], ', ');
    const first = await probe(await fixture('clip-2s-640x360-25fps.mp4'));
    assert.match(info.format.format_name, /mp4/);
    assert.deepEqual(videoShape(info), videoShape(first));
    assert.equal(audioStreams(info).length, 1);
    assert.deepEqual(
      [audioOf(info)?.codec_name, audioOf(info)?.sample_rate, audioOf(info)?.channels],
      [audioOf(first)?.codec_name, audioOf(first)?.sample_rate, audioOf(first)?.channels],
    );
    close(durationOf(info), 5, 0.1);
    // Not re-encoded: the output decodes to the inputs' very frames, the first input's first.
    const expected = [
      ...(await frameHashes(await fixture('clip-2s-640x360-25fps.mp4'))),
      ...(await frameHashes(await fixture('clip-3s-640x360-25fps.mp4'))),
    ];
    assert.deepEqual(await frameHashes(file), expected);
    // The sound follows: 440 Hz from the first clip, then 660 Hz from the second.
    const head = await pcm(file, 0.2, 1.6);
    const tail = await pcm(file, 2.3, 2.4);
    assert.ok(
      toneLevel(head, 440) > 0.05 && toneLevel(head, 660) < 0.01,
      "first two seconds are the first clip's sound",
    );
    assert.ok(
      toneLevel(tail, 660) > 0.05 && toneLevel(tail, 440) < 0.01,
      "last three seconds are the second clip's sound",
    );
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it("keeps the inputs' packets byte for byte, video and audio, whether an input is remuxed first or not", async () => {
    for (const names of [
      ['clip-2s-640x360-25fps.mp4', 'clip-3s-640x360-25fps.mp4'],
      ['clip-2s-640x360-25fps.mp4', 'clip-3s-640x360-25fps-90k.mp4', 'clip-2s-640x360-25fps.mp4'],
    ]) {
      const { file } = await merge(names);
      for (const stream of ['v:0', 'a:0']) {
        const expected = (
          await Promise.all(names.map(async (name) => packetHashes(await fixture(name), stream)))
        ).flat();
        assert.ok(expected.length > 50, `${stream}: ${expected.length} packets`);
        assert.deepEqual(await packetHashes(file, stream), expected, `${names.join(' + ')}: ${stream}`);
      }
    }
  });

  it('joins compatible inputs whose time bases differ without breaking the timeline', async () => {
    // Same codec, profile, size, rate and audio; only the mp4 track timescale differs (12800 vs 90000).
    const { file, info } = await merge(['clip-2s-640x360-25fps.mp4', 'clip-3s-640x360-25fps-90k.mp4']);
    close(durationOf(info), 5, 0.1);
    close(Number(videoOf(info)?.duration), 5, 0.1, 'video duration');
    assert.equal(videoOf(info)?.avg_frame_rate, '25/1');
    const times = await packetTimes(file, 'v:0');
    assert.equal(times.length, 125);
    assert.ok(Math.max(...times) < 5, `last frame at ${Math.max(...times)} s`);
    const expected = [
      ...(await frameHashes(await fixture('clip-2s-640x360-25fps.mp4'))),
      ...(await frameHashes(await fixture('clip-3s-640x360-25fps-90k.mp4'))),
    ];
    assert.deepEqual(await frameHashes(file), expected);
  });

  it('joins compatible silent inputs by copy, with no audio stream', async () => {
    const { file, info } = await merge(['clip-1s-320x240-30fps-silent.mp4', 'clip-1s-320x240-30fps-silent.mp4']);
    assert.equal(audioStreams(info).length, 0);
    assert.deepEqual(videoShape(info), videoShape(await probe(await fixture('clip-1s-320x240-30fps-silent.mp4'))));
    close(durationOf(info), 2, 0.1);
    const one = await frameHashes(await fixture('clip-1s-320x240-30fps-silent.mp4'));
    assert.deepEqual(await frameHashes(file), [...one, ...one]);
  });

  it(
    'normalises incompatible inputs (size, frame rate, ' + 'VP9 webm, no sound) to the first one and joins them',
    async () => {
      const { file, info } = await merge([
        'clip-2s-640x360-25fps.mp4',
        'clip-2s-320x240.webm',
        'clip-1s-320x240-30fps-silent.mp4',
      ]);
      const video = videoOf(info)!;
      assert.equal(video.codec_name, 'h264');
      assert.deepEqual([video.width, video.height, video.pix_fmt, video.avg_frame_rate], [640, 360, 'yuv420p', '25/1']);
      close(durationOf(info), 5, 0.15);
      close(Number(video.duration), 5, 0.15, 'video duration');
      assert.equal(audioStreams(info).length, 1);
      assert.equal(audioOf(info)?.codec_name, 'aac');
      close(Number(audioOf(info)?.duration), 5, 0.15, 'audio duration');
      // The 4:3 webm is letterboxed into 16:9, not stretched: black bars left and right.
      const frame = await frameRgb(file, 3);
      assert.ok(meanLuma(frame, 0, 0, 70, 360) < 20, `left bar luma ${meanLuma(frame, 0, 0, 70, 360)}`);
      assert.ok(meanLuma(frame, 570, 0, 70, 360) < 20, `right bar luma ${meanLuma(frame, 570, 0, 70, 360)}`);
      assert.ok(meanLuma(frame, 100, 20, 440, 320) > 40, 'the picture is between the bars');
      // The sound stays in step: the webm's tone in its own seconds, silence for the silent clip.
      assert.ok(toneLevel(await pcm(file, 2.2, 1.6), 440) > 0.05, "the webm's sound plays in its seconds");
      assert.ok(rms(await pcm(file, 4.15, 0.7)) < 0.005, 'the silent clip stays silent');
    },
  );

  it('takes the size and rate of the first input even when it is the one without sound', async () => {
    const { file, info } = await merge(['clip-1s-320x240-30fps-silent.mp4', 'clip-2s-480x270-black.mp4']);
    const video = videoOf(info)!;
    assert.deepEqual([video.codec_name, video.width, video.height, video.avg_frame_rate], ['h264', 320, 240, '30/1']);
    close(durationOf(info), 3, 0.15);
    assert.equal(audioStreams(info).length, 1);
    assert.ok(rms(await pcm(file, 0.1, 0.8)) < 0.005, 'the first second is silent');
    assert.ok(toneLevel(await pcm(file, 1.2, 1.6), 440) > 0.05, "then the second clip's tone");
    // The 16:9 black clip sits between bars in 4:3; the picture that came before it is testsrc.
    assert.ok(meanLuma(await frameRgb(file, 0.5), 0, 0, 320, 240) > 40);
  });

  it('answers the errors: fewer than two URLs, a failed download, an input that is not a video', async () => {
    const one = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    for (const video_urls of [one, '', ` ${one} , `]) {
      const res = await op.server.post('/merge-videos/', { video_urls });
      assert.equal(res.status, 400, video_urls);
      assert.equal(res.body.error, 'At least two video URLs are required');
    }
    let res = await op.server.post('/merge-videos/', {});
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'At least two video URLs are required');
    const missing = op.files.url('/f/missing.mp4');
    res = await op.server.post('/merge-videos/', { video_urls: `${one},${missing}` });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    res = await op.server.post('/merge-videos/', { video_urls: `${one},${op.files.url('/f/tone-2s-44k-stereo.mp3')}` });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not a video file/);
    res = await op.server.post('/merge-videos/', { video_urls: `${one},${op.files.url('/f/not-media.txt')}` });
    assert.equal(res.status, 422);
    assert.ok(!res.body.error!.includes(op.server.dataDir), res.body.error);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('runs from the CLI with local paths and URLs, printing the same JSON', async () => {
    const local = await fixture('clip-2s-640x360-25fps.mp4');
    await assertCliParity({
      args: ['merge-videos', '--video-urls', `${local}, ${op.files.url('/f/clip-1s-320x240-30fps-silent.mp4')}`],
      message: 'Videos merged successfully',
      output: /_merged\.mp4$/,
      check: async (file) => {
        const info = await probe(file);
        assert.deepEqual([videoOf(info)?.width, videoOf(info)?.height], [640, 360]);
        assert.equal(audioStreams(info).length, 1);
        close(durationOf(info), 3, 0.15);
      },
      refused: { args: ['merge-videos', '--video-urls', local], stderr: /At least two video URLs are required/ },
    });
  });
});
