import assert from 'node:assert/strict';
import { execa } from 'execa';
import { describe, it } from '../helpers/lifecycle.js';
import { keptParts, silencesIn } from '../../src/plugins/remove-silence/silences.js';

/** What silencedetect logs at `-loglevel info` for `sound` (a lavfi audio graph), as the plugin runs it. */
async function detect(sound: string, noise = -40, minimum = 0.6): Promise<string> {
  const { stderr } = await execa('ffmpeg', [
    '-hide_banner',
    '-nostats',
    '-loglevel',
    'info',
    '-f',
    'lavfi',
    '-i',
    sound,
    '-af',
    `silencedetect=noise=${noise}dB:d=${minimum}`,
    '-f',
    'null',
    '-',
  ]);
  return stderr;
}

const near = (actual: number, expected: number, what: string, tolerance = 0.002) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected}`);

describe('silencesIn', () => {
  it("reads silencedetect's log of a real run: every gap, one still open at the end lasting to the end", async () => {
    // 1 s of tone, 1.5 s of silence, 1 s of tone, 2 s of silence: 5.5 s.
    const log = await detect(
      'sine=f=440:r=44100:d=1[a];anullsrc=r=44100:cl=mono:d=1.5[b];sine=f=440:r=44100:d=1[c];' +
        'anullsrc=r=44100:cl=mono:d=2[d];[a][b][c][d]concat=n=4:v=0:a=1',
    );
    const silences = silencesIn(log, 5.5);
    assert.equal(silences.length, 2, log);
    near(silences[0]!.start, 1, 'first silence start');
    near(silences[0]!.end, 2.5, 'first silence end');
    near(silences[1]!.start, 3.5, 'second silence start');
    near(silences[1]!.end, 5.5, 'second silence end');
  });

  it('ends a silence the log leaves open at the duration, and finds none in a log without any', () => {
    const log = '[silencedetect @ 0x55f9c61efac0] silence_start: 2.25\nsize=N/A time=00:00:04.00\n';
    assert.deepEqual(silencesIn(log, 4), [{ start: 2.25, end: 4 }]);
    assert.deepEqual(silencesIn('Output #0, null, to pipe:\n', 4), []);
  });

  it('takes silences shorter than min_silence for sound, as silencedetect does', async () => {
    const log = await detect(
      'sine=f=440:r=44100:d=1[a];anullsrc=r=44100:cl=mono:d=0.4[b];sine=f=440:r=44100:d=1[c];' +
        '[a][b][c]concat=n=3:v=0:a=1',
    );
    assert.deepEqual(silencesIn(log, 2.4), []);
  });
});

describe('keptParts', () => {
  it('cuts each silence less the padding on both sides of the sound', () => {
    const { kept, removed } = keptParts(
      [
        { start: 1, end: 2.5 },
        { start: 3.5, end: 4.5 },
      ],
      { duration: 6, padding: 0.15, step: 0 },
    );
    const expected = [
      [0, 1.15],
      [2.35, 3.65],
      [4.35, 6],
    ];
    assert.equal(kept.length, expected.length);
    kept.forEach((part, i) => {
      near(part.start, expected[i]![0]!, `part ${i} start`);
      near(part.end, expected[i]![1]!, `part ${i} end`);
    });
    near(removed, 1.2 + 0.7, 'removed');
  });

  it('removes a silence at the start or the end up to the edge, where no sound needs padding', () => {
    const { kept, removed } = keptParts(
      [
        { start: 0, end: 2 },
        { start: 5, end: 7 },
      ],
      { duration: 7, padding: 0.25, step: 0 },
    );
    assert.deepEqual(kept, [{ start: 1.75, end: 5.25 }]);
    near(removed, 3.5, 'removed');
  });

  it('puts every cut point on the frame grid, so each part holds whole frames', () => {
    const { kept } = keptParts([{ start: 1.013, end: 2.51 }], { duration: 4, padding: 0.15, step: 0.04 });
    for (const part of kept)
      for (const time of [part.start, part.end])
        assert.ok(Math.abs(time / 0.04 - Math.round(time / 0.04)) < 1e-9, `${time} is on the 25 fps grid`);
    near(kept[0]!.end, 1.16, 'first cut');
    near(kept[1]!.start, 2.36, 'second cut');
  });

  it('keeps a silence whole when the padding leaves nothing of it, and everything when there is none', () => {
    assert.deepEqual(keptParts([{ start: 1, end: 1.3 }], { duration: 3, padding: 0.15, step: 0 }), {
      kept: [{ start: 0, end: 3 }],
      removed: 0,
    });
    assert.deepEqual(keptParts([], { duration: 3, padding: 0.15, step: 0.04 }), {
      kept: [{ start: 0, end: 3 }],
      removed: 0,
    });
  });

  it('keeps nothing of an input that is silent throughout', () => {
    assert.deepEqual(keptParts([{ start: 0, end: 3 }], { duration: 3, padding: 0.15, step: 0 }), {
      kept: [],
      removed: 3,
    });
  });
});
