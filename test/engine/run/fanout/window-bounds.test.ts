import assert from 'node:assert/strict';
import { describe, it } from '../../../helpers/lifecycle.js';
import { planParts } from '../../../../src/engine/run/fanout/part-plan.js';
import { parsePackets } from '../../../../src/engine/run/fanout/video-packets.js';

/** 30 s at 30000/1001 fps, a keyframe every 60 frames, listed as ffprobe prints them: times to the microsecond. */
const NTSC = 30000 / 1001;
const listing = [
  'format|start_time=0.000000',
  ...Array.from(
    { length: 899 },
    (_, n) => `packet|pts_time=${((n * 1001) / 30000).toFixed(6)}|flags=${n % 60 === 0 ? 'K' : '_'}__`,
  ),
].join('\n');

describe('planParts at window bounds', () => {
  it("counts a window's first frame when the start computed from the frame rate lands a hair past it", () => {
    // Frame 219 starts at 7.3073 s; 219 / (30000 / 1001) is 7.3073000000000001, past ffprobe's 7.307300. Frame
    // 603 (20.1201 s) is where the window ends: not in it.
    const window = { start: 219 / NTSC, end: 603 / NTSC };
    const parts = planParts(parsePackets(listing), 6, [window]);
    // The seek keeps frame 219: a part that counted from 220 would stop a frame short of the next part's keyframe.
    assert.deepEqual(
      parts.map((part) => [part.seek, part.frames]),
      [
        ['7.307300', 420 - 219],
        ['14.014000', 603 - 420],
      ],
    );
  });

  it('leaves out the frame a window ends at, when the end computed from the frame rate lands a hair past it', () => {
    // 165 / (30000 / 1001) is 5.5055000000000005, past the frame's 5.505500: frame 165 starts the cut range.
    const parts = planParts(parsePackets(listing), 6, [{ start: 0, end: 165 / NTSC }]);
    assert.deepEqual(
      parts.map((part) => part.frames),
      [165],
    );
  });
});
