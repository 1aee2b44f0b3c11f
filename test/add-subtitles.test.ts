import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer, type Route } from './helpers/file-server.js';
import { audioOf, durationOf, brightPixels, frameRgb, meanLuma, probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** Mean absolute difference (0..255) of two frames over a rectangle. */
function meanDiff(a: Frame, b: Frame, x0: number, y0: number, w: number, h: number): number {
  let sum = 0;
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++) {
      const p = a.pixel(x, y);
      const q = b.pixel(x, y);
      sum += Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]);
    }
  return sum / (w * h * 3);
}

/** MD5 of a file's first audio stream's packets as stored (no decoding): equal only for a stream copy. */
async function audioPacketsMd5(file: string): Promise<string> {
  const { stdout } = await execa('ffmpeg', [
    '-v',
    'error',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-c',
    'copy',
    '-f',
    'md5',
    '-',
  ]);
  return stdout.trim();
}

/** Serves a fixture's bytes under any path, with a content type that says nothing about it. */
const serveAs =
  (name: string): Route =>
  async (_req, res) => {
    const file = await fixture(name);
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    createReadStream(file).pipe(res);
  };

/** The pathname a URL path becomes once parsed, as the file server matches it. */
const pathnameOf = (raw: string) => new URL(raw, 'http://127.0.0.1').pathname;

// The black 480x270 fixture: libass draws bottom-centred text in rows ~235-265.
const TEXT_BOX = [100, 225, 280, 42] as const;
const AWAY_BOX = [0, 0, 480, 150] as const;

