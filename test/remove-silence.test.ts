import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, H264, lavfi, VP9 } from './helpers/fixtures.js';
import {
  assertNear,
  audioOf,
  audioPacketHashes,
  beepAt,
  docType,
  flashAt,
  pcm,
  probe,
  videoOf,
} from './helpers/media.js';
import { outOfRange, UUID, useOperation } from './helpers/operation.js';

const FRAME = 1 / 25;
const MESSAGE = 'Silence removed successfully';

/** Seconds of an output's first stream of a kind, as its container states them. */
const streamSeconds = (stream: { duration?: string } | undefined) => Number(stream?.duration);

/**
 * Sound with known pauses: 1 s of tone, 1.5 s of silence, 1 s of tone, 2 s of silence, 1 s of tone (6.5 s).
 * Each part a lavfi source of its own, joined: the silences are digital zeros.
 */
const GAPS = [1.5, 2];
const GAPS_GRAPH =
  'sine=f=440:r=44100:d=1[a];anullsrc=r=44100:cl=mono:d=1.5[b];sine=f=440:r=44100:d=1[c];' +
  'anullsrc=r=44100:cl=mono:d=2[d];sine=f=440:r=44100:d=1[e];[a][b][c][d][e]concat=n=5:v=0:a=1';

const EDGES_GRAPH =
  'anullsrc=r=44100:cl=mono:d=1[a];sine=f=440:r=44100:d=1[b];anullsrc=r=44100:cl=mono:d=1[c];' +
  'sine=f=440:r=44100:d=1[d];anullsrc=r=44100:cl=mono:d=1.5[e];[a][b][c][d][e]concat=n=5:v=0:a=1';

