import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { probeFile } from '../../src/engine/probe/probe.js';
import { capSeconds } from '../../src/engine/run/output-caps.js';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixtures } from '../helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { durationOf, probe } from '../helpers/media.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';

const TEN_HOURS = 36_000;

/** The offset of the first box of `type` in an MP4 (found by its name; the files are small and made here). */
function boxAt(file: Buffer, type: string): number {
  const at = file.indexOf(type, 0, 'latin1');
  if (at < 4) throw new Error(`no '${type}' box`);
  return at - 4;
}

/**
 * A 1 s, 25 fps MP4 whose headers (mvhd, tkhd, mdhd) still claim 1 s, with its video samples'
 * durations (the `stts` box's one entry, patched in place) stretched so that its frames reach `seconds`.
 */
async function lyingMp4(dir: string, name: string, codec: string[], seconds: number): Promise<string> {
  const file = path.join(dir, name);
  await execa('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=160x120:rate=25:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=duration=1:sample_rate=48000',
    ...codec,
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-shortest',
    file,
  ]);
  const bytes = await readFile(file);
  // The video track comes first: its mdhd and stts are the file's first.
  const mdhd = boxAt(bytes, 'mdhd');
  const timescale = bytes.readUInt32BE(mdhd + 8 + 12);
  const stts = boxAt(bytes, 'stts');
  assert.equal(bytes.readUInt32BE(stts + 12), 1, 'one stts entry');
  const frames = bytes.readUInt32BE(stts + 16);
  bytes.writeUInt32BE(Math.round((seconds * timescale) / frames), stts + 20);
  await writeFile(file, bytes);
  return file;
}

/**
 * Makes `name` of `seconds` with `codec`, then overwrites the 8-byte float after `marker` with
 * `claim`: a header's length, patched.
 */
async function lyingFile(
  dir: string,
  name: string,
  codec: string[],
  seconds: number,
  marker: Buffer,
  claim: number,
): Promise<string> {
  const file = path.join(dir, name);
  await execa('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=160x120:rate=10:duration=${seconds}`,
    ...codec,
    file,
  ]);
  const bytes = await readFile(file);
  const at = bytes.indexOf(marker);
  assert.ok(at > 0, `${name} has its length at ${marker.toString('hex')}`);
  bytes.writeDoubleBE(claim, at + marker.length);
  await writeFile(file, bytes);
  return file;
}

/** A WebM of `seconds` whose segment header (Duration, an 8-byte float of milliseconds) claims 1 s. */
const lyingWebm = (dir: string, seconds: number) =>
  lyingFile(
    dir,
    'lying.webm',
    ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8'],
    seconds,
    Buffer.from([0x44, 0x89, 0x88]),
    1000,
  );

/**
 * An FLV of `seconds` whose metadata (`duration`, an AMF number after its type byte) claims 1 s: ffprobe believes it.
 */
const lyingFlv = (dir: string, seconds: number) =>
  lyingFile(dir, 'lying.flv', ['-c:v', 'flv1'], seconds, Buffer.from('duration\x00', 'latin1'), 1);

