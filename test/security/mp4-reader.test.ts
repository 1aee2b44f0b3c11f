import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { emptyBoxesFile, paddedMovie } from '../helpers/iso-boxes.js';
import { cpuSeconds, readCalls } from '../helpers/process-stats.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

/**
 * The in-process MP4 reader (src/engine/probe/iso-media.ts) against files of empty boxes, on a real
 * `mediaflow serve`: what each request costs the server's own process, in reads and in CPU, with the
 * file left to ffprobe (a process of its own) once the reader's limits are passed (issue 33).
 */
describe('the in-process MP4 reader, bounded', () => {
  let dir: string;
  let files: FileServer;
  let serve: ServeProcess;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-boxes-'));
    const clip = path.join(dir, 'clip.mp4');
    await execa('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25:duration=1'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clip],
    ]);
    // 8 MB of empty top-level boxes after a file type box; a real movie header with 2 million empty boxes in it.
    await writeFile(path.join(dir, 'empty-boxes.mp4'), emptyBoxesFile(1_000_000));
    await writeFile(path.join(dir, 'boxed-movie.mp4'), paddedMovie(await readFile(clip), 1_990_000));
    files = await startFileServer({
      '/empty-boxes.mp4': serveFile(path.join(dir, 'empty-boxes.mp4'), 'video/mp4'),
      '/boxed-movie.mp4': serveFile(path.join(dir, 'boxed-movie.mp4'), 'video/mp4'),
    });
    serve = await startServeProcess(path.join(dir, 'data'), { MEDIAFLOW_LOG_LEVEL: 'warn' });
  });
  after(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.child;
    await files?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const metadata = async (name: string) => {
    const form = new FormData();
    form.append('media_url', files.url(`/${name}`));
    const res = await fetch(`${serve.base}/media-metadata/`, { method: 'POST', body: form });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('reads a file of a million empty top-level boxes in a few dozen reads, not one each', async () => {
    const pid = serve.child.pid!;
    const before = await readCalls(pid);
    const res = await metadata('empty-boxes.mp4');
    const reads = (await readCalls(pid)) - before;
    // Its download (8 MB over a socket) is a few hundred reads; the walk was two million.
    assert.ok(reads < 20_000, `${reads} reads`);
    // Left to ffprobe, which finds no stream in it.
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(String(res.body.error), /empty-boxes\.mp4/);
    assert.equal((await fetch(`${serve.base}/health`)).status, 200);
  });

  it('walks at most MAX_BOXES boxes of a movie header of two million, then ffprobe reads it', async () => {
    const pid = serve.child.pid!;
    const before = await cpuSeconds(pid);
    for (let i = 0; i < 3; i++) {
      const res = await metadata('boxed-movie.mp4');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const { streams } = res.body.metadata as { streams: Array<{ type: string; width: number }> };
      assert.deepEqual(
        streams.map((stream) => [stream.type, stream.width]),
        [['video', 160]],
      );
    }
    // Each walk of the whole header took the server's own process seconds of CPU (10 s for the three in one run
    // here, 0.43 s once bounded); ffprobe's reading runs in a process of its own. What is left is the download and
    // the answer.
    const used = (await cpuSeconds(pid)) - before;
    assert.ok(used < 1.5, `${used} s of CPU for three requests`);
  });
});
