import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { Workspace } from './plugins/render/picture-helpers.js';

/**
 * `POST /render/` refused for real, past what test/render.test.ts covers with dry runs: inputs that are missing, not
 * media, or not the media their clip needs; times past a media's end in a render that would encode; a `from` naming a
 * clip of the wrong kind; the limit of media files; a private address without the setting that allows it. Each answer
 * has its status and, where the document is at fault, every problem with its JSON path; no output or work file is left
 * behind, and the server answers the next request.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let work: Workspace;
let files: FileServer;
/** A server that allows loopback inputs (the file server), with a limit of two media files a document. */
let server: TestServer;
/** One that does not allow them, as a server has it by default. */
let guarded: TestServer;
const url = (name: string) => files.url(`/${name}`);
const SMALL = { width: 320, height: 180 };

before(async () => {
  work = await Workspace.create();
  await work.image('red.jpg', 'color=c=red:s=320x180');
  await work.media('clip.mp4', ['testsrc2=s=320x180:r=25:d=2'], ['-pix_fmt', 'yuv420p']);
  await writeFile(path.join(work.dir, 'words.jpg'), 'Not a picture: a few words of text.\n');
  // 20,000 blurred lines on screen at once for the whole clip: minutes of libass's work from under a megabyte.
  const heavy = Array.from(
    { length: 20_000 },
    (_, i) => `${i + 1}\n00:00:00,000 --> 00:00:02,000\n{\\blur20}line ${i}\n`,
  );
  await writeFile(path.join(work.dir, 'heavy.srt'), heavy.join('\n'));
  const served = ['red.jpg', 'clip.mp4', 'words.jpg', 'heavy.srt'];
  files = await startFileServer(
    Object.fromEntries(served.map((name) => [`/${name}`, serveFile(path.join(work.dir, name))])),
  );
  server = await startMediaflow({ MEDIAFLOW_MAX_INPUTS: '2' });
  guarded = await startMediaflow({ MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' });
}, 60_000);

after(async () => {
  await server?.close();
  await guarded?.close();
  await files?.close();
  await work?.remove();
});

/** Requests the file server has seen, in all. */
const requests = () => [...files.hits.values()].reduce((sum, count) => sum + count, 0);

/**
 * POSTs a render (not a dry run) of `edit` and answers its status and body, once it has checked that the refusal left
 * nothing behind (no output, no work file) and that the server still answers.
 */
async function refused(edit: Json, to: TestServer = server): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${to.base}/render/`, {
    method: 'POST',
    body: JSON.stringify({ edit }),
    headers: { 'content-type': 'application/json' },
  });
  const body = (await res.json()) as Json;
  assert.deepEqual(await readdir(path.join(to.dataDir, 'uploads'), { recursive: true }), [], 'no output');
  assert.deepEqual(await to.workLeftovers(), [], 'no work file');
  assert.equal((await fetch(`${to.base}/health`)).status, 200, 'the server is up');
  return { status: res.status, body };
}

/** The paths of a 400's problems. */
const paths = (body: Json) => (body.errors as Json[]).map((problem) => problem.path);

describe('POST /render/ refused once its media are fetched', () => {
  it('answers 502 for a src that is not found, naming its URL', async () => {
    const { status, body } = await refused({
      output: SMALL,
      tracks: [
        {
          clips: [
            { type: 'image', src: url('red.jpg'), duration: 1 },
            { type: 'image', src: url('gone.jpg'), duration: 1 },
          ],
        },
      ],
    });
    assert.equal(status, 502);
    assert.equal(body.code, 'MF_ERR_DOWNLOAD');
    assert.equal(body.error, `Failed to download ${url('gone.jpg')}: HTTP 404 Not Found`);
  });

  it('answers 422 for a src that is not media, or not the media its clip needs, naming its URL', async () => {
    const cases: Array<[Json, string]> = [
      [{ type: 'image', src: url('words.jpg'), duration: 1 }, `Input ${url('words.jpg')} has pictures that could not`],
      [{ type: 'video', src: url('red.jpg') }, `Input ${url('red.jpg')} is not a video file: found an image`],
    ];
    for (const [clip, error] of cases) {
      const { status, body } = await refused({ output: SMALL, tracks: [{ clips: [clip] }] });
      assert.equal(status, 422, JSON.stringify(body));
      assert.equal(body.code, 'MF_ERR_MEDIA');
      assert.ok(String(body.error).startsWith(error), body.error);
    }
    // An audio clip of a video without sound.
    const { status, body } = await refused({
      output: SMALL,
      tracks: [
        { clips: [{ type: 'image', src: url('red.jpg'), duration: 1 }] },
        { clips: [{ type: 'audio', src: url('clip.mp4') }] },
      ],
    });
    assert.equal(status, 422, JSON.stringify(body));
    assert.match(body.error, new RegExp(`^Input ${url('clip.mp4')} is not an audio file`));
  });

  it('answers 422 for captions that would cost libass more than the limit, as add-subtitles does', async () => {
    const { status, body } = await refused({
      output: SMALL,
      tracks: [
        { clips: [{ type: 'video', src: url('clip.mp4') }] },
        { clips: [{ type: 'captions', src: url('heavy.srt') }] },
      ],
    });
    assert.equal(status, 422, JSON.stringify(body));
    assert.equal(body.code, 'MF_ERR_MEDIA');
    assert.match(body.error, /^The subtitles of the render's text clips would cost \d+ to draw/);
  });

  it('answers 400 with every path for times past the end of a media, before encoding', async () => {
    const { status, body } = await refused({
      output: SMALL,
      tracks: [
        {
          clips: [
            { type: 'video', src: url('clip.mp4'), duration: 5 },
            { type: 'video', src: url('clip.mp4'), trim: 3 },
          ],
        },
      ],
    });
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.code, 'MF_ERR_PARAM');
    assert.deepEqual(paths(body), ['tracks[0].clips[0].duration', 'tracks[0].clips[1].trim']);
    assert.match(body.errors[0].error, /^lasts 5 s, past the end of the media: it has 2(\.\d+)? s after `trim`$/);
    assert.match(body.errors[1].error, /^is 3 s, past the end of the media, which lasts 2(\.\d+)? s$/);
  });
});

describe('POST /render/ refused before anything is fetched', () => {
  it('answers 400 for a from that names a clip of the wrong kind', async () => {
    const seen = requests();
    const { status, body } = await refused({
      output: SMALL,
      tracks: [
        { clips: [{ id: 'cover', type: 'image', src: url('red.jpg'), duration: 2 }] },
        { clips: [{ type: 'captions', from: 'cover' }] },
      ],
    });
    assert.equal(status, 400);
    assert.deepEqual(body.errors, [
      {
        path: 'tracks[1].clips[0].from',
        error: "'cover' is tracks[0].clips[0], an image clip: captions clips follow an audio, voice or video clip",
      },
    ]);
    assert.equal(requests(), seen, 'nothing fetched');
  });

  it('answers 400 for more different media files than MEDIAFLOW_MAX_INPUTS, however many clips use them', async () => {
    const seen = requests();
    const picture = (name: string) => ({ type: 'image', src: url(name), duration: 1 });
    const video = { type: 'video', src: url('clip.mp4') };
    // Two files in four clips are within the limit of two: a dry run resolves them.
    const within = await fetch(`${server.base}/render/`, {
      method: 'POST',
      body: JSON.stringify({
        dry_run: true,
        edit: { output: SMALL, tracks: [{ clips: [picture('red.jpg'), video, picture('red.jpg'), video] }] },
      }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(within.status, 200, JSON.stringify(await within.json()));
    assert.equal(requests(), seen + 2, 'each file fetched once');
    const { status, body } = await refused({
      output: SMALL,
      tracks: [{ clips: [picture('red.jpg'), video, picture('words.jpg')] }],
    });
    assert.equal(status, 400);
    assert.deepEqual(body.errors, [
      { path: 'tracks', error: '3 different media files, more than the limit of 2 (MEDIAFLOW_MAX_INPUTS)' },
    ]);
    assert.equal(requests(), seen + 2, 'nothing fetched');
  });

  it('answers 400 for a src on a private address without MEDIAFLOW_ALLOW_PRIVATE_URLS, naming it', async () => {
    const seen = requests();
    const { status, body } = await refused(
      { output: SMALL, tracks: [{ clips: [{ type: 'image', src: url('red.jpg'), duration: 1 }] }] },
      guarded,
    );
    assert.equal(status, 400);
    assert.equal(body.code, 'MF_ERR_URL');
    assert.match(body.error, new RegExp(`^URL '${url('red.jpg')}' is not allowed: it resolves to a loopback address`));
    assert.equal(requests(), seen, 'nothing fetched');
  });
});
