import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, lavfi } from './helpers/fixtures.js';
import { audioOf, loudnessOf, probe, probeLines, videoOf, videoPacketHashes } from './helpers/media.js';
import { outOfRange, UUID, useOperation } from './helpers/operation.js';
import type { LoudnessMeasure } from '../src/plugins/shared/loudness-log.js';

const MESSAGE = 'Audio normalized successfully';
/** A tone with bursts up to -4.2 dBTP every 2 s, at a sample rate. */
const bursts = (rate: number) =>
  `aevalsrc=exprs='0.12*sin(2*PI*440*t)+if(lt(mod(t\\,2)\\,0.05)\\,0.5*sin(2*PI*2000*t)\\,0)':s=${rate}:d=8`;

/** The target held as the issue holds it: integrated loudness within 1 LU, true peak at most 0.5 dB over the limit. */
function assertOnTarget(measure: LoudnessMeasure, loudness: number, truePeak: number) {
  assert.ok(Math.abs(measure.integrated - loudness) <= 1, `${measure.integrated} LUFS, target ${loudness}`);
  assert.ok(measure.truePeak <= truePeak + 0.5, `true peak ${measure.truePeak} dBTP, limit ${truePeak}`);
}

/** The sizes of a file's audio packets, in order: an MP3's frames. */
const packetSizes = async (file: string): Promise<number[]> =>
  (await probeLines(file, 'packet=size', 'a:0')).map(Number);

interface Normalized {
  file: string;
  loudness: { input: number; output: number };
}

