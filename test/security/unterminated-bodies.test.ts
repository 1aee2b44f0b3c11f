import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { openDescriptors, stalledUpload, unterminatedUploads } from '../helpers/flood.js';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { durationOf, probe, videoOf } from '../helpers/media.js';
import { eventually, startServeProcess, withFileLimit, type ServeProcess } from '../helpers/serve-process.js';

const CLIP = 'clip-2s-640x360-25fps.mp4';
/** Short, so that the cases do not wait long; the default is 10 s. */
const IDLE_MS = 2000;
const sleep = (ms: number) => new Promise<undefined>((resolve) => setTimeout(resolve, ms));

/**
 * Multipart bodies that never end, against a real `mediaflow serve` with an open-file limit of
 * 1,024: bodies sent whole with their exact Content-Length but no closing boundary (each one used
 * to keep an open file and a work folder for ever; about a thousand of them took every descriptor,
 * and an ffprobe started then ended the process), bodies that stop arriving on an open connection,
 * and a body cut off past the parser's first buffers.
 */
describe('multipart bodies that never end', () => {
  let serve: ServeProcess;
  let dataDir: string;
  let files: FileServer;
  const port = () => Number(new URL(serve.base).port);
  /** The request folders of uploads being received. */
  const uploadFolders = async () =>
    (await readdir(path.join(dataDir, 'work')).catch(() => [] as string[])).filter((name) =>
      name.startsWith('upload-'),
    );

  before(async () => {
    await fixtures(CLIP);
    files = await startFileServer();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-unterminated-'));
    serve = await startServeProcess(
      dataDir,
      { MEDIAFLOW_LOG_LEVEL: 'warn', MEDIAFLOW_BODY_IDLE_TIMEOUT: `${IDLE_MS / 1000}s` },
      withFileLimit(1024),
    );
  });
  after(async () => {
    serve?.child.kill('SIGKILL');
    await serve?.child;
    await files?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** A real job on an uploaded file: the server still starts ffprobe and ffmpeg and answers. */
  async function runsARealJob() {
    const form = new FormData();
    form.append('video_url', new Blob([await readFile(await fixture(CLIP))], { type: 'video/mp4' }), 'clip.mp4');
    form.append('format', 'webm');
    const res = await fetch(`${serve.base}/convert-video/`, { method: 'POST', body: form });
    const answer = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 200, JSON.stringify(answer));
    const output = path.join(dataDir, 'uploads', new URL(answer.output_file!).pathname.replace('/uploads/', ''));
    const probed = await probe(output);
    assert.equal(videoOf(probed)?.codec_name, 'vp9');
    assert.ok(Math.abs(durationOf(probed) - 2) < 0.3, `duration ${durationOf(probed)}`);
  }

  it('answers 1,100 of them on every upload route with a 400, keeps no file, and then runs a real job', async () => {
    const pid = serve.child.pid!;
    const baseline = await openDescriptors(pid);
    const answers = await unterminatedUploads(port(), {
      count: 1100,
      paths: ['/files/', '/convert-video/', '/merge-audio-video/', '/extract-audio/'],
    });
    const statuses: Record<string, number> = {};
    for (const answer of answers) statuses[String(answer.status)] = (statuses[String(answer.status)] ?? 0) + 1;
    assert.deepEqual(statuses, { 400: 1100 }, 'every body answered at once, as malformed');
    assert.equal(serve.child.exitCode, null, `the server is running: ${serve.output().slice(-2000)}`);
    assert.deepEqual(await uploadFolders(), [], 'no upload folder left');
    const settled = await eventually(async () => (await openDescriptors(pid)) <= baseline + 5, 10_000, 200);
    assert.ok(settled, `descriptors back to the baseline of ${baseline}: ${await openDescriptors(pid)}`);
    await runsARealJob();
    assert.doesNotMatch(serve.output(), /EMFILE|unexpected error/);
  });

  it('says why: the body ends without its closing boundary', async () => {
    const boundary = 'b';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="video_url"; filename="x.mp4"\r\n\r\nabc`;
    const res = await fetch(`${serve.base}/convert-video/`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      error: "Malformed request body: it ends without its closing boundary (cut at 'x.mp4' (file part `video_url`))",
      code: 'MF_ERR_BAD_REQUEST',
    });
  });

  it('answers a body cut off past its first 64 KB with a 400, not a 500', async () => {
    for (const bytes of [70_000, 1_000_000]) {
      const [answer] = await unterminatedUploads(port(), { count: 1, paths: ['/files/'], bytes });
      assert.equal(answer!.status, 400, `${bytes} bytes`);
    }
    assert.deepEqual(await uploadFolders(), []);
    assert.doesNotMatch(serve.output(), /Storing an uploaded file failed/);
  });

  it('answers a body that stops arriving with a 408 and removes its file at once', async () => {
    for (const route of ['/files/', '/convert-video/']) {
      const upload = await stalledUpload(port(), route, { bytes: 100_000, declared: 10_000_000 });
      // The part is being received: its folder and file are there.
      assert.ok(await eventually(async () => (await uploadFolders()).length === 1, 5000, 20), `${route}: receiving`);
      const answer = await upload.answer;
      assert.equal(answer.status, 408, route);
      // Within the idle limit and the timer's own slack, well before MEDIAFLOW_REQUEST_TIMEOUT (60 s).
      assert.ok(answer.afterMs! >= IDLE_MS - 100 && answer.afterMs! < IDLE_MS + 3000, `${route}: ${answer.afterMs} ms`);
      assert.deepEqual(await uploadFolders(), [], `${route}: the file went with the answer`);
      upload.close();
    }
  });

  it('closes the connection of a body refused before it arrived that then stops arriving', async () => {
    // A part named after no input is refused before a byte of it is stored; the rest is read and dropped.
    const upload = await stalledUpload(port(), '/convert-video/', { bytes: 1000, declared: 10_000_000, field: 'file' });
    const answer = await upload.answer;
    assert.equal(answer.status, 400);
    const sent = Date.now();
    const closed = await eventually(() => upload.closed(), IDLE_MS + 3000, 50);
    assert.ok(closed, 'closed after the idle limit, not held until MEDIAFLOW_REQUEST_TIMEOUT (60 s)');
    assert.ok(Date.now() - sent >= IDLE_MS - 100, `closed after ${Date.now() - sent} ms`);
  });

  it('takes 128 uploads at once at a 1,024-descriptor limit, refuses more with a 503; jobs still run', async () => {
    const pid = serve.child.pid!;
    const baseline = await openDescriptors(pid);
    // From four addresses: one client may hold 64 connections.
    const uploads = await Promise.all(
      Array.from({ length: 140 }, (_, i) =>
        stalledUpload(port(), '/files/', { bytes: 1000, declared: 10_000_000, from: `127.0.0.${(i % 4) + 2}` }),
      ),
    );
    assert.ok(await eventually(async () => (await uploadFolders()).length === 128, 5000, 20), 'receiving 128');
    const refused = await Promise.all(uploads.map((upload) => Promise.race([upload.answer, sleep(500)])));
    const early = refused.filter((answer) => answer?.status === 503);
    assert.equal(early.length, 12, 'the others refused at once');
    // ffmpeg and ffprobe still get their descriptors: a job on a URL runs while the uploads stall.
    const form = new FormData();
    form.append('video_url', files.url(`/f/${CLIP}`));
    form.append('format', 'webm');
    const job = await fetch(`${serve.base}/convert-video/`, { method: 'POST', body: form });
    assert.equal(job.status, 200, await job.text());
    const answers = await Promise.all(uploads.map((upload) => upload.answer));
    assert.equal(answers.filter((answer) => answer.status === 408).length, 128);
    uploads.forEach((upload) => upload.close());
    assert.deepEqual(await uploadFolders(), []);
    const settled = await eventually(async () => (await openDescriptors(pid)) <= baseline + 5, 10_000, 200);
    assert.ok(settled, `descriptors back to the baseline of ${baseline}: ${await openDescriptors(pid)}`);
  });

  it('does not cut an upload that keeps arriving slowly, however long it takes', async () => {
    const form = new FormData();
    form.append('a', new Blob([await readFile(await fixture(CLIP))], { type: 'video/mp4' }), 'clip.mp4');
    const request = new Request(`${serve.base}/files/`, { method: 'POST', body: form });
    const body = Buffer.from(await request.arrayBuffer());
    const socket = net.connect({ host: '127.0.0.1', port: port() });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /files/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${request.headers.get('content-type')}\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    // Eight pieces, one every 0.6 of the idle limit: the upload takes twice the limit and more.
    const piece = Math.ceil(body.length / 8);
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    for (let at = 0; at < body.length; at += piece) {
      socket.write(body.subarray(at, at + piece));
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 0.6));
    }
    await closed;
    assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 300));
    assert.match(text, /"size":\d+/);
  });
});