describe('remove-silence', () => {
  const op = useOperation({
    fixtures: ['tone-2s-44k-stereo.mp3', 'clip-1s-320x240-30fps-silent.mp4'],
    make: {
      'gaps.mp3': ['-filter_complex', GAPS_GRAPH, '-ac', '2', '-c:a', 'libmp3lame', '-q:a', '4'],
      // Black picture, 25 fps: a quiet tone from 0 to 1 s (below what `beepAt` takes for the beep), silence,
      // then a white flash and a 1 kHz beep together from 3 to 3.4 s, silence, and the tone from 4.4 to 5.4 s.
      'flash-beep.mp4': [
        ...lavfi(
          "color=c=black:s=160x120:r=25:d=5.4,drawbox=c=white:t=fill:enable='between(t,3,3.39)'",
          "aevalsrc=exprs='0.05*sin(2*PI*440*t)*(lt(t,1)+gte(t,4.4))+0.8*sin(2*PI*1000*t)*between(t,3,3.4)'" +
            ':s=48000:d=5.4',
        ),
        ...H264,
        ...['-c:a', 'aac', '-f', 'mp4'],
      ],
      'silence.wav': [...lavfi('anullsrc=r=44100:cl=stereo:d=3'), '-c:a', 'pcm_s16le'],
      // Silent at both ends: 1 s of silence, 1 s of tone, 1 s of silence, 1 s of tone, 1.5 s of silence.
      'edges.wav': ['-filter_complex', EDGES_GRAPH, '-c:a', 'pcm_s16le'],
      // VP9 and Opus at an odd size, 4 s: a tone in the first half of every 2 s, silence in the second.
      'odd.webm': [
        ...lavfi(
          'testsrc=size=321x241:rate=25:duration=4',
          "aevalsrc=exprs='0.3*sin(2*PI*440*t)*lt(mod(t\\,2)\\,1)':s=48000:d=4",
        ),
        ...VP9,
        ...['-pix_fmt', 'yuv420p', '-c:a', 'libopus', '-shortest'],
      ],
    },
  });

  const removeSilence = async (fields: Record<string, string>, ext: string) => {
    const { file, body } = await op.expectOutput('/remove-silence/', fields, {
      message: MESSAGE,
      name: `${UUID}/no_silence\\.${ext}`,
    });
    return { file, removed: body.removed_seconds as number };
  };

  for (const padding of [0.15, 0]) {
    it(`removes the pauses of a recording less ${padding} s of padding each side, within 0.1 s`, async () => {
      const { file, removed } = await removeSilence(
        { media_url: op.local('gaps.mp3'), ...(padding ? {} : { padding: '0' }) },
        'mp3',
      );
      const expected = GAPS.reduce((sum, gap) => sum + gap - 2 * padding, 0);
      assertNear(removed, expected, 0.1, 'removed_seconds');
      const info = await probe(file);
      assert.equal(info.format.format_name, 'mp3');
      // An MP3 frame is 26 ms: the encoder pads the end to a whole one.
      assertNear(Number(info.format.duration), 6.5 - removed, 0.05, 'duration');
    });
  }

  it('removes a pause at the start or the end up to the edge, keeping padding only next to the sound', async () => {
    const { file, removed } = await removeSilence({ media_url: op.local('edges.wav') }, 'wav');
    assertNear(removed, 0.85 + 0.7 + 1.35, 0.1, 'removed_seconds');
    const info = await probe(file);
    assertNear(Number(info.format.duration), 5.5 - removed, 0.01, 'duration');
    // The tone starts 0.15 s in: the padding kept before it.
    const samples = await pcm(file, 0, 0.3);
    const firstSound = samples.findIndex((sample) => Math.abs(sample) > 0.01) / 16000;
    assertNear(firstSound, 0.15, 0.01, 'first sound');
  });

  it('cuts picture and sound together: a flash and a beep stay within one frame of each other', async () => {
    const { file, removed } = await removeSilence({ media_url: op.local('flash-beep.mp4') }, 'mp4');
    // 2 s less 0.3 s of padding, 1 s less 0.3 s: the sound on both sides keeps 0.15 s of each pause.
    assertNear(removed, 1.7 + 0.7, 0.1, 'removed_seconds');
    const info = await probe(file);
    assertNear(streamSeconds(videoOf(info)), 5.4 - removed, FRAME, 'video duration');
    // AAC frames are 1024 samples (21 ms at 48 kHz): the sound ends within one of them, and one of priming.
    assertNear(streamSeconds(audioOf(info)), streamSeconds(videoOf(info)), 0.05, 'audio duration against the video');
    const [flash, beep] = await Promise.all([flashAt(file), beepAt(file)]);
    // The first tone and 0.15 s of the first pause, then 0.15 s before the beep.
    assertNear(flash, 1 + 0.15 + 0.15, FRAME, 'flash');
    assertNear(beep, flash, FRAME, 'beep against the flash');
  });

  it('keeps a WebM as WebM, and pads an odd size for H.264 when `format` asks for mp4', async () => {
    const webm = await removeSilence({ media_url: op.local('odd.webm') }, 'webm');
    let info = await probe(webm.file);
    assert.equal(await docType(webm.file), 'webm');
    assert.deepEqual([videoOf(info)!.codec_name, videoOf(info)!.width, videoOf(info)!.height], ['vp9', 321, 241]);
    // The pause from 1 to 2 s less 0.3 s, and the one from 3 s to the end less 0.15 s.
    assertNear(webm.removed, 0.7 + 0.85, 0.1, 'removed_seconds');
    const mp4 = await removeSilence({ media_url: op.local('odd.webm'), format: 'mp4' }, 'mp4');
    info = await probe(mp4.file);
    assert.deepEqual([videoOf(info)!.codec_name, videoOf(info)!.width, videoOf(info)!.height], ['h264', 322, 242]);
    assert.equal(mp4.removed, webm.removed);
  });

  it('copies an input with no pause long enough as it is, and answers 0 s removed', async () => {
    const { file, removed } = await removeSilence({ media_url: op.files.url('/f/tone-2s-44k-stereo.mp3') }, 'mp3');
    assert.equal(removed, 0);
    const source = await fixture('tone-2s-44k-stereo.mp3');
    assert.deepEqual(await audioPacketHashes(file), await audioPacketHashes(source));
    // Pauses of 1.5 and 2 s are not pauses when only those of 3 s or more count.
    const longer = await removeSilence({ media_url: op.local('gaps.mp3'), min_silence: '3' }, 'mp3');
    assert.equal(longer.removed, 0);
  });

  it('refuses bad fields with a 400, and a video without sound or a silent file with a 422', async () => {
    const tone = op.files.url('/f/tone-2s-44k-stereo.mp3');
    const mute = op.files.url('/f/clip-1s-320x240-30fps-silent.mp4');
    const silence = op.local('silence.wav');
    await op.expectRefusals('/remove-silence/', [
      ...outOfRange({ media_url: tone }, [
        ['threshold', '0', '-90 to -10'],
        ['threshold', 'quiet', '-90 to -10'],
        ['min_silence', '0', '0.1 to 60'],
        ['padding', '-1', '0 to 5'],
      ]),
      [{ media_url: mute }, 422, `Input ${mute} has no audio stream: there is no sound to find silences in`],
      [{ media_url: silence }, 422, `Input ${silence} is silent throughout (below -40 dB): nothing would be left`],
    ]);
  });

  it('runs asynchronously as a job, its result the synchronous answer with removed_seconds', async () => {
    const { file, result } = await op.asJob(
      '/remove-silence/',
      { media_url: op.local('gaps.mp3'), padding: '0.25' },
      MESSAGE,
    );
    assertNear(result.removed_seconds as number, 3.5 - 4 * 0.25, 0.1, 'removed_seconds');
    assertNear(Number((await probe(file)).format.duration), 4, 0.1, 'duration');
  });

  it('runs from the CLI on a local file', async () => {
    const clip = op.made['flash-beep.mp4']!;
    await assertCliParity({
      args: ['remove-silence', '--media-url', clip],
      message: MESSAGE,
      output: /\/no_silence\.mp4$/,
      check: async (file, body) => {
        assertNear(body.removed_seconds as number, 2.4, 0.1, 'removed_seconds');
        assertNear(Number((await probe(file)).format.duration), 3, 0.1, 'duration');
      },
      refused: {
        args: ['remove-silence', '--media-url', clip, '--padding', '-1'],
        stderr: /Expected `(--)?padding` to be a number from 0 to 5, got `-1`/,
      },
    });
  });

  it('runs in a pipeline: pauses removed, then the loudness brought to a podcast target', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: tighten
        description: Pauses cut out of a recording, then its loudness levelled
        inputs:
          recording: url
        steps:
          tight:
            op: remove-silence
            with: { media_url: "{{ inputs.recording }}", padding: 0.1 }
          level:
            op: normalize-audio
            with: { media_url: "{{ steps.tight.output }}", loudness: -16 }
        results:
          episode: "{{ steps.level.output }}"
      `,
      { recording: op.made['gaps.mp3']! },
    );
    assert.deepEqual(written, ['episode.mp3']);
    const duration = Number((await probe(path.join(out, 'episode.mp3'))).format.duration);
    assertNear(duration, 6.5 - 3.5 + 4 * 0.1, 0.1, 'duration');
  });
});
