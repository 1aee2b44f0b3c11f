import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it, before } from '../../helpers/lifecycle.js';
import { factsFromProbe, headerFacts } from '../../../src/engine/probe/probe.js';
import { runFfprobe } from '../../../src/engine/exec/ffmpeg.js';
import { fixture, fixtures } from '../../helpers/fixtures.js';

const PICTURES = [
  'landscape-1920x1080.jpg',
  'small-300x200.png',
  'red-alpha-400x300.png',
  'white-800x600.png',
  'yellow-333x251.jpg',
  'alpha-box-1080x1920.png',
];

describe('facts from picture headers', () => {
  before(() => fixtures(...PICTURES));

  it('agree with ffprobe on size, codec and alpha for PNG and JPEG', async () => {
    for (const name of PICTURES) {
      const file = await fixture(name);
      const fromHeader = headerFacts(await readFile(file));
      assert.ok(fromHeader, `${name}: header understood`);
      const stdout = await runFfprobe(
        'ffprobe',
        ['-show_format', '-show_streams', '-of', 'json', path.basename(file)],
        { cwd: path.dirname(file), timeoutMs: 30_000 },
      );
      const probed = factsFromProbe(JSON.parse(stdout));
      assert.equal(fromHeader.video!.width, probed.video!.width, name);
      assert.equal(fromHeader.video!.height, probed.video!.height, name);
      assert.equal(fromHeader.video!.codec, probed.video!.codec, name);
      assert.equal(fromHeader.isImage, probed.isImage, name);
      const alpha = (pixFmt: string) => /a|pal8/.test(pixFmt.replace(/^gray/, 'grey'));
      assert.equal(
        alpha(fromHeader.video!.pixFmt),
        alpha(probed.video!.pixFmt),
        `${name}: ${fromHeader.video!.pixFmt} vs ${probed.video!.pixFmt}`,
      );
    }
  });

  it("read a JPEG's start-of-frame past a marker without a length (TEM), for size and pixels alike", async () => {
    // The size and the pixel format were read by two walks of the segments; only one stepped over TEM (ff 01).
    const jpeg = await readFile(await fixture('yellow-333x251.jpg'));
    const withTem = Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0x01]), jpeg.subarray(2)]);
    assert.ok(headerFacts(jpeg));
    assert.deepEqual(headerFacts(withTem), headerFacts(jpeg));
  });

  it('leaves anything else to ffprobe', () => {
    assert.equal(headerFacts(Buffer.from('not a picture at all')), undefined);
    assert.equal(headerFacts(Buffer.from('GIF89a\x10\x00\x10\x00', 'latin1')), undefined, 'GIF is probed by ffprobe');
  });
});
