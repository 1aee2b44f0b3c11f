import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { runFfmpeg, tidyStderr } from '../../../src/engine/exec/ffmpeg.js';

describe('ffmpeg: the message of a failed run', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-ffmpeg-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps ffmpeg's telling line, not the consequences it logs after it, and no paths", async () => {
    // Latin-1 bytes where ffmpeg's subtitle decoder wants UTF-8, opened by absolute path.
    const srt = path.join(dir, 'latin1.srt');
    await writeFile(
      srt,
      Buffer.concat([
        Buffer.from('1\n00:00:00,000 --> 00:00:01,000\nCaf'),
        Buffer.from([0xe9]),
        Buffer.from(' cr'),
        Buffer.from([0xe8]),
        Buffer.from('me\n'),
      ]),
    );
    const args = [
      '-f',
      'lavfi',
      '-i',
      'color=c=black:size=64x64:rate=5:duration=1',
      '-vf',
      `subtitles=filename=${srt}`,
      '-f',
      'null',
      '-',
    ];
    const error = await runFfmpeg('ffmpeg', args, { cwd: dir, timeoutMs: 30_000 }).then(
      () => assert.fail('ffmpeg should have failed'),
      (e: Error & { status?: number }) => e,
    );
    assert.equal(error.status, 422);
    // Not "Error reinitializing filters!", and not ffmpeg's advice on its own command line.
    assert.match(error.message, /^ffmpeg failed: Invalid UTF-8 in decoded subtitles text(;|$)/);
    assert.doesNotMatch(error.message, /reinitializing|sub_charenc/);
    assert.ok(!error.message.includes(dir), error.message);
  });

  it('falls back to the last lines when every line is a consequence', () => {
    assert.equal(
      tidyStderr('[vf#0:0 @ 0x55] Error reinitializing filters!\nConversion failed!\n'),
      'Error reinitializing filters!',
    );
    assert.equal(
      tidyStderr(
        '[srt @ 0x5640e89f8d40] Invalid UTF-8 in decoded subtitles text; maybe missing -sub_charenc option\n' +
          'Error while decoding stream #0:0: Invalid data found when processing input\n',
      ),
      'Invalid UTF-8 in decoded subtitles text',
    );
  });
});
