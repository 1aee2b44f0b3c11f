import assert from 'node:assert/strict';
import { execa } from 'execa';
import { describe, it } from '../helpers/lifecycle.js';
import { ebur128Summary, loudnormStats } from '../../src/plugins/shared/loudness-log.js';

/** What ffmpeg logs at `-loglevel info` when `filter` runs over `sound` (a lavfi audio source). */
async function logOf(sound: string, filter: string): Promise<string> {
  const args = ['-hide_banner', '-nostats', '-loglevel', 'info', '-f', 'lavfi', '-i', sound, '-af', filter];
  const { stderr } = await execa('ffmpeg', [...args, '-f', 'null', '-']);
  return stderr;
}

const near = (actual: number, expected: number, what: string, tolerance = 0.15) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} ± ${tolerance}`);

describe('ebur128Summary', () => {
  it("reads a real run's summary: a 1 kHz tone at -18.06 dBFS (lavfi's sine) is -21.07 LUFS", async () => {
    const log = await logOf('sine=f=1000:r=48000:d=5', 'ebur128=peak=true:framelog=verbose');
    const measure = ebur128Summary(log);
    assert.ok(measure, log);
    // One channel of a sine at amplitude 1/8: 20 log10(1/8) - 3.01 dB, K-weighting adding nearly nothing at 1 kHz.
    near(measure.integrated, -21.07, 'integrated');
    near(measure.truePeak, -18.06, 'true peak');
    near(measure.threshold, -31.07, 'threshold (the relative gate, 10 LU below)');
    assert.equal(measure.range, 0);
  });

  it('reads silence as -70 LUFS and a peak of -inf, and nothing from a log without a summary', async () => {
    const log = await logOf('anullsrc=r=48000:cl=stereo:d=2', 'ebur128=peak=true:framelog=verbose');
    assert.deepEqual(ebur128Summary(log), { integrated: -70, threshold: 0, range: 0, truePeak: -Infinity });
    assert.equal(ebur128Summary('[in#0] Error opening input\n'), undefined);
  });

  it('reads each of two named ebur128 filters of one run by its name, whichever closes last', async () => {
    const graph =
      '[0:a]ebur128@voice=peak=sample:framelog=verbose[v];[1:a]ebur128@music=peak=sample:framelog=verbose[m]';
    const { stderr } = await execa('ffmpeg', [
      ...['-hide_banner', '-nostats', '-loglevel', 'info'],
      ...['-f', 'lavfi', '-i', 'sine=f=1000:r=48000:d=3', '-f', 'lavfi', '-i', 'sine=f=1000:r=48000:d=3,volume=-10dB'],
      ...['-filter_complex', graph, '-map', '[v]', '-f', 'null', '-', '-map', '[m]', '-f', 'null', '-'],
    ]);
    near(ebur128Summary(stderr, 'voice')!.integrated, -21.07, 'voice');
    near(ebur128Summary(stderr, 'music')!.integrated, -31.07, 'music');
    assert.equal(ebur128Summary(stderr, 'other'), undefined);
  });
});

describe('loudnormStats', () => {
  it("reads a real run's JSON: the loudness of its output, and how far that fell short of the target", async () => {
    const linear = await logOf(
      'sine=f=1000:r=48000:d=5',
      'loudnorm=I=-14:TP=-1.5:LRA=1:measured_I=-21.07:measured_TP=-18.06:measured_LRA=0.1:measured_thresh=-31.07:' +
        'linear=true:print_format=json',
    );
    const stats = loudnormStats(linear);
    assert.ok(stats, linear);
    near(stats.outputIntegrated, -14, 'output loudness');
    near(stats.targetOffset, 0, 'target offset');
    // A tone at -19.8 LUFS with bursts up to -4.2 dBTP: 5.8 dB more would put them 2.6 dB over the limit,
    // and the limiter that holds them takes about 1.4 LU, which the offset gives back.
    const bursts =
      "aevalsrc=exprs='0.12*sin(2*PI*440*t)+if(lt(mod(t\\,2)\\,0.05)\\,0.5*sin(2*PI*2000*t)\\,0)':s=48000:d=8";
    const limited = loudnormStats(await logOf(bursts, 'loudnorm=I=-14:TP=-1.5:print_format=json'));
    assert.ok(limited);
    near(limited.targetOffset, -14 - limited.outputIntegrated, 'target offset', 0.01);
    assert.ok(limited.targetOffset > 1, `offset ${limited.targetOffset}`);
  });

  it('finds nothing in a log without the JSON, or with a broken one', () => {
    assert.equal(loudnormStats('Output #0, null, to pipe:\n'), undefined);
    assert.equal(loudnormStats('{\n\t"input_i" : "-27.04",\n'), undefined);
    assert.equal(loudnormStats('{ "input_i": "-20.0", "output_i": "-14.0" }'), undefined);
  });
});
