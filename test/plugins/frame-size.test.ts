import assert from 'node:assert/strict';
import { describe, it } from '../helpers/lifecycle.js';
import { frameSize } from '../../src/plugins/images-to-video.js';

describe('images-to-video frame size', () => {
  it("is the first image's size made even, or width x height when given", () => {
    assert.deepEqual(frameSize(undefined, undefined, 333, 251), { width: 334, height: 252 });
    assert.deepEqual(frameSize(640, 360, 333, 251), { width: 640, height: 360 });
  });

  it('shrinks a huge first image to 8K, keeping its shape, and refuses a larger explicit size', () => {
    const { width, height } = frameSize(undefined, undefined, 10_000, 10_000);
    assert.ok(width * height <= 7680 * 4320 + 2 * (width + height), `${width}x${height}`);
    assert.equal(width, height);
    const portrait = frameSize(undefined, undefined, 6000, 12_000);
    assert.ok(Math.abs(portrait.height / portrait.width - 2) < 0.01);
    assert.deepEqual(
      frameSize(undefined, undefined, 4320, 7680),
      { width: 4320, height: 7680 },
      'portrait 8K is allowed',
    );
    assert.throws(() => frameSize(7680, 7680, 100, 100), /at most 33177600 pixels \(8K\), got 7680x7680/);
  });
});
