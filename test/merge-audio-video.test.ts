import assert from 'node:assert/strict';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import {
  audioOf,
  docType,
  durationOf,
  pcm,
  probe,
  toneLevel,
  videoOf,
  type Probed,
  videoPacketHashes,
} from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';

/** Asserts the output's sound is the tone `present` and carries nothing of the tone `absent`. */
async function assertTone(file: string, seconds: number, present: number, absent: number | undefined): Promise<void> {
  const samples = await pcm(file, 0.1, seconds - 0.2);
  const level = toneLevel(samples, present);
  assert.ok(level > 0.05, `${present} Hz should be heard: level ${level}`);
  if (absent !== undefined) {
    const other = toneLevel(samples, absent);
    assert.ok(other < 0.01, `${absent} Hz (the video's own sound) should be gone: level ${other}`);
  }
}

const audioStreams = (info: Probed) => info.streams.filter((s) => s.codec_type === 'audio');
const close = (actual: number, expected: number, tolerance: number, what = 'duration') =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual}, expected ${expected} ± ${tolerance}`);

describe('merge-audio-video', () => {
  const op = useOperation({
    fixtures: [
      'clip-2s-640x360-25fps.mp4',
      'clip-3s-640x360-25fps.mp4',
      'clip-1s-320x240-30fps-silent.mp4',
      'clip-2s-320x240.webm',
      'clip-1s-321x241-odd.webm',
      'clip-1s-320x240-long-sound.mp4',
      'tone-5s-44k-stereo.mp3',
      'tone-1s-48k-stereo.m4a',
      'tone-2s-44k-stereo.mp3',
      'landscape-1920x1080.jpg',
      'not-media.txt',
    ],
  });

  const merge = async (video: string, audio: string, format?: string) => {
    const fields: Record<string, string> = {
      video_url: op.files.url(`/f/${video}`),
      audio_url: op.files.url(`/f/${audio}`),
    };
    if (format) fields.format = format;
    const { file } = await op.expectOutput('/merge-audio-video/', fields, {
      message: 'Audio successfully merged into the video',
      name: `${UUID}_merged\\.${format ?? 'mp4'}`,
    });
    return { file, info: await probe(file) };
  };

  it(
    'replaces the sound of an mp4 (audio longer than video): video copied, one audio stream, the new one, cut ' +
      'to the video',
    async () => {
      const { file, info } = await merge('clip-2s-640x360-25fps.mp4', 'tone-5s-44k-stereo.mp3');
      const source = await fixture('clip-2s-640x360-25fps.mp4');
      const inVideo = videoOf(await probe(source))!;
      assert.match(info.format.format_name, /mp4/);
      const video = videoOf(info)!;
      assert.equal(video.codec_name, 'h264');
      assert.deepEqual(
        [video.width, video.height, video.pix_fmt, video.avg_frame_rate],
        [inVideo.width, inVideo.height, inVideo.pix_fmt, inVideo.avg_frame_rate],
      );
      // Copied, not re-encoded: the very same 50 packets.
      assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
      // The video's own 48 kHz AAC (440 Hz) is gone; the mp3 (44.1 kHz, 220 Hz) is the only sound.
      assert.equal(audioStreams(info).length, 1);
      assert.equal(audioOf(info)?.codec_name, 'mp3');
      assert.equal(audioOf(info)?.sample_rate, '44100');
      close(durationOf(info), 2, 0.1);
      await assertTone(file, 2, 220, 440);
    },
  );

  it('cuts to the audio when the audio is shorter than the video', async () => {
    const { file, info } = await merge('clip-3s-640x360-25fps.mp4', 'tone-1s-48k-stereo.m4a');
    close(durationOf(info), 1, 0.1);
    close(Number(audioOf(info)?.duration), 1, 0.1, 'audio duration');
    const packets = await videoPacketHashes(file);
    const source = await videoPacketHashes(await fixture('clip-3s-640x360-25fps.mp4'));
    assert.equal(packets.length, 25);
    assert.deepEqual(packets, source.slice(0, 25));
    assert.equal(audioStreams(info).length, 1);
    assert.equal(audioOf(info)?.codec_name, 'aac');
    await assertTone(file, 1, 330, 660);
  });

  it('gives sound to a video that had none (mkv)', async () => {
    const { file, info } = await merge('clip-1s-320x240-30fps-silent.mp4', 'tone-2s-44k-stereo.mp3', 'mkv');
    assert.equal(await docType(file), 'matroska');
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.deepEqual(
      await videoPacketHashes(file),
      await videoPacketHashes(await fixture('clip-1s-320x240-30fps-silent.mp4')),
    );
    assert.equal(audioStreams(info).length, 1);
    assert.equal(audioOf(info)?.codec_name, 'mp3');
    close(durationOf(info), 1, 0.1);
    await assertTone(file, 1, 440, undefined);
  });

  it("ends with the picture when the video's own (dropped) sound outlasts it", async () => {
    // The container says 3 s (its sound), the picture lasts 1 s, the new audio 5 s: 1 s it is.
    const { file, info } = await merge('clip-1s-320x240-long-sound.mp4', 'tone-5s-44k-stereo.mp3');
    close(durationOf(info), 1, 0.1);
    close(Number(audioOf(info)?.duration), 1, 0.1, 'audio duration');
    assert.equal((await videoPacketHashes(file)).length, 25);
    await assertTone(file, 1, 220, 770);
  });

  it('writes mov with the H.264 stream copied', async () => {
    const { file, info } = await merge('clip-2s-640x360-25fps.mp4', 'tone-1s-48k-stereo.m4a', 'mov');
    assert.match(info.format.format_name, /mov/);
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.equal(audioOf(info)?.codec_name, 'aac');
    assert.deepEqual(
      await videoPacketHashes(file),
      (await videoPacketHashes(await fixture('clip-2s-640x360-25fps.mp4'))).slice(0, 25),
    );
    close(durationOf(info), 1, 0.1);
  });

  it('writes avi as MPEG-4 Part 2 and MP3, the picture re-encoded at its size and frame count', async () => {
    const { file, info } = await merge('clip-2s-640x360-25fps.mp4', 'tone-1s-48k-stereo.m4a', 'avi');
    assert.equal(info.format.format_name, 'avi');
    const video = videoOf(info)!;
    assert.equal(video.codec_name, 'mpeg4');
    assert.deepEqual([video.width, video.height], [640, 360]);
    assert.equal(audioStreams(info).length, 1);
    assert.equal(audioOf(info)?.codec_name, 'mp3');
    assert.equal((await videoPacketHashes(file)).length, 25);
    close(durationOf(info), 1, 0.1);
    await assertTone(file, 1, 330, 440);
  });

  it('writes webm as VP9 and Opus (H.264 and MP3 are not webm codecs)', async () => {
    const { file, info } = await merge('clip-2s-640x360-25fps.mp4', 'tone-5s-44k-stereo.mp3', 'webm');
    assert.equal(await docType(file), 'webm');
    const video = videoOf(info)!;
    assert.equal(video.codec_name, 'vp9');
    assert.deepEqual([video.width, video.height], [640, 360]);
    assert.equal(audioOf(info)?.codec_name, 'opus');
    assert.equal((await videoPacketHashes(file)).length, 50);
    close(durationOf(info), 2, 0.1);
    await assertTone(file, 2, 220, 440);
  });

  it("copies a webm's VP9 into webm and re-encodes it for mp4", async () => {
    let { file, info } = await merge('clip-2s-320x240.webm', 'tone-1s-48k-stereo.m4a', 'webm');
    assert.deepEqual(
      await videoPacketHashes(file),
      (await videoPacketHashes(await fixture('clip-2s-320x240.webm'))).slice(0, 25),
    );
    assert.equal(audioOf(info)?.codec_name, 'opus');
    ({ file, info } = await merge('clip-2s-320x240.webm', 'tone-1s-48k-stereo.m4a', 'mp4'));
    assert.equal(videoOf(info)?.codec_name, 'h264');
    assert.equal(videoOf(info)?.pix_fmt, 'yuv420p');
    assert.equal(audioOf(info)?.codec_name, 'aac');
    close(durationOf(info), 1, 0.1);
  });

  it('re-encodes a video of odd width and height to H.264 (padded to even)', async () => {
    const { info } = await merge('clip-1s-321x241-odd.webm', 'tone-2s-44k-stereo.mp3');
    const video = videoOf(info)!;
    assert.equal(video.codec_name, 'h264');
    assert.deepEqual([video.width, video.height], [322, 242]);
    close(durationOf(info), 1, 0.1);
  });

  it('answers errors as JSON and leaves no work files', async () => {
    const video = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    const audio = op.files.url('/f/tone-2s-44k-stereo.mp3');
    let res = await op.server.post('/merge-audio-video/', { video_url: video, audio_url: audio, format: 'flv' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Unsupported format 'flv'. Supported formats: mp4, mov, mkv, avi, webm.");
    res = await op.server.post('/merge-audio-video/', { video_url: video });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /audio_url/);
    res = await op.server.post('/merge-audio-video/', { audio_url: audio });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /video_url/);
    const missing = op.files.url('/f/missing.mp4');
    res = await op.server.post('/merge-audio-video/', { video_url: missing, audio_url: audio });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
    // An audio file is not a video, a picture is not an audio, text is not media.
    res = await op.server.post('/merge-audio-video/', { video_url: audio, audio_url: audio });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not a video file/);
    res = await op.server.post('/merge-audio-video/', {
      video_url: video,
      audio_url: op.files.url('/f/landscape-1920x1080.jpg'),
    });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /is not an audio file/);
    res = await op.server.post('/merge-audio-video/', {
      video_url: video,
      audio_url: op.files.url('/f/not-media.txt'),
    });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /not readable media/);
    assert.ok(!res.body.error!.includes(op.server.dataDir), res.body.error);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('runs from the CLI with a local path and a URL, printing the same JSON', async () => {
    const local = await fixture('clip-2s-640x360-25fps.mp4');
    const audio = op.files.url('/f/tone-1s-48k-stereo.m4a');
    await assertCliParity({
      args: ['merge-audio-video', '--video-url', local, '--audio-url', audio, '--format', 'mov'],
      message: 'Audio successfully merged into the video',
      output: /_merged\.mov$/,
      check: async (file) => {
        const info = await probe(file);
        assert.equal(videoOf(info)?.codec_name, 'h264');
        assert.equal(audioStreams(info).length, 1);
        assert.equal(audioOf(info)?.codec_name, 'aac');
        close(durationOf(info), 1, 0.1);
        await assertTone(file, 1, 330, 440);
      },
      refused: {
        args: ['merge-audio-video', '--video-url', local, '--audio-url', local, '--format', 'flv'],
        stderr: /Unsupported format 'flv'/,
      },
    });
  });
});