describe('normalize-audio', () => {
  const op = useOperation({
    fixtures: ['tone-2s-44k-stereo.mp3', 'clip-2s-640x360-25fps.mp4', 'clip-1s-320x240-30fps-silent.mp4'],
    make: {
      // The bursts over a tone at about -19.8 LUFS: at -14 LUFS one gain would put the bursts 2.6 dB over a
      // -1.5 dBTP limit, so the limiter must hold them.
      'bursts.wav': [...lavfi(bursts(48000)), '-c:a', 'pcm_s16le'],
      // The bursts as a 64 kbit/s MP3: one gain would put them over the limit.
      'bursts.mp3': [...lavfi(bursts(44100)), '-c:a', 'libmp3lame', '-b:a', '64k'],
      // A quiet tone as a mono MPEG-2 Layer III file (22.05 kHz), about -30 LUFS: 11 steps of 1.5 dB to -14.
      'quiet-22k.mp3': [...lavfi('sine=f=440:r=22050:d=4'), '-af', 'volume=0.04', '-c:a', 'libmp3lame', '-b:a', '32k'],
      // Digital silence, 3 s.
      'silence.wav': [...lavfi('anullsrc=r=44100:cl=stereo:d=3'), '-c:a', 'pcm_s16le'],
    },
  });

  const normalize = async (fields: Record<string, string>, ext: string): Promise<Normalized> => {
    const { file, body } = await op.expectOutput('/normalize-audio/', fields, {
      message: MESSAGE,
      name: `${UUID}/normalized\\.${ext}`,
    });
    return { file, loudness: body.loudness as Normalized['loudness'] };
  };

  it('brings an MP3 to -14 LUFS by default, answering the loudness it measured before and after', async () => {
    const source = await fixture('tone-2s-44k-stereo.mp3');
    const { file, loudness } = await normalize({ media_url: op.files.url('/f/tone-2s-44k-stereo.mp3') }, 'mp3');
    const [before, after] = await Promise.all([loudnessOf(source), loudnessOf(file)]);
    assertOnTarget(after, -14, -1.5);
    // The answer is what a measure of each file finds (the output's, before the encoder, within 0.1 LU).
    assert.ok(Math.abs(loudness.input - before.integrated) <= 0.05, `input ${loudness.input} ≠ ${before.integrated}`);
    assert.ok(Math.abs(loudness.output - after.integrated) <= 0.1, `output ${loudness.output} ≠ ${after.integrated}`);
    assert.ok(loudness.input < -17, `the tone was quieter: ${loudness.input}`);
    const info = await probe(file);
    assert.equal(info.format.format_name, 'mp3');
    assert.equal(audioOf(info)!.sample_rate, '44100');
  });

  it('gives an MP3 its gain in whole 1.5 dB steps frame by frame, without re-encoding it', async () => {
    const source = op.made['quiet-22k.mp3']!;
    const { file, loudness } = await normalize({ media_url: op.local('quiet-22k.mp3') }, 'mp3');
    // The same frames, of the same sizes: no decode, no encode.
    assert.deepEqual(await packetSizes(file), await packetSizes(source));
    assert.equal((await probe(file)).format.size, (await probe(source)).format.size);
    const [before, after] = await Promise.all([loudnessOf(source), loudnessOf(file)]);
    assertOnTarget(after, -14, -1.5);
    // A whole number of steps, 1.50515 dB each.
    const steps = (after.integrated - before.integrated) / (5 * Math.log10(2));
    assert.ok(Math.abs(steps - Math.round(steps)) < 0.05 && Math.round(steps) > 0, `${steps} steps`);
    // The output loudness answered is the input's plus the gain: what a measure finds, within 0.1 LU.
    assert.ok(Math.abs(loudness.input - before.integrated) <= 0.05, `input ${loudness.input} ≠ ${before.integrated}`);
    assert.ok(Math.abs(loudness.output - after.integrated) <= 0.1, `output ${loudness.output} ≠ ${after.integrated}`);
  });

  it('re-encodes an MP3 whose peaks one gain would push over the limit, holding them under it', async () => {
    const source = op.made['bursts.mp3']!;
    const { file, loudness } = await normalize({ media_url: op.local('bursts.mp3') }, 'mp3');
    const after = await loudnessOf(file);
    assertOnTarget(after, -14, -1.5);
    assert.ok(Math.abs(loudness.output - after.integrated) <= 0.1, `output ${loudness.output} ≠ ${after.integrated}`);
    // Written anew by the encoder (VBR), not the 64 kbit/s frames with a new gain.
    assert.notDeepEqual(await packetSizes(file), await packetSizes(source));
  });

  it('copies the picture of a video as it is, and takes a target and a limit', async () => {
    const source = await fixture('clip-2s-640x360-25fps.mp4');
    const { file, loudness } = await normalize(
      { media_url: op.files.url('/f/clip-2s-640x360-25fps.mp4'), loudness: '-23', true_peak: '-2' },
      'mp4',
    );
    assertOnTarget(await loudnessOf(file), -23, -2);
    assert.ok(Math.abs(loudness.output + 23) <= 0.5, JSON.stringify(loudness));
    assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
    const info = await probe(file);
    assert.equal(videoOf(info)!.codec_name, 'h264');
    assert.equal(audioOf(info)!.sample_rate, '48000');
  });

  it('holds loud bursts under the true-peak limit and still reaches the target', async () => {
    const { file, loudness } = await normalize({ media_url: op.local('bursts.wav') }, 'wav');
    const after = await loudnessOf(file);
    assertOnTarget(after, -14, -1.5);
    assert.ok(Math.abs(loudness.output - after.integrated) <= 0.1, `output ${loudness.output} ≠ ${after.integrated}`);
    assert.equal(audioOf(await probe(file))!.sample_rate, '48000', "back to the input's rate from loudnorm's 192 kHz");
  });

  it('refuses targets out of range with a 400, and a video without sound or a silent file with a 422', async () => {
    const mute = op.files.url('/f/clip-1s-320x240-30fps-silent.mp4');
    const silence = op.local('silence.wav');
    await op.expectRefusals('/normalize-audio/', [
      ...outOfRange({ media_url: op.files.url('/f/tone-2s-44k-stereo.mp3') }, [
        ['loudness', '-41', '-40 to -5'],
        ['loudness', '-4', '-40 to -5'],
        ['loudness', 'loud', '-40 to -5'],
        ['true_peak', '1', '-9 to 0'],
      ]),
      [{ media_url: mute }, 422, `Input ${mute} has no audio stream: there is no sound to normalize`],
      [{ media_url: silence }, 422, `Input ${silence} is silent: there is no loudness to normalize`],
    ]);
  });

  it('runs asynchronously as a job, its result the synchronous answer with the loudness', async () => {
    const { file, result } = await op.asJob(
      '/normalize-audio/',
      { media_url: op.files.url('/f/tone-2s-44k-stereo.mp3'), loudness: '-16' },
      MESSAGE,
    );
    const { output } = result.loudness as Normalized['loudness'];
    assert.ok(Math.abs(output + 16) <= 0.5, JSON.stringify(result));
    assertOnTarget(await loudnessOf(file), -16, -1.5);
  });

  it('runs from the CLI on a local file, printing the loudness', async () => {
    const bursts = op.made['bursts.wav']!;
    await assertCliParity({
      args: ['normalize-audio', '--media-url', bursts],
      message: MESSAGE,
      output: /\/normalized\.wav$/,
      check: async (file, body) => {
        assertOnTarget(await loudnessOf(file), -14, -1.5);
        const { output } = body.loudness as Normalized['loudness'];
        assert.ok(Math.abs(output + 14) <= 1, JSON.stringify(body));
      },
      refused: {
        args: ['normalize-audio', '--media-url', bursts, '--true-peak', '1'],
        stderr: /Expected `(--)?true[-_]peak` to be a number from -9 to 0, got `1`/,
      },
    });
  });

  it('runs in a pipeline, on the output of the step before', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: broadcast
        description: A clip sped up, then brought to the broadcast loudness
        inputs:
          clip: url
        steps:
          fast:
            op: change-speed
            with: { media_url: "{{ inputs.clip }}", speed: 2 }
          level:
            op: normalize-audio
            with: { media_url: "{{ steps.fast.output }}", loudness: -23, true_peak: -1 }
        results:
          level: "{{ steps.level.output }}"
      `,
      { clip: await fixture('clip-2s-640x360-25fps.mp4') },
    );
    assert.deepEqual(written, ['level.mp4']);
    assertOnTarget(await loudnessOf(path.join(out, 'level.mp4')), -23, -1);
  });
});
