import assert from 'node:assert/strict';
import { describe, it } from '../../../helpers/lifecycle.js';
import { partLength, planParts } from '../../../../src/engine/run/fanout/part-plan.js';
import type { VideoPackets } from '../../../../src/engine/run/fanout/video-packets.js';

/** The packets of `seconds` of video at `fps`, a keyframe every `gop` frames, from 0. */
function packets(seconds: number, fps: number, gop: number): VideoPackets {
  const times = Array.from({ length: Math.round(seconds * fps) }, (_, i) => i / fps);
  return { times, keyframes: times.filter((_, i) => i % gop === 0), printed: new Map() };
}

describe('planning a split encode', () => {
  it('keeps MEDIAFLOW_PART_SECONDS where the parts already come in a multiple of the slots', () => {
    assert.equal(partLength(600, 60, 1), 60);
    assert.equal(partLength(600, 60, 2), 60);
    assert.equal(partLength(240, 60, 2), 60);
  });

  it('makes the parts a multiple of the slots, within two thirds and one and a half of the length asked', () => {
    // Ten parts on three workers would leave two idle for the tenth: nine of 66.7 s end together.
    assert.equal(partLength(600, 60, 3), 600 / 9);
    assert.equal(partLength(600, 60, 4), 600 / 12);
    assert.equal(partLength(240, 60, 3), 80);
    // Sixteen slots for four minutes: 15 s parts would be a quarter of the length asked; it stays.
    assert.equal(partLength(240, 60, 16), 60);
    // Under two parts' worth, nothing to share.
    assert.equal(partLength(100, 60, 4), 60);
  });

  it('starts each part at the first keyframe at or past each multiple of the length, without drift', () => {
    const spans = planParts(packets(600, 30, 60), 600 / 9);
    assert.deepEqual(
      spans.map((span) => span.start),
      [0, 68, 134, 200, 268, 334, 400, 468, 534],
    );
    assert.equal(
      spans.reduce((sum, span) => sum + span.frames, 0),
      18000,
    );
    assert.deepEqual(
      planParts(packets(240, 25, 50), 60).map((span) => span.start),
      [0, 60, 120, 180],
    );
  });

  it('leaves a tail shorter than half a part with the part before it', () => {
    // 200 s in parts of 60: a fourth part would start at 180 and last 20 s.
    assert.deepEqual(
      planParts(packets(200, 25, 50), 60).map((span) => span.start),
      [0, 60, 120],
    );
  });
});
