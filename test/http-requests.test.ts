import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { assertCode } from './security/hostile.js';

/**
 * The edges of an HTTP request that users of n8n, browsers and scripts meet: the wrong method,
 * CORS, a field sent twice, lists with other separators, misnamed file parts, and urlencoded bodies in
 * another charset. None of these reaches ffmpeg.
 */

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: res.headers,
  };
}

/** A multipart body from name/value pairs, a name possibly repeated, a value possibly a file. */
function multipart(parts: Array<[string, string | Blob]>): FormData {
  const form = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, 'upload.bin');
  }
  return form;
}

/** An error as docs/errors.md has it: the status, and JSON with an `error` matching `pattern` and its status's code. */
function assertError(answer: Answer, status: number, pattern: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(answer.body), ['error', 'code']);
  assertCode(answer.body.code, { status });
  assert.match(String(answer.body.error), pattern);
}

describe('HTTP requests', () => {
  let server: TestServer;
  // Never fetched: every request below is refused before any download.
  const url = (name: string) => `http://127.0.0.1:9/${name}`;

  before(async () => {
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
  });

  it('answers another method than POST on an operation path with a 405, Allow: POST and a JSON error', async () => {
    for (const [method, route] of [
      ['GET', '/resize_image/'],
      ['GET', '/resize_image'],
      ['DELETE', '/merge-audios/'],
      ['PUT', '/convert-video'],
      ['PATCH', '/generate-subtitles/'],
    ] as const) {
      const answer = await request(`${server.base}${route}`, { method });
      assertError(answer, 405, new RegExp(`^Method ${method} is not allowed on /[\\w-]+/: send a POST`));
      assert.equal(answer.headers.get('allow'), 'POST', `${method} ${route}`);
    }
    const head = await fetch(`${server.base}/resize_image/`, { method: 'HEAD' });
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST');
    // Other paths are still a 404.
    assertError(await request(`${server.base}/no-such-operation/`), 404, /^Not found: GET/);
  });

  it('refuses a single-URL (or other single) field sent twice, in every encoding', async () => {
    const twice = multipart([
      ['image_url', url('a.png')],
      ['image_url', url('b.png')],
      ['width', '10'],
      ['height', '10'],
    ]);
    assertError(
      await request(`${server.base}/resize_image/`, { method: 'POST', body: twice }),
      400,
      /^Expected `image_url` to be one URL, got 2 \(the field was sent more than once, or as a list\)$/,
    );
    const form = `image_url=${encodeURIComponent(url('a.png'))}&width=10&width=20&height=10`;
    const answer = await request(`${server.base}/resize_image/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    assertError(answer, 400, /^Expected `width` to be one value, got 2/);
    const json = { image_url: [url('a.png'), url('b.png')], width: 10, height: 10 };
    assertError(
      await request(`${server.base}/resize_image/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(json),
      }),
      400,
      /^Expected `image_url` to be one URL, got 2/,
    );
    // A list field sent twice is still one list (docs/architecture.md: repeated fields join).
    const listTwice = multipart([
      ['audio_urls', 'ftp://example.com/a.mp3'],
      ['audio_urls', 'ftp://example.com/b.mp3'],
    ]);
    assertError(
      await request(`${server.base}/merge-audios/`, { method: 'POST', body: listTwice }),
      400,
      /ftp:\/\/example\.com\/a\.mp3/,
    );
  });

  it('says "comma-separated" when a list is given with newlines, semicolons or spaces', async () => {
    for (const [separator, name] of [
      ['\n', 'newlines'],
      ['\r\n', 'newlines'],
      [';', 'semicolons'],
      ['; ', 'semicolons'],
      [' ', 'spaces'],
    ]) {
      const body = multipart([['audio_urls', `${url('a.mp3')}${separator}${url('b.mp3')}`]]);
      assertError(
        await request(`${server.base}/merge-audios/`, { method: 'POST', body }),
        400,
        new RegExp(
          `^Expected \`audio_urls\` to be comma-separated, got items separated by ${name}: put a comma between them$`,
        ),
      );
    }
  });

  it('refuses a file part named after no input field, naming the input fields, whatever its size', async () => {
    const small = new Blob(['not really a picture']);
    const elsewhere = multipart([['file', small]]);
    assertError(
      await request(`${server.base}/merge-audio-video/`, { method: 'POST', body: elsewhere }),
      400,
      /^File part `file` is not an input: send files in `video_url`, `audio_url`$/,
    );
    // Far over the body limit (1 MiB): the answer is about the field, not about raising the limit.
    const large = multipart([['video', new Blob([Buffer.alloc(5 * 1024 * 1024, 1)])]]);
    const answer = await request(`${server.base}/convert-video/`, { method: 'POST', body: large });
    assertError(answer, 400, /^File part `video` is not an input: send files in `video_url`$/);
    assert.doesNotMatch(String(answer.body.error), /limit|MEDIAFLOW_BODY_LIMIT/);
    // Large fields that are not files are still over the body limit.
    assertError(
      await request(`${server.base}/generate-subtitles/`, {
        method: 'POST',
        body: multipart([['text', 'x'.repeat(1_100_000)]]),
      }),
      413,
      /MEDIAFLOW_BODY_LIMIT/,
    );
  });

  it('decodes an urlencoded body in the charset its Content-Type declares', async () => {
    // "Café, naïve façade." in ISO-8859-1: é is byte E9, ï EF, ç E7.
    const bytes = [...Buffer.from('Café, naïve façade.', 'latin1')];
    const latin1 = `text=${bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('')}`;
    for (const type of [
      'application/x-www-form-urlencoded; charset=ISO-8859-1',
      'application/x-www-form-urlencoded;charset="iso-8859-1"',
    ]) {
      const answer = await request(`${server.base}/generate-subtitles/`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: latin1,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.match(
        await readFile(server.pathOf(String(answer.body.subtitle_file_url)), 'utf8'),
        /^Café, naïve façade\.$/m,
      );
    }
    // Unescaped bytes of the charset too, and UTF-8 (percent-escaped or not) when no charset is declared.
    const raw = Buffer.concat([Buffer.from('text='), Buffer.from('Grüße aus Köln', 'latin1')]);
    const rawAnswer = await request(`${server.base}/generate-subtitles/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=windows-1252' },
      body: raw,
    });
    assert.match(await readFile(server.pathOf(String(rawAnswer.body.subtitle_file_url)), 'utf8'), /^Grüße aus Köln$/m);
    const utf8 = await request(`${server.base}/generate-subtitles/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `text=${encodeURIComponent('日本語 and café')}+ok`,
    });
    assert.match(await readFile(server.pathOf(String(utf8.body.subtitle_file_url)), 'utf8'), /^日本語 and café ok$/m);
    assertError(
      await request(`${server.base}/generate-subtitles/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=klingon-1' },
        body: 'text=x',
      }),
      415,
      /^Unsupported charset 'klingon-1' in Content-Type/,
    );
  });
});

describe('CORS', () => {
  const ORIGIN = 'https://app.example.com';
  let open: TestServer;
  let plain: TestServer;

  before(async () => {
    open = await startMediaflow({
      MEDIAFLOW_CORS_ORIGINS: `${ORIGIN}/, https://other.example.org`,
      MEDIAFLOW_API_KEY: 'k',
    });
    plain = await startMediaflow();
  });
  after(async () => {
    await open?.close();
    await plain?.close();
  });

  const preflight = (base: string, origin: string) =>
    fetch(`${base}/resize_image/`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-key,prefer',
      },
    });

  it('answers the preflight and the request of a listed origin, with the headers a script needs', async () => {
    const answer = await preflight(open.base, ORIGIN);
    assert.equal(answer.status, 204);
    assert.equal(answer.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(answer.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(answer.headers.get('access-control-allow-headers') ?? '', /x-api-key/i);
    // The real request: a 401 without the key still carries CORS headers, so the script can read it.
    const denied = await fetch(`${open.base}/resize_image/`, {
      method: 'POST',
      headers: { origin: ORIGIN, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(denied.headers.get('access-control-expose-headers') ?? '', /Location/);
    await denied.arrayBuffer();
  });

  it('gives no CORS headers to other origins, nor to anyone when MEDIAFLOW_CORS_ORIGINS is unset', async () => {
    const stranger = await preflight(open.base, 'https://evil.example.net');
    assert.equal(stranger.headers.get('access-control-allow-origin'), null);
    await stranger.arrayBuffer();
    const off = await fetch(`${plain.base}/health`, { headers: { origin: ORIGIN } });
    assert.equal(off.status, 200);
    assert.equal(off.headers.get('access-control-allow-origin'), null);
    await off.arrayBuffer();
    const offPreflight = await preflight(plain.base, ORIGIN);
    assert.equal(offPreflight.headers.get('access-control-allow-origin'), null);
    await offPreflight.arrayBuffer();
  });
});
