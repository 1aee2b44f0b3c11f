import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { probe, videoOf } from './helpers/media.js';
import { loadConfig } from '../src/engine/config.js';
import { loadRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';

const PLUGIN = path.resolve(import.meta.dirname, 'fixtures/plugins/grey-thumbnail.js');

/** A picture's decoded RGB pixels (ffmpeg, a decoder other than the libvips that wrote it). */
async function decode(file: string) {
  const { width, height } = videoOf(await probe(file)) as { width: number; height: number };
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer' },
  );
  const data = stdout as unknown as Uint8Array;
  return {
    width,
    height,
    pixel: (x: number, y: number) => [...data.subarray((y * width + x) * 3, (y * width + x + 1) * 3)],
  };
}
const isRed = ([r, g, b]: number[]) => r! > 200 && g! < 60 && b! < 60;
const isBlue = ([r, g, b]: number[]) => b! > 180 && r! < 70 && g! < 70;

/** A server with the built-ins and the grey-thumbnail plugin, loaded as MEDIAFLOW_PLUGINS loads it. */
async function startServer(env: Record<string, string> = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-steps-'));
  const config = loadConfig({
    MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
    MEDIAFLOW_DATA_DIR: dataDir,
    MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0',
    ...env,
  });
  const registry = await loadRegistry({ env: { MEDIAFLOW_PLUGINS: PLUGIN }, configFile: false });
  const { app } = await buildServer({ config, registry, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const post = async (route: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(fields),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  return {
    base,
    post,
    pathOf: (url: string) => path.join(dataDir, 'uploads', url.slice(`${base}/uploads/`.length)),
    work: () => import('node:fs/promises').then(({ readdir }) => readdir(path.join(dataDir, 'work')).catch(() => [])),
    close: async () => {
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describe('in-process steps (libvips)', () => {
  let files: FileServer;
  let server: Awaited<ReturnType<typeof startServer>>;
  let exifDir: string;

  before(async () => {
    await fixtures('red-640x360.jpg', 'small-300x200.png', 'blue-640x480.webp');
    exifDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-exif-'));
    // Stored 400x200, red on the left and blue on the right, with EXIF orientation 6: shown
    // turned a quarter clockwise, as 200x400 with red on top.
    const halves = await sharp({ create: { width: 400, height: 200, channels: 3, background: { r: 0, g: 0, b: 255 } } })
      .composite([
        {
          input: { create: { width: 200, height: 200, channels: 3, background: { r: 255, g: 0, b: 0 } } },
          left: 0,
          top: 0,
        },
      ])
      .png()
      .toBuffer();
    await writeFile(
      path.join(exifDir, 'turned.jpg'),
      await sharp(halves).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer(),
    );
    // A PNG whose header is sound and whose image data is not.
    const png = await readFile(await fixture('small-300x200.png'));
    const idat = png.indexOf('IDAT');
    await writeFile(
      path.join(exifDir, 'broken.png'),
      Buffer.concat([png.subarray(0, idat + 4), Buffer.alloc(2000, 0x5a)]),
    );
    const serveFrom =
      (name: string, type: string) => async (_req: unknown, res: import('node:http').ServerResponse) => {
        res.writeHead(200, { 'content-type': type }).end(await readFile(path.join(exifDir, name)));
      };
    files = await startFileServer({
      '/turned.jpg': serveFrom('turned.jpg', 'image/jpeg'),
      '/broken.png': serveFrom('broken.png', 'image/png'),
    });
    server = await startServer();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (exifDir) await rm(exifDir, { recursive: true, force: true });
  });

  it("runs a third-party plugin's imageStep: a grey thumbnail of the requested width", async () => {
    for (const name of ['red-640x360.jpg', 'blue-640x480.webp']) {
      const res = await server.post('/grey-thumbnail/', { image_url: files.url(`/f/${name}`) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const file = server.pathOf(res.body.output_file!);
      assert.deepEqual([...(await readFile(file)).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
      const frame = await decode(file);
      assert.equal(frame.width, 200);
      const [r, g, b] = frame.pixel(100, Math.floor(frame.height / 2));
      assert.ok(r === g && g === b && r! > 20 && r! < 200, `${name}: centre is ${[r, g, b]}, not a mid grey`);
    }
    assert.deepEqual(await server.work(), []);
  });

  it('applies EXIF orientation, as ffmpeg did, in every image operation', async () => {
    const url = files.url('/turned.jpg');
    let res = await server.post('/convert_image_from_url/', { image_url: url, target_format: 'png' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    let frame = await decode(server.pathOf(res.body.output_file!));
    assert.deepEqual([frame.width, frame.height], [200, 400]);
    assert.ok(
      isRed(frame.pixel(100, 50)) && isBlue(frame.pixel(100, 350)),
      `top ${frame.pixel(100, 50)}, bottom ${frame.pixel(100, 350)}`,
    );
    res = await server.post('/resize_image/', { image_url: url, width: '100', height: '300' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    frame = await decode(server.pathOf(res.body.output_file!));
    assert.ok(
      isRed(frame.pixel(50, 30)) && isBlue(frame.pixel(50, 270)),
      `top ${frame.pixel(50, 30)}, bottom ${frame.pixel(50, 270)}`,
    );
    res = await server.post('/crop_image_to_short/', { image_url: url });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    frame = await decode(server.pathOf(res.body.output_file!));
    // 200x400 fitted into 720x1280: 640x1280, centred between black bars 40 wide.
    assert.ok(
      isRed(frame.pixel(360, 300)) && isBlue(frame.pixel(360, 1000)),
      `top ${frame.pixel(360, 300)}, bottom ${frame.pixel(360, 1000)}`,
    );
  });

  it("answers libvips' failure on a broken picture with a 422 that shows no server path", async () => {
    const res = await server.post('/resize_image/', { image_url: files.url('/broken.png'), width: '50', height: '50' });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.error!, /^libvips failed: /);
    assert.doesNotMatch(res.body.error!, /\/tmp\//);
    assert.deepEqual(await server.work(), []);
  });

  it("fails a step that throws as the plugin's failure, a 500 naming it", async () => {
    const res = await server.post('/grey-thumbnail/', { image_url: files.url('/f/small-300x200.png'), mode: 'throw' });
    assert.equal(res.status, 500);
    assert.equal(res.body.error, "Plugin 'grey-thumbnail' failed: the step broke");
  });

  it('stops a step at the time limit (504) and on cancellation, leaving no work files', async () => {
    const limited = await startServer({ MEDIAFLOW_JOB_TIMEOUT: '1' });
    try {
      const res = await limited.post('/grey-thumbnail/', {
        image_url: files.url('/f/small-300x200.png'),
        mode: 'hang',
      });
      assert.equal(res.status, 504, JSON.stringify(res.body));
      assert.match(res.body.error!, /time limit/);
      assert.deepEqual(await limited.work(), []);
    } finally {
      await limited.close();
    }
    const queued = await server.post(
      '/grey-thumbnail/',
      { image_url: files.url('/f/small-300x200.png'), mode: 'hang' },
      { prefer: 'respond-async' },
    );
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    const jobUrl = `${server.base}/jobs/${queued.body.job_id}`;
    for (let i = 0; i < 100 && ((await (await fetch(jobUrl)).json()) as { stage: string }).stage !== 'process'; i++)
      await new Promise((r) => setTimeout(r, 50));
    const cancelled = await fetch(jobUrl, { method: 'DELETE' });
    assert.equal(cancelled.status, 200);
    assert.equal(((await cancelled.json()) as { status: string }).status, 'cancelled');
    for (let i = 0; i < 100 && (await server.work()).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await server.work(), []);
  });
});
