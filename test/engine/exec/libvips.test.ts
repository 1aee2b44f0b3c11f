import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { fixture } from '../../helpers/fixtures.js';
import { transformImage } from '../../../src/engine/exec/libvips.js';

describe('libvips (in-process pictures)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-libvips-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const limits = { maxPixels: 100_000_000, timeoutSeconds: 30, threads: 1 };
  const png = (picture: import('sharp').Sharp) => picture.png();

  it('refuses SVG and other loaders than JPEG, PNG, WebP, GIF and TIFF, whatever the file is called', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>';
    for (const name of ['picture.svg', 'picture.png']) {
      await writeFile(path.join(dir, name), svg);
      await assert.rejects(
        transformImage(path.join(dir, name), path.join(dir, 'out.png'), png, limits),
        (error: Error & { status?: number }) => {
          assert.equal(error.status, 422);
          assert.match(error.message, /^libvips failed: .*unsupported image format/);
          return true;
        },
      );
    }
    // A PPM, which libvips could read were its loader not blocked.
    await writeFile(
      path.join(dir, 'picture.ppm'),
      Buffer.concat([Buffer.from('P6\n2 2\n255\n'), Buffer.alloc(12, 200)]),
    );
    await assert.rejects(
      transformImage(path.join(dir, 'picture.ppm'), path.join(dir, 'out.png'), png, limits),
      /unsupported image format/,
    );
    await assert.rejects(stat(path.join(dir, 'out.png')), 'nothing was written');
  });

  it("shows libvips' first non-empty line without server paths, POSIX or Windows, as plugins' failures", async () => {
    // libvips' own copy of the scrubbing took the first line even when empty, and knew only POSIX paths.
    const input = await fixture('small-300x200.png');
    const failing = () => {
      throw new Error('\nvips_foreignload: C:\\srv\\work\\in.png and /srv/data/work/in.png are not known formats');
    };
    const output = path.join(dir, 'never.png');
    await assert.rejects(transformImage(input, output, failing, limits), (error: Error & { status?: number }) => {
      assert.equal(error.status, 422);
      assert.equal(error.message, 'libvips failed: vips_foreignload: <path> and <path> are not known formats');
      return true;
    });
  });

  it('refuses a picture over the pixel limit by its header, naming the limit', async () => {
    const input = await fixture('small-300x200.png');
    await assert.rejects(
      transformImage(input, path.join(dir, 'small.png'), png, {
        ...limits,
        maxPixels: 59_999,
        source: 'http://127.0.0.1/small.png',
      }),
      (error: Error & { status?: number }) => {
        assert.equal(error.status, 422);
        assert.equal(
          error.message,
          'Input http://127.0.0.1/small.png is larger than the limit of 59999 pixels (MEDIAFLOW_MAX_PIXELS)',
        );
        return true;
      },
    );
    await transformImage(input, path.join(dir, 'small.png'), png, { ...limits, maxPixels: 60_000 });
    assert.deepEqual([...(await readFile(path.join(dir, 'small.png'))).subarray(1, 4)], [0x50, 0x4e, 0x47]);
  });
});
