import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import { frameRgb, probe, videoOf } from './helpers/media.js';
import { UUID, useOperation } from './helpers/operation.js';
import { isBlack, isBlue, isWhite } from './helpers/pixels.js';

describe('resize_image', () => {
  const op = useOperation({
    fixtures: [
      'small-300x200.png',
      'landscape-1920x1080.jpg',
      'blue-640x480.webp',
      'red-alpha-400x300.png',
      'alpha-box-1080x1920.png',
      'tone-2s-44k-stereo.mp3',
      'not-media.txt',
    ],
  });

  /** Resizes a fixture and returns the produced JPEG's path after checking the response. */
  async function resize(name: string, width: string, height: string): Promise<string> {
    const fields = { image_url: op.files.url(`/f/${name}`), width, height };
    return (
      await op.expectOutput('/resize_image/', fields, {
        message: 'Image resized successfully',
        name: `${UUID}_resized\\.jpg`,
      })
    ).file;
  }

  async function assertJpeg(file: string, width: number, height: number): Promise<void> {
    const info = await probe(file);
    const video = videoOf(info)!;
    const head = (await readFile(file)).subarray(0, 3);
    assert.deepEqual([...head], [0xff, 0xd8, 0xff], 'starts as a JPEG file');
    assert.equal(video.codec_name, 'mjpeg');
    assert.equal(video.width, width);
    assert.equal(video.height, height);
  }

  it('shrinks a large JPEG to exactly the requested size, aspect ratio following the request', async () => {
    const file = await resize('landscape-1920x1080.jpg', '320', '320');
    await assertJpeg(file, 320, 320);
  });

  it('gives odd sizes exactly (101x77)', async () => {
    const file = await resize('small-300x200.png', '101', '77');
    await assertJpeg(file, 101, 77);
  });

  it('upscales a small image', async () => {
    const file = await resize('small-300x200.png', '900', '601');
    await assertJpeg(file, 900, 601);
  });

  it('keeps colours: a blue WebP is still blue as a JPEG', async () => {
    const file = await resize('blue-640x480.webp', '64', '48');
    await assertJpeg(file, 64, 48);
    const frame = await frameRgb(file);
    for (const [x, y] of [
      [0, 0],
      [32, 24],
      [63, 47],
    ] as const)
      assert.ok(isBlue(frame.pixel(x, y)), `pixel ${x},${y} is ${frame.pixel(x, y)}`);
  });

  it('makes transparency black, not the colour hidden under it', async () => {
    let frame = await frameRgb(await resize('red-alpha-400x300.png', '40', '30'));
    assert.ok(isBlack(frame.pixel(20, 15)), `transparent red became ${frame.pixel(20, 15)}`);
    const file = await resize('alpha-box-1080x1920.png', '270', '480');
    await assertJpeg(file, 270, 480);
    frame = await frameRgb(file);
    assert.ok(isBlack(frame.pixel(5, 5)), `corner is ${frame.pixel(5, 5)}`);
    assert.ok(isWhite(frame.pixel(135, 240)), `centre is ${frame.pixel(135, 240)}`);
  });

  it('accepts the largest size, 8192', async () => {
    const file = await resize('small-300x200.png', '8192', '16');
    await assertJpeg(file, 8192, 16);
  });

  it('refuses non-positive, non-numeric and absurd sizes with a 400 naming the parameter', async () => {
    const url = op.files.url('/f/small-300x200.png');
    for (const bad of ['0', '-5', 'abc', '8193', '1.5', '1e3', '']) {
      for (const [param, other] of [
        ['width', 'height'],
        ['height', 'width'],
      ] as const) {
        const res = await op.server.post('/resize_image/', { image_url: url, [param]: bad, [other]: '50' });
        assert.equal(res.status, 400, `${param}=${bad}: ${JSON.stringify(res.body)}`);
        assert.ok(res.body.error!.includes(param), `${param}=${bad}: ${res.body.error}`);
      }
    }
    let res = await op.server.post('/resize_image/', { image_url: url, height: '50' });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /width/);
    res = await op.server.post('/resize_image/', { image_url: url, width: '50' });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /height/);
    res = await op.server.post('/resize_image/', { width: '50', height: '50' });
    assert.equal(res.status, 400);
    assert.match(res.body.error!, /image_url/);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it(
    'answers a failed download with 502 and an input that is not an image with 422, ' + 'leaving no work files',
    async () => {
      const missing = op.files.url('/f/missing.png');
      let res = await op.server.post('/resize_image/', { image_url: missing, width: '50', height: '50' });
      assert.equal(res.status, 502);
      assert.equal(res.body.error, `Failed to download ${missing}: HTTP 404 Not Found`);
      for (const name of ['tone-2s-44k-stereo.mp3', 'not-media.txt']) {
        res = await op.server.post('/resize_image/', {
          image_url: op.files.url(`/f/${name}`),
          width: '50',
          height: '50',
        });
        assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
        assert.ok(res.body.error && !res.body.error.includes(op.server.dataDir), res.body.error);
      }
      res = await op.server.post('/resize_image/', { image_url: 'ftp://127.0.0.1/x.png', width: '50', height: '50' });
      assert.equal(res.status, 400);
      assert.deepEqual(await op.server.workLeftovers(), []);
    },
  );

  it('runs from the CLI with a local path, printing the same JSON', async () => {
    const local = await fixture('small-300x200.png');
    await assertCliParity({
      args: ['resize-image', '--image-url', local, '--width', '64', '--height', '48'],
      message: 'Image resized successfully',
      output: /_resized\.jpg$/,
      check: (file) => assertJpeg(file, 64, 48),
      refused: { args: ['resize-image', '--image-url', local, '--width', '0', '--height', '48'], stderr: /width/ },
    });
  });
});