describe('add-subtitles', () => {
  let files: FileServer;
  let server: TestServer;
  let sourceFrame: Frame;
  const WEIRD = [pathnameOf("/x/it's:a%5Cb%0Aname.srt"), pathnameOf("/x/sub\"ti:tle[0],;'x.s'rt")];

  before(async () => {
    await fixtures(
      'clip-2s-480x270-black.mp4',
      'clip-1s-320x240-30fps-silent.mp4',
      'clip-1s-321x241-odd.webm',
      'hello.srt',
      'hello.vtt',
      'hello.ass',
    );
    await fixtures('not-media.txt', 'tone-2s-44k-stereo.mp3', 'small-300x200.png');
    files = await startFileServer(Object.fromEntries(WEIRD.map((p) => [p, serveAs('hello.srt')])));
    server = await startMediaflow();
    sourceFrame = await frameRgb(await fixture('clip-2s-480x270-black.mp4'), 1);
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  /** POSTs, expects success, checks the URL and returns the output's local path. */
  async function burn(fields: Record<string, string>, format = 'mp4'): Promise<string> {
    const res = await server.post('/add-subtitles/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'output_video']);
    assert.equal(res.body.message, 'Subtitles added successfully');
    assert.match(
      res.body.output_video!,
      new RegExp(`^${server.base}/uploads/[0-9a-f-]{36}/video_with_subtitles\\.${format}$`),
    );
    return server.pathOf(res.body.output_video!);
  }

  /** The text area of the black clip lit up at 1 s, the rest still black. */
  async function assertBurnedIn(file: string): Promise<void> {
    const frame = await frameRgb(file, 1);
    assert.equal(frame.width, 480);
    assert.equal(frame.height, 270);
    const before = meanLuma(sourceFrame, ...TEXT_BOX);
    const afterLuma = meanLuma(frame, ...TEXT_BOX);
    assert.ok(before < 2, `source text area is black (${before})`);
    assert.ok(afterLuma > before + 4, `text area brighter: ${afterLuma} vs ${before}`);
    assert.ok(brightPixels(frame, ...TEXT_BOX) > 150, `white glyph pixels: ${brightPixels(frame, ...TEXT_BOX)}`);
    assert.ok(meanLuma(frame, ...AWAY_BOX) < 3, `top of the picture stays black (${meanLuma(frame, ...AWAY_BOX)})`);
    assert.equal(brightPixels(frame, ...AWAY_BOX), 0);
  }

  it('burns SRT in (mp4 by default) and copies the audio stream untouched', async () => {
    const source = await fixture('clip-2s-480x270-black.mp4');
    const file = await burn({
      video_url: files.url('/f/clip-2s-480x270-black.mp4'),
      subtitle_url: files.url('/f/hello.srt'),
    });
    await assertBurnedIn(file);
    const [out, src] = [await probe(file), await probe(source)];
    assert.equal(out.format.format_name.split(',')[0], 'mov');
    assert.equal(videoOf(out)?.codec_name, 'h264');
    assert.ok(Math.abs(durationOf(out) - durationOf(src)) < 0.1, `duration ${durationOf(out)}`);
    assert.equal(audioOf(out)?.codec_name, audioOf(src)?.codec_name);
    assert.equal(audioOf(out)?.channels, audioOf(src)?.channels);
    assert.equal(audioOf(out)?.sample_rate, audioOf(src)?.sample_rate);
    assert.equal(await audioPacketsMd5(file), await audioPacketsMd5(source), 'audio packets are the source packets');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('burns ASS into mkv and WebVTT into webm', async () => {
    const source = await fixture('clip-2s-480x270-black.mp4');
    const mkv = await burn(
      { video_url: files.url('/f/clip-2s-480x270-black.mp4'), subtitle_url: files.url('/f/hello.ass'), format: 'mkv' },
      'mkv',
    );
    await assertBurnedIn(mkv);
    assert.equal((await probe(mkv)).format.format_name.split(',')[0], 'matroska');
    assert.equal(await audioPacketsMd5(mkv), await audioPacketsMd5(source), 'mkv takes AAC as it is');

    const webm = await burn(
      { video_url: files.url('/f/clip-2s-480x270-black.mp4'), subtitle_url: files.url('/f/hello.vtt'), format: 'webm' },
      'webm',
    );
    await assertBurnedIn(webm);
    const info = await probe(webm);
    assert.equal(videoOf(info)?.codec_name, 'vp9');
    // WebM cannot hold AAC: the one case where the sound is encoded (to Opus), channels kept.
    assert.equal(audioOf(info)?.codec_name, 'opus');
    assert.equal(audioOf(info)?.channels, audioOf(await probe(source))?.channels);
  });

  it('writes mov and avi', async () => {
    const source = await fixture('clip-2s-480x270-black.mp4');
    const mov = await burn(
      { video_url: files.url('/f/clip-2s-480x270-black.mp4'), subtitle_url: files.url('/f/hello.srt'), format: 'MOV' },
      'mov',
    );
    await assertBurnedIn(mov);
    assert.equal(await audioPacketsMd5(mov), await audioPacketsMd5(source));
    const avi = await burn(
      { video_url: files.url('/f/clip-2s-480x270-black.mp4'), subtitle_url: files.url('/f/hello.srt'), format: 'avi' },
      'avi',
    );
    await assertBurnedIn(avi);
    const info = await probe(avi);
    assert.equal(info.format.format_name, 'avi');
    assert.equal(audioOf(info)?.sample_rate, audioOf(await probe(source))?.sample_rate);
  });

  it('works on a video without audio, and on one of odd size', async () => {
    const silentSource = await fixture('clip-1s-320x240-30fps-silent.mp4');
    const silent = await burn({
      video_url: files.url('/f/clip-1s-320x240-30fps-silent.mp4'),
      subtitle_url: files.url('/f/hello.srt'),
    });
    const info = await probe(silent);
    assert.equal(audioOf(info), undefined);
    assert.equal(videoOf(info)?.width, 320);
    assert.ok(Math.abs(durationOf(info) - 1) < 0.1, `duration ${durationOf(info)}`);
    // The test pattern is colourful, so compare with the source: the text rows changed, the top did not.
    const [a, b] = [await frameRgb(silentSource, 0.5), await frameRgb(silent, 0.5)];
    const bottom = meanDiff(a, b, 60, 205, 200, 30);
    const top = meanDiff(a, b, 0, 0, 320, 100);
    assert.ok(bottom > 10, `text rows differ from the source (${bottom})`);
    assert.ok(top < 3, `the rest is the source picture (${top})`);

    // 321x241 into H.264 4:2:0, which takes even sizes only.
    const odd = await burn({
      video_url: files.url('/f/clip-1s-321x241-odd.webm'),
      subtitle_url: files.url('/f/hello.srt'),
    });
    const oddInfo = await probe(odd);
    assert.equal(videoOf(oddInfo)?.codec_name, 'h264');
    assert.ok(
      [321, 322].includes(videoOf(oddInfo)!.width!) && [241, 242].includes(videoOf(oddInfo)!.height!),
      `${videoOf(oddInfo)?.width}x${videoOf(oddInfo)?.height}`,
    );
  });

  it(
    'takes a subtitle URL whose path holds quotes, colons, backslashes, brackets and %0A; the file is saved ' +
      'under a generated name',
    async () => {
      for (const route of WEIRD) {
        const file = await burn({
          video_url: files.url('/f/clip-2s-480x270-black.mp4'),
          subtitle_url: files.url(route),
        });
        await assertBurnedIn(file);
        assert.equal(files.hits.get(route), 1, `${route} fetched once`);
        // Only the output under its UUID folder; nothing named after the URL anywhere.
        assert.deepEqual(await readdir(path.dirname(file)), ['video_with_subtitles.mp4']);
      }
      assert.deepEqual(await server.workLeftovers(), []);
    },
  );

  it('answers 422 when the subtitle file is not subtitles, and 400 for a bad format or a missing URL', async () => {
    const video = files.url('/f/clip-2s-480x270-black.mp4');
    for (const name of [
      'not-media.txt',
      'tone-2s-44k-stereo.mp3',
      'small-300x200.png',
      'clip-1s-320x240-30fps-silent.mp4',
    ]) {
      const res = await server.post('/add-subtitles/', { video_url: video, subtitle_url: files.url(`/f/${name}`) });
      assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(Object.keys(res.body), ['error', 'code']);
      assert.equal(res.body.code, 'MF_ERR_MEDIA');
      assert.ok(!res.body.error!.includes(server.dataDir), res.body.error);
    }
    const swapped = await server.post('/add-subtitles/', {
      video_url: files.url('/f/hello.srt'),
      subtitle_url: files.url('/f/hello.srt'),
    });
    assert.equal(swapped.status, 422);
    assert.match(swapped.body.error!, /is not a video file/);

    const bad = await server.post('/add-subtitles/', {
      video_url: video,
      subtitle_url: files.url('/f/hello.srt'),
      format: 'gif',
    });
    assert.equal(bad.status, 400);
    assert.match(
      bad.body.error!,
      /^Unsupported format 'gif'\. Supported formats: (mp4|mov|mkv|avi|webm)(, (mp4|mov|mkv|avi|webm)){4}\.$/,
    );
    const missing = await server.post('/add-subtitles/', { video_url: video });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error!, /`subtitle_url`/);
    assert.deepEqual(await server.workLeftovers(), []);
  });
});
