/**
 * The big-tag phase of `npm run load:connections` (issue 33): one MP3 whose ID3 tag is LOAD_TAG_MB
 * (60) MB, uploaded once to a real `mediaflow serve` on loopback (`POST /files/`), then its metadata
 * read LOAD_TAG_READS (8) times. Reports the memory of the server's process tree after each read, the
 * bytes of job records it keeps, and whether it starts again, its records loaded, on a heap of
 * LOAD_TAG_HEAP_MIB (512). Before tags were capped, each read kept the whole tag in its record: 8 reads
 * took the server from 135 to 1,168 MiB and left 481 MB of records, which a 512 MiB heap could not load.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { id3Tag } from '../test/helpers/id3.js';
import { treeRssMiB } from '../test/helpers/process-stats.js';
import { startServeProcess, type ServeProcess } from '../test/helpers/serve-process.js';

const tagMiB = Number(process.env.LOAD_TAG_MB ?? 60);
const reads = Number(process.env.LOAD_TAG_READS ?? 8);
const heapMiB = Number(process.env.LOAD_TAG_HEAP_MIB ?? 512);

/** Memory may grow this much over the reads after the first two (whatever they set up) and count as flat. */
const FLAT_MIB = 64;

/** An MP3 of 3 s of tone behind an ID3v2.4 tag holding one frame of `tagMiB` MiB. */
async function bigTagMp3(dir: string): Promise<string> {
  const bare = path.join(dir, 'bare.mp3');
  await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=3', '-write_id3v2', '0', bare]);
  const file = path.join(dir, 'big-tag.mp3');
  const tag = id3Tag([
    ['TIT2', 'Big tag'],
    ['TXXX:blob', 'b'.repeat(tagMiB * 1024 * 1024)],
  ]);
  await writeFile(file, Buffer.concat([tag, await readFile(bare)]));
  return file;
}

/** Uploads `file` once (`POST /files/`) and returns the URL the server reads it from. */
async function upload(serve: ServeProcess, file: string): Promise<string> {
  const form = new FormData();
  form.append('media', new Blob([await readFile(file)], { type: 'audio/mpeg' }), path.basename(file));
  const res = await fetch(`${serve.base}/files/`, { method: 'POST', body: form });
  const body = (await res.json()) as { files?: Array<{ url: string }> };
  if (res.status !== 200 || !body.files?.[0]) throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
  return body.files[0].url;
}

/** One read of the metadata: its status, the tag's length as answered and the marker. */
async function readMetadata(serve: ServeProcess, url: string) {
  const form = new FormData();
  form.append('media_url', url);
  const res = await fetch(`${serve.base}/media-metadata/`, { method: 'POST', body: form });
  const text = await res.text();
  const metadata = res.status === 200 ? (JSON.parse(text) as { metadata: Record<string, unknown> }).metadata : {};
  const blob = (metadata.tags as Record<string, string> | undefined)?.blob;
  return { status: res.status, answerBytes: text.length, blobChars: blob?.length, truncated: metadata.tags_truncated };
}

/** Bytes of the job records the server keeps on disk. */
async function recordBytes(dataDir: string): Promise<number> {
  const folder = path.join(dataDir, 'jobs');
  const sizes = await Promise.all(
    (await readdir(folder)).map(async (name) => (await stat(path.join(folder, name))).size),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}

export async function runBigTag(): Promise<boolean> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-load-tag-'));
  const dataDir = path.join(dir, 'data');
  const env = { MEDIAFLOW_LOG_LEVEL: 'warn' };
  let serve: ServeProcess | undefined;
  try {
    const file = await bigTagMp3(dir);
    serve = await startServeProcess(dataDir, env);
    const pid = serve.child.pid!;
    const startMiB = await treeRssMiB(pid);
    const url = await upload(serve, file);
    const perRead = [];
    for (let i = 0; i < reads; i++) {
      const read = await readMetadata(serve, url);
      perRead.push({ ...read, rssMiB: Math.round(await treeRssMiB(pid)) });
    }
    const records = await recordBytes(dataDir);
    serve.child.kill('SIGTERM');
    await serve.child;
    // Started again on the heap the server could not load its records into.
    const restart = await startServeProcess(dataDir, { ...env, NODE_OPTIONS: `--max-old-space-size=${heapMiB}` }).then(
      async (again) => {
        serve = again;
        const health = await fetch(`${again.base}/health`).then((res) => res.status);
        return { heapMiB, health, rssMiB: Math.round(await treeRssMiB(again.child.pid!)) };
      },
      (error: unknown) => ({ heapMiB, health: 0, failed: String(error).slice(0, 300) }),
    );
    const fileMB = Number(((await stat(file)).size / 1e6).toFixed(1));
    const grewMiB = (perRead.at(-1)?.rssMiB ?? 0) - (perRead[Math.min(1, perRead.length - 1)]?.rssMiB ?? 0);
    const report = {
      mode: 'big tag',
      fileMB,
      tagMiB,
      reads,
      startRssMiB: Math.round(startMiB),
      perRead,
      grewMiBAfterSecondRead: grewMiB,
      recordBytes: records,
      restart,
    };
    console.log(JSON.stringify(report, null, 2));
    const ok =
      perRead.every((read) => read.status === 200 && read.truncated === true) &&
      grewMiB < FLAT_MIB &&
      records < reads * 100 * 1024 &&
      restart.health === 200;
    console.log(
      ok
        ? 'the big tag was answered cut, memory stayed flat, records stayed small, and the server started again'
        : 'the big tag was kept: memory grew, records grew, or the server did not start again',
    );
    return ok;
  } finally {
    if (serve && serve.child.exitCode === null) {
      serve.child.kill('SIGTERM');
      await serve.child;
    }
    await rm(dir, { recursive: true, force: true });
  }
}