describe('the duration a file really has (issue 18)', () => {
  let dir: string;
  let files: FileServer;
  let server: TestServer;
  let shortLimit: TestServer;
  const made: Record<string, string> = {};

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-durations-'));
    const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
    made['lying-h264.mp4'] = await lyingMp4(dir, 'lying-h264.mp4', h264, TEN_HOURS);
    made['lying-mpeg4.mp4'] = await lyingMp4(dir, 'lying-mpeg4.mp4', ['-c:v', 'mpeg4'], TEN_HOURS);
    made['lying.webm'] = await lyingWebm(dir, 30);
    made['lying.flv'] = await lyingFlv(dir, 30);
    await fixtures('clip-3s-640x360-25fps.mp4', 'small-300x200.png');
    files = await startFileServer(
      Object.fromEntries(Object.entries(made).map(([name, file]) => [`/made/${name}`, serveFile(file)])),
    );
    server = await startMediaflow();
    shortLimit = await startMediaflow({ MEDIAFLOW_MAX_DURATION: '5s' });
  }, 120_000);

  after(async () => {
    await server?.close();
    await shortLimit?.close();
    await files?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("reads an MP4's length from its samples when its headers claim less, in process and beside ffprobe", async () => {
    for (const name of ['lying-h264.mp4', 'lying-mpeg4.mp4']) {
      // The headers claim 1 s: ffprobe believes them.
      assert.ok(durationOf(await probe(made[name]!)) < 2, name);
      const facts = await probeFile('ffprobe', name, { cwd: dir, timeoutMs: 30_000 });
      assert.ok(Math.abs(facts.duration! - TEN_HOURS) < 1, `${name}: ${facts.duration}`);
    }
  });

  for (const [operation, fields] of [
    ['convert-video', (url: string) => ({ video_url: url, format: 'mp4' })],
    ['merge-videos', (url: string) => ({ video_urls: `${url},${url}` })],
  ] as const) {
    it(
      `${operation}: ` + `refuses an MP4 whose header claims 1 s and whose frames reach 10 h (422 naming both)`,
      async () => {
        for (const name of ['lying-h264.mp4', 'lying-mpeg4.mp4']) {
          const res = await server.post(`/${operation}/`, fields(files.url(`/made/${name}`)));
          assert.equal(res.status, 422, JSON.stringify(res.body));
          assert.match(
            res.body.message ?? res.body.error ?? JSON.stringify(res.body),
            /lasts 36000 s, more than the limit of 14400 s \(MEDIAFLOW_MAX_DURATION\)/,
          );
        }
        assert.deepEqual(await server.workLeftovers(), []);
      },
    );
  }

  it(
    "reads a WebM's length from its last packets when its header claims less, " + 'and refuses it over the limit',
    async () => {
      assert.ok(durationOf(await probe(made['lying.webm']!)) < 2);
      const facts = await probeFile('ffprobe', 'lying.webm', { cwd: dir, timeoutMs: 30_000 });
      assert.ok(Math.abs(facts.duration! - 30) < 0.5, `${facts.duration}`);
      const res = await shortLimit.post('/convert-video/', { video_url: files.url('/made/lying.webm'), format: 'mp4' });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(JSON.stringify(res.body), /lasts 30 s, more than the limit of 5 s \(MEDIAFLOW_MAX_DURATION\)/);
    },
  );

  it(
    'caps the output at the length checked: an FLV claiming 1 s but lasting 30 s makes no more than the claim ' +
      'and the margin',
    async () => {
      assert.ok(durationOf(await probe(made['lying.flv']!)) < 2);
      const res = await server.post('/convert-video/', { video_url: files.url('/made/lying.flv'), format: 'mp4' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const length = durationOf(await probe(server.pathOf(res.body.output_file!)));
      assert.ok(length > 0.5 && length <= capSeconds(1), `output lasts ${length} s, the cap is ${capSeconds(1)} s`);
    },
  );

  it('refuses a job whose probed inputs add up to more than the limit (422), before ffmpeg runs', async () => {
    const clip = files.url('/f/clip-3s-640x360-25fps.mp4');
    const res = await shortLimit.post('/merge-videos/', { video_urls: `${clip},${clip}` });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(
      JSON.stringify(res.body),
      /The output would last 6 s, more than the limit of 5 s \(MEDIAFLOW_MAX_DURATION\)/,
    );
    // One such input alone is within the limit.
    assert.equal((await shortLimit.post('/convert-video/', { video_url: clip, format: 'mp4' })).status, 200);
  });

  it(
    'images-to-video: 50 images of 3600 s at 60 fps in 8K is a 400 at once, synchronous and asynchronous, ' +
      'nothing fetched',
    async () => {
      const images = Array.from({ length: 50 }, (_, i) => files.url(`/never/${i}.png`)).join(',');
      const fields = { image_urls: images, seconds_per_image: '3600', fps: '60', width: '7680', height: '4320' };
      for (const headers of [{}, { prefer: 'respond-async' }] as Array<Record<string, string>>) {
        const res = await server.post('/images-to-video/', fields, { headers });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(
          JSON.stringify(res.body),
          /The output would last 180000 s, more than the limit of 14400 s \(MEDIAFLOW_MAX_DURATION\)/,
        );
      }
      assert.equal([...files.hits.keys()].filter((key) => key.startsWith('/never/')).length, 0);
      // Within the limit, a slideshow is still made.
      const ok = await server.post('/images-to-video/', {
        image_urls: files.url('/f/small-300x200.png'),
        seconds_per_image: '2',
        fps: '5',
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.ok(Math.abs(durationOf(await probe(server.pathOf(ok.body.output_file!))) - 2) < 0.3);
    },
  );
});
