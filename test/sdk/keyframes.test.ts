import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { keyframeListing, keyframesIn } from '../../src/sdk/keyframes.js';

/** Runs a listing as the engine would: ffmpeg with the command's own arguments, its log returned. */
async function listed(dir: string, from: number, to: number, file = 'gop.mp4'): Promise<number[]> {
  const args = keyframeListing(['-i', file], from, to);
  const { stderr } = await execa('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], { cwd: dir });
  return keyframesIn(stderr);
}

describe('keyframe listing', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-keyframes-'));
    // 20 s at 25 fps, a keyframe exactly every 2 s (50 frames), none at scene changes.
    await execa(
      'ffmpeg',
      [
        ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=20'],
        ...['-c:v', 'libx264', '-g', '50', '-keyint_min', '50', '-sc_threshold', '0', 'gop.mp4'],
      ],
      { cwd: dir },
    );
    // The same as VP9, whose decoder decodes every frame despite -skip_frame nokey.
    await execa(
      'ffmpeg',
      [
        ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=6', '-c:v', 'libvpx-vp9'],
        ...['-deadline', 'realtime', '-cpu-used', '8', '-g', '50', '-keyint_min', '50', 'gop.webm'],
      ],
      { cwd: dir },
    );
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('lists the keyframes between two times, with the input’s own timestamps', async () => {
    assert.deepEqual(await listed(dir, 0, 20), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    assert.deepEqual(await listed(dir, 5, 11), [6, 8, 10]);
  });

  it('lists only keyframes where the decoder decodes every frame (VP9)', async () => {
    assert.deepEqual(await listed(dir, 0, 6, 'gop.webm'), [0, 2, 4]);
  });

  it('reads only showinfo lines of a log, in order and once each', () => {
    const log = [
      '[Parsed_showinfo_0 @ 0x1] config in time_base: 1/12800, frame_rate: 25/1',
      '[Parsed_showinfo_0 @ 0x1] n:   1 pts:  25600 pts_time:2       pos: 9 fmt:yuv420p iskey:1 type:I',
      '[Parsed_showinfo_0 @ 0x1] n:   0 pts:      0 pts_time:0       pos: 4 fmt:yuv420p iskey:1 type:I',
      '[Parsed_showinfo_0 @ 0x1] n:   2 pts:  25600 pts_time:2       pos: 9 fmt:yuv420p iskey:1 type:I',
      '[Parsed_showinfo_0 @ 0x1] n:   3 pts:  26112 pts_time:2.04    pos: 9 fmt:yuv420p iskey:0 type:P',
      '[mp4 @ 0x2] pts_time:7 is not a frame of showinfo',
    ].join('\n');
    assert.deepEqual(keyframesIn(log), [0, 2]);
  });
});
