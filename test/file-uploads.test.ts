import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fixture, fixtures } from './helpers/fixtures.js';
import { waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { audioOf, durationOf, probe, toneDbAt, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { eventually } from './helpers/serve-process.js';

/**
 * Files instead of URLs: `POST /files/`, and a file part in place of a URL field on operation and
 * pipeline routes, sent as real multipart bodies over a socket (undici's FormData, or written by
 * hand where n8n's exact shape or a body cut short is the point). What comes out is probed.
 */

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';
const CLIP = 'clip-2s-640x360-25fps.mp4';
const TONE_2S = 'tone-2s-44k-stereo.mp3';
const TONE_3S = 'tone-3s-44k-stereo.mp3';
const TONE_1S = 'tone-1s-22k-mono.wav';
const PICTURE = 'small-300x200.png';

type Part = [name: string, value: string | { file: string; type: string; filename: string }];

/** A multipart form of text values and fixture files (by name), in order. */
async function form(parts: Part[]): Promise<FormData> {
  const body = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') body.append(name, value);
    else body.append(name, new Blob([await readFile(await fixture(value.file))], { type: value.type }), value.filename);
  }
  return body;
}

const file = (name: string, type: string, filename = name) => ({ file: name, type, filename });

async function post(url: string, body: FormData | string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', body, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * A multipart body as n8n's HTTP Request node writes it (the form-data package): each binary
 * property a part with `filename` and the file's own Content-Type, text fields without one.
 */
function n8nBody(parts: Array<[name: string, value: string | { data: Buffer; filename: string; type: string }]>) {
  const boundary = '--------------------------' + '385627184650162389466701';
  const chunks: Buffer[] = [];
  for (const [name, value] of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if (typeof value === 'string')
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    else {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\n` +
            `Content-Type: ${value.type}\r\n\r\n`,
        ),
        value.data,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

/** Every file under the data directory's uploads and work folders (none after a refused request). */
async function kept(server: TestServer): Promise<string[]> {
  const list = async (dir: string) =>
    (await readdir(path.join(server.dataDir, dir), { recursive: true }).catch(() => [] as string[])).map((entry) =>
      path.join(dir, entry),
    );
  return [...(await list('uploads')), ...(await list('work'))];
}

describe('files instead of URLs', () => {
  let server: TestServer;

  before(async () => {
    await fixtures(CLIP, TONE_2S, TONE_3S, TONE_1S, PICTURE, 'not-media.txt');
    server = await startMediaflow({ MEDIAFLOW_MAX_INPUT_BYTES: String(2 * 1024 * 1024) });
  });
  after(async () => {
    await server?.close();
  });

  it('runs an operation on files sent as n8n sends binary data, a part per URL field', async () => {
    const { body, type } = n8nBody([
      ['video_url', { data: await readFile(await fixture(CLIP)), filename: 'x.mp4', type: 'video/mp4' }],
      ['audio_url', { data: await readFile(await fixture(TONE_3S)), filename: 'voice.mp3', type: 'audio/mpeg' }],
      ['format', 'mkv'],
    ]);
    const res = await fetch(`${server.base}/merge-audio-video/`, {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    });
    const answer = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 200, JSON.stringify(answer));
    assert.equal(answer.message, 'Audio successfully merged into the video');
    assert.match(answer.output_file!, new RegExp(`^${server.base}/uploads/${UUID}_merged\\.mkv$`));
    const probed = await probe(server.pathOf(answer.output_file!));
    assert.equal(videoOf(probed)?.width, 640);
    assert.equal(audioOf(probed)?.codec_name !== undefined, true, 'the uploaded audio is in it');
    assert.ok(Math.abs(durationOf(probed) - 2) < 0.3, `duration ${durationOf(probed)}`);
    // Each file is kept as an input of its own under a generated name, with the extension of its name.
    const uploads = (await readdir(path.join(server.dataDir, 'uploads'))).filter((name) => name.includes('_upload'));
    assert.deepEqual(uploads.map((name) => name.replace(new RegExp(`^${UUID}`), '<id>')).sort(), [
      '<id>_upload.mp3',
      '<id>_upload.mp4',
    ]);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('keeps files posted to /files/ and any operation reads them by their URL', async () => {
    const stored = await post(
      `${server.base}/files/`,
      await form([
        ['picture', file(PICTURE, 'image/png', 'holiday photo.PNG')],
        ['note', 'text fields are ignored'],
        ['second', file(TONE_1S, 'audio/wav', '../../etc/evil')],
      ]),
    );
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    const files = stored.body.files as Array<Record<string, unknown>>;
    assert.deepEqual(
      files.map(({ url, ...rest }) => rest),
      [
        {
          field: 'picture',
          name: 'holiday photo.PNG',
          size: (await readFile(await fixture(PICTURE))).length,
          content_type: 'image/png',
        },
        {
          field: 'second',
          name: 'evil',
          size: (await readFile(await fixture(TONE_1S))).length,
          content_type: 'audio/wav',
        },
      ],
    );
    // The name without the folders the client gave; the stored name is generated: the client's name gives at most
    // a known extension (else the type does).
    assert.match(String(files[0]!.url), new RegExp(`^${server.base}/uploads/${UUID}_upload\\.png$`));
    assert.match(String(files[1]!.url), new RegExp(`^${server.base}/uploads/${UUID}_upload\\.wav$`));
    // The file as sent, served like an output.
    const served = await fetch(String(files[0]!.url));
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), await readFile(await fixture(PICTURE)));

    const resized = await server.post('/resize_image/', {
      image_url: String(files[0]!.url),
      width: '64',
      height: '48',
    });
    assert.equal(resized.status, 200, JSON.stringify(resized.body));
    const video = videoOf(await probe(server.pathOf(resized.body.output_file!)));
    assert.deepEqual([video?.width, video?.height], [64, 48]);
  });

  it('takes several parts in a list field, mixed with URLs, in the order of the parts', async () => {
    const stored = await post(`${server.base}/files/`, await form([['f', file(TONE_3S, 'audio/mpeg')]]));
    const url = (stored.body.files as Array<{ url: string }>)[0]!.url;
    const answer = await post(
      `${server.base}/merge-audios/`,
      await form([
        ['audio_urls', file(TONE_2S, 'audio/mpeg')],
        ['audio_urls', url],
        ['audio_urls', file(TONE_1S, 'audio/wav')],
        ['format', 'wav'],
      ]),
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const merged = server.pathOf(String(answer.body.output_file));
    assert.ok(Math.abs(durationOf(await probe(merged)) - 6) < 0.15, `6 s expected`);
    // The parts in order: 2 s at 440 Hz, 3 s at 550 Hz, 1 s at 660 Hz (the fixtures' tones).
    assert.ok((await toneDbAt(merged, 440, 0.5, 1)) > (await toneDbAt(merged, 550, 0.5, 1)) + 20, '440 Hz first');
    assert.ok((await toneDbAt(merged, 550, 3, 1)) > (await toneDbAt(merged, 440, 3, 1)) + 20, '550 Hz second');
    assert.ok((await toneDbAt(merged, 660, 5.2, 0.6)) > (await toneDbAt(merged, 550, 5.2, 0.6)) + 20, '660 Hz last');
  });

  it('refuses a part over MEDIAFLOW_MAX_INPUT_BYTES with a 413 and keeps nothing', async () => {
    const before = await kept(server);
    const big = new FormData();
    big.append('video_url', new Blob([Buffer.alloc(3 * 1024 * 1024, 1)], { type: 'video/mp4' }), 'big.mp4');
    for (const route of ['/files/', '/convert-video/']) {
      const answer = await post(`${server.base}${route}`, big);
      assert.equal(answer.status, 413, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 'MF_ERR_TOO_LARGE');
      assert.equal(
        answer.body.error,
        "Input 'big.mp4' (file part `video_url`) is larger than the limit of 2 MiB (MEDIAFLOW_MAX_INPUT_BYTES)",
      );
    }
    assert.deepEqual(await kept(server), before);
  });

  it('refuses files adding up to more than MEDIAFLOW_MAX_REQUEST_BYTES with a 413 and keeps nothing', async () => {
    const small = await startMediaflow({ MEDIAFLOW_MAX_REQUEST_BYTES: String(600 * 1024) });
    try {
      // Two files each within the input limit, together over the request's: the first is received, then dropped.
      const answer = await post(
        `${small.base}/merge-videos/`,
        await form([
          ['video_urls', file(CLIP, 'video/mp4')],
          ['video_urls', file(CLIP, 'video/mp4')],
        ]),
      );
      assert.equal(answer.status, 413, JSON.stringify(answer.body));
      assert.equal(
        answer.body.error,
        'The inputs of this request add up to more than the limit of 614400 bytes (MEDIAFLOW_MAX_REQUEST_BYTES)',
      );
      assert.deepEqual(await kept(small), []);
    } finally {
      await small.close();
    }
  });

  it('keeps nothing of a part cut off half way, and goes on serving', async () => {
    const before = await kept(server);
    const data = await readFile(await fixture(CLIP));
    for (const cut of ['inside the file', 'between two parts']) {
      const socket = net.connect(Number(new URL(server.base).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      const boundary = 'cut-off-boundary';
      const part = (name: string) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="x.mp4"\r\n` +
        'Content-Type: video/mp4\r\n\r\n';
      const sent =
        cut === 'inside the file'
          ? Buffer.concat([Buffer.from(part('video_url')), data.subarray(0, data.length / 2)])
          : Buffer.concat([Buffer.from(part('video_url')), data, Buffer.from(`\r\n--${boundary}\r\n`)]);
      socket.write(
        `POST /convert-video/ HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${data.length * 3}\r\n\r\n`,
      );
      socket.write(sent);
      // The part has reached the server's work folder...
      assert.ok(
        await eventually(
          async () => (await kept(server)).some((entry) => entry.startsWith('work/upload-')),
          10_000,
          20,
        ),
        `${cut}: the part was being received`,
      );
      // ...when the client goes away.
      socket.destroy();
      assert.ok(
        await eventually(async () => (await kept(server)).join() === before.join(), 10_000, 20),
        `${cut}: nothing left, found ${await kept(server)}`,
      );
    }
    assert.equal((await fetch(`${server.base}/health`)).status, 200);
    const again = await post(`${server.base}/files/`, await form([['f', file(PICTURE, 'image/png')]]));
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });

  it('refuses a part that is not media with a 422, as a download, and keeps nothing', async () => {
    const before = await kept(server);
    const text = await form([['video_url', file('not-media.txt', 'video/mp4', 'talk.mp4')]]);
    for (const route of ['/files/', '/convert-video/']) {
      const answer = await post(`${server.base}${route}`, text);
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 'MF_ERR_MEDIA');
      assert.match(String(answer.body.error), /^Input 'talk\.mp4' \(file part `video_url`\) is not readable media/);
    }
    assert.deepEqual(await kept(server), before);
  });

  it('refuses a part named after no input field before storing it (400)', async () => {
    const before = await kept(server);
    const cases: Array<[string, string, RegExp]> = [
      ['/merge-audio-video/', 'file', /^File part `file` is not an input: send files in `video_url`, `audio_url`$/],
      ['/merge-audio-video/', 'format', /^File part `format` is not an input: send files in `video_url`, `audio_url`$/],
      ['/generate-subtitles/', 'text', /^File part `text` is not an input: this route takes no files$/],
    ];
    for (const [route, name, pattern] of cases) {
      const answer = await post(`${server.base}${route}`, await form([[name, file(PICTURE, 'image/png')]]));
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.match(String(answer.body.error), pattern);
    }
    const empty = await post(`${server.base}/files/`, await form([['note', 'no file']]));
    assert.equal(empty.status, 400, JSON.stringify(empty.body));
    assert.match(String(empty.body.error), /^Expected one or more file parts/);
    const json = await post(`${server.base}/files/`, '{}', { 'content-type': 'application/json' });
    assert.equal(json.status, 415, JSON.stringify(json.body));
    assert.deepEqual(await kept(server), before);
  });

  it('runs an asynchronous job on a file part after the request has ended', async () => {
    const answer = await post(
      `${server.base}/convert-video/`,
      await form([
        ['video_url', file(CLIP, 'video/mp4', 'clip.mp4')],
        ['format', 'webm'],
      ]),
      { prefer: 'respond-async' },
    );
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    const job = await waitForJob(server.base, String(answer.body.job_id), undefined, { ms: 120_000 });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const output = String(job.result!.output_file);
    assert.match(output, /\.webm$/);
    const probed = await probe(server.pathOf(output));
    assert.equal(videoOf(probed)?.codec_name, 'vp9');
    assert.ok(Math.abs(durationOf(probed) - 2) < 0.3);
  });

  it('replays an idempotent request sent again with the same file, and keeps no second copy', async () => {
    const before = (await kept(server)).length;
    const send = async (picture: string) =>
      post(
        `${server.base}/resize_image/`,
        await form([
          ['image_url', file(picture, 'image/png')],
          ['width', '32'],
          ['height', '32'],
        ]),
        { 'idempotency-key': `same-file-${picture}` },
      );
    const first = await send(PICTURE);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const replay = await send(PICTURE);
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.body.output_file, first.body.output_file, 'the first job answered again');
    // The first request's upload and output; the replay's upload is gone.
    assert.equal((await kept(server)).length, before + 2);
  });

  it('takes a file part for a pipeline input of type url', async () => {
    const pipelines = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-pipelines-'));
    const local = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: pipelines });
    try {
      await writeFile(
        path.join(pipelines, 'small-picture.yaml'),
        [
          'name: small-picture',
          'inputs:',
          '  picture: url',
          'steps:',
          '  small:',
          '    op: resize-image',
          '    with: { image_url: "{{ inputs.picture }}", width: 40, height: 30 }',
          'results:',
          '  small: "{{ steps.small.output }}"',
          '',
        ].join('\n'),
      );
      const answer = await post(
        `${local.base}/pipelines/small-picture/`,
        await form([['picture', file(PICTURE, 'image/png')]]),
      );
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const small = (answer.body.outputs as Record<string, string>).small!;
      const video = videoOf(await probe(local.pathOf(small)));
      assert.deepEqual([video?.width, video?.height], [40, 30]);
    } finally {
      await local.close();
      await rm(pipelines, { recursive: true, force: true });
    }
  });

  it('stores nothing for a request without the API key (401), and takes the files with it', async () => {
    const locked = await startMediaflow({ MEDIAFLOW_API_KEY: 'the-key' });
    try {
      const body = await form([['video_url', file(CLIP, 'video/mp4')]]);
      for (const route of ['/files/', '/convert-video/']) {
        const answer = await post(`${locked.base}${route}`, body);
        assert.equal(answer.status, 401, JSON.stringify(answer.body));
        assert.equal(answer.body.error, 'Invalid or missing API key');
      }
      assert.deepEqual(await kept(locked), []);
      const allowed = await post(`${locked.base}/files/`, body, { 'x-api-key': 'the-key' });
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    } finally {
      await locked.close();
    }
  });
});
