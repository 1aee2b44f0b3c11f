import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { id3Tag } from '../helpers/id3.js';
import { treeRssMiB } from '../helpers/process-stats.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

/** The big tag: one ID3 frame of this many bytes (the was 60 MB; this is enough to see it kept). */
const TAG_BYTES = 8 * 1024 * 1024;
const READS = 8;
/**
 * A heap of 96 MiB, as a small container gives: V8 then collects what a read leaves behind before it
 * grows, so what memory keeps growing by is what the server holds on to.
 */
const ENV = { MEDIAFLOW_LOG_LEVEL: 'warn', NODE_OPTIONS: '--max-old-space-size=96' };

/**
 * An MP3 whose ID3 tag is 8 MB, its metadata read again and again from a real `mediaflow serve`
 * (issue 33): each read kept the whole tag, in the job's record in memory and on disk, so memory grew
 * by the tag's size at every read, and a restart had to load every such record again.
 */
describe('a big tag, read again and again', () => {
  let dir: string;
  let files: FileServer;
  let serve: ServeProcess;
  const dataDir = () => path.join(dir, 'data');

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-big-tag-'));
    const bare = path.join(dir, 'bare.mp3');
    await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', '-write_id3v2', '0', bare]);
    const tag = id3Tag([
      ['TIT2', 'Big'],
      ['TXXX:blob', 'b'.repeat(TAG_BYTES)],
    ]);
    await writeFile(path.join(dir, 'big-tag.mp3'), Buffer.concat([tag, await readFile(bare)]));
    files = await startFileServer({ '/big-tag.mp3': serveFile(path.join(dir, 'big-tag.mp3'), 'audio/mpeg') });
    serve = await startServeProcess(dataDir(), ENV);
  });
  after(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.child;
    await files?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const read = async (base: string) => {
    const form = new FormData();
    form.append('media_url', files.url('/big-tag.mp3'));
    const res = await fetch(`${base}/media-metadata/`, { method: 'POST', body: form });
    const body = (await res.json()) as { metadata: { tags: Record<string, string>; tags_truncated: boolean } };
    assert.equal(res.status, 200, JSON.stringify(body).slice(0, 500));
    return body.metadata;
  };

  // An 8 MB tag, read nine times through ffprobe's JSON on a small heap: a few seconds each.
  const cut = 'answers the tag cut to 16 KiB with the marker, its records small, memory flat, a restart cheap';
  it(cut, { timeout: 180_000 } as never, async () => {
    const pid = serve.child.pid!;
    // Two reads first: whatever a first read sets up (the input cache, ffprobe's buffers) is in the baseline.
    for (let i = 0; i < 2; i++) await read(serve.base);
    const baseline = await treeRssMiB(pid);
    for (let i = 2; i < READS; i++) {
      const { tags, tags_truncated } = await read(serve.base);
      assert.equal(tags_truncated, true);
      assert.equal(tags.title, 'Big');
      assert.equal(tags.blob, 'b'.repeat(16 * 1024));
    }
    // Kept whole, six more reads kept 6 x 8 MB more; cut, they keep nothing.
    const grown = (await treeRssMiB(pid)) - baseline;
    assert.ok(grown < 30, `memory grew ${grown.toFixed(0)} MiB over ${READS - 2} reads`);
    const records = await readdir(path.join(dataDir(), 'jobs'));
    assert.equal(records.length, READS);
    for (const name of records) {
      const { size } = await stat(path.join(dataDir(), 'jobs', name));
      assert.ok(size < 100 * 1024, `${name}: ${size} bytes`);
    }
    // Started again, the server loads its records (all of them: 8 MB each, kept whole) and answers.
    serve.child.kill('SIGTERM');
    await serve.child;
    serve = await startServeProcess(dataDir(), ENV);
    assert.equal((await read(serve.base)).tags_truncated, true);
  });
});
