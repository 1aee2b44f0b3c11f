import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { durationOf, probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { builtinPlugins, builtinRegistry } from '../src/plugins/index.js';
import { assertCode } from './security/hostile.js';

type Body = Record<string, unknown>;
interface Answer {
  status: number;
  body: Body;
  headers: Headers;
}

/** POSTs a body in one of the three encodings (or raw bytes with any Content-Type) and reads the JSON answer. */
async function send(
  base: string,
  route: string,
  body: {
    json?: unknown;
    form?: Record<string, string>;
    multipart?: FormData | Record<string, string>;
    raw?: string;
    type?: string;
  },
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit & { headers: Record<string, string> } = { method: 'POST', headers: { ...headers } };
  if (body.json !== undefined) {
    init.body = JSON.stringify(body.json);
    init.headers['content-type'] = 'application/json';
  } else if (body.form) {
    init.body = new URLSearchParams(body.form).toString();
    init.headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (body.multipart) {
    let form = body.multipart;
    if (!(form instanceof FormData)) {
      const fields = form;
      form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.append(key, value);
    }
    init.body = form;
  } else if (body.raw !== undefined) {
    init.body = body.raw;
    if (body.type) init.headers['content-type'] = body.type;
  }
  const res = await fetch(`${base}${route}`, init);
  const text = await res.text();
  let parsed: Body;
  try {
    parsed = JSON.parse(text) as Body;
  } catch {
    assert.fail(`${route} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * An error answer as docs/errors.md wants it: the status, JSON with one string `error` and nothing
 * else, no path of the server's disk. Returns the text.
 */
function assertError(res: Answer, status: number, server: TestServer, pattern?: RegExp): string {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(res.body), ['error', 'code']);
  assertCode(res.body.code, { status });
  const text = res.body.error;
  assert.equal(typeof text, 'string');
  assert.ok((text as string).length > 0);
  assert.ok(!(text as string).includes(server.dataDir), `no data directory in: ${String(text)}`);
  assert.ok(
    !(text as string).includes(path.dirname(server.dataDir) + path.sep),
    `no temp directory in: ${String(text)}`,
  );
  if (pattern) assert.match(text as string, pattern);
  return text as string;
}

/** A plain GET whose JSON error body is checked like the POSTs'. */
async function getJson(url: string): Promise<Answer> {
  const res = await fetch(url);
  return { status: res.status, body: JSON.parse(await res.text()) as Body, headers: res.headers };
}

const SUBTITLE_URL = /^http:\/\/127\.0\.0\.1:\d+\/uploads\/[0-9a-f-]{36}\/generated_subtitles\.srt$/;

describe('server', () => {
  const op = useOperation({
    fixtures: ['small-300x200.png', 'tone-2s-44k-stereo.mp3', 'tone-3s-44k-stereo.mp3', 'not-media.txt'],
  });

  /** The SRT a generate-subtitles answer points at. */
  const srtOf = (res: Answer) => readFile(op.server.pathOf(res.body.subtitle_file_url as string), 'utf8');

  it('answers every operation with and without the trailing slash, and /health both ways', async () => {
    const plugins = builtinRegistry().list();
    assert.equal(plugins.length, builtinPlugins.length);
    for (const plugin of plugins) {
      assert.ok(plugin.path.endsWith('/'), plugin.path);
      for (const route of [plugin.path, plugin.path.slice(0, -1)]) {
        // No fields: every operation refuses with a 400 of its own, so the route was reached.
        const res = await send(op.server.base, route, { json: {} });
        const text = assertError(res, 400, op.server);
        assert.ok(!text.startsWith('Not found'), `${route}: ${text}`);
      }
    }
    const ok = await send(op.server.base, '/generate-subtitles', { multipart: { text: 'no slash' } });
    assert.equal(ok.status, 200);
    for (const route of ['/health', '/health/'])
      assert.equal((await fetch(`${op.server.base}${route}`)).status, 200, route);
  });

  it('takes multipart, urlencoded and JSON bodies with the same field names and the same result', async () => {
    const fields = { text: 'One two three. Four five six seven', words_per_line: '3', seconds_per_line: '2' };
    const answers = [
      await send(op.server.base, '/generate-subtitles/', { multipart: fields }),
      await send(op.server.base, '/generate-subtitles/', { form: fields }),
      await send(op.server.base, '/generate-subtitles/', { json: fields }),
      // JSON may also carry real numbers.
      await send(op.server.base, '/generate-subtitles/', {
        json: { ...fields, words_per_line: 3, seconds_per_line: 2 },
      }),
    ];
    const expected =
      '1\n00:00:00,000 --> 00:00:02,000\nOne two three.\n\n2\n00:00:02,000 --> 00:00:04,000\nFour five six\n\n' +
      '3\n00:00:04,000 --> 00:00:06,000\nseven\n';
    for (const res of answers) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.message, 'Subtitle file generated successfully');
      assert.match(res.body.subtitle_file_url as string, SUBTITLE_URL);
      assert.equal(await srtOf(res), expected);
    }
    assert.equal(new Set(answers.map((a) => a.body.subtitle_file_url)).size, 4, 'each request has its own output');

    const image = op.files.url('/f/small-300x200.png');
    const json = await send(op.server.base, '/resize_image/', { json: { image_url: image, width: 64, height: '48' } });
    assert.equal(json.status, 200, JSON.stringify(json.body));
    const form = await send(op.server.base, '/resize_image', {
      form: { image_url: ` ${image} `, width: ' 32 ', height: '+24' },
    });
    assert.equal(form.status, 200, JSON.stringify(form.body));
    const [a, b] = [
      videoOf(await probe(op.server.pathOf(json.body.output_file as string))),
      videoOf(await probe(op.server.pathOf(form.body.output_file as string))),
    ];
    assert.deepEqual([a?.width, a?.height, b?.width, b?.height], [64, 48, 32, 24]);
  });

  it(
    'coerces integers sent as strings and rejects non-numbers with a 400 naming the field; ignores ' + 'unknown fields',
    async () => {
      const res = await send(op.server.base, '/generate-subtitles/', {
        form: { text: 'a b c d', words_per_line: ' 2 ', seconds_per_line: '05', colour: 'blue', extra_field: 'x' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ['message', 'subtitle_file_url']);
      assert.equal(
        await srtOf(res),
        '1\n00:00:00,000 --> 00:00:05,000\na b\n\n2\n00:00:05,000 --> 00:00:10,000\nc d\n',
      );

      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['/generate-subtitles/', { text: 'x', words_per_line: 'eight' }, 'words_per_line'],
        ['/generate-subtitles/', { text: 'x', seconds_per_line: '3s' }, 'seconds_per_line'],
        ['/generate-subtitles/', { text: 'x', seconds_per_line: 2.5 }, 'seconds_per_line'],
        ['/generate-subtitles/', { text: 'x', words_per_line: '0x10' }, 'words_per_line'],
        ['/resize_image/', { image_url: op.files.url('/f/small-300x200.png'), width: 'wide', height: '10' }, 'width'],
        ['/resize_image/', { image_url: op.files.url('/f/small-300x200.png'), width: '10', height: true }, 'height'],
        [
          '/images-to-video/',
          { image_urls: op.files.url('/f/small-300x200.png'), seconds_per_image: 'five' },
          'seconds_per_image',
        ],
      ];
      for (const [route, fields, name] of cases) {
        for (const body of [
          { json: fields },
          { form: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])) },
        ]) {
          const answer = await send(op.server.base, route, body);
          assertError(answer, 400, op.server, new RegExp(`\`${name}\``));
        }
      }
    },
  );

  it('reads list fields with whitespace around items and empty items', async () => {
    const [a, b] = [op.files.url('/f/tone-2s-44k-stereo.mp3'), op.files.url('/f/tone-3s-44k-stereo.mp3')];
    const res = await send(op.server.base, '/merge-audios/', { multipart: { audio_urls: ` ,\t${a} , ,\n ${b} ,, ` } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(Math.abs(durationOf(await probe(op.server.pathOf(res.body.output_file as string))) - 5) < 0.2);
    assert.equal(op.files.hits.get('/f/tone-2s-44k-stereo.mp3'), 1);
    // Only empty items left: fewer than two URLs.
    assertError(
      await send(op.server.base, '/merge-audios/', { form: { audio_urls: ` , ${a} ,, ` } }),
      400,
      op.server,
      /^At least two audio URLs are required$/,
    );
    assertError(
      await send(op.server.base, '/merge-audios/', { json: { audio_urls: ' , ,' } }),
      400,
      op.server,
      /^At least two audio URLs are required$/,
    );
  });

  it('serves outputs with their content type and byte ranges, and 404s JSON for anything else', async () => {
    const made = await send(op.server.base, '/generate-subtitles/', { json: { text: 'Ranges work. Ça marche.' } });
    const srtUrl = made.body.subtitle_file_url as string;
    const bytes = await readFile(op.server.pathOf(srtUrl));

    const whole = await fetch(srtUrl);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'application/x-subrip; charset=utf-8');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.equal(whole.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes);

    const head = await fetch(srtUrl, { headers: { range: 'bytes=2-9' } });
    assert.equal(head.status, 206);
    assert.equal(head.headers.get('content-range'), `bytes 2-9/${bytes.length}`);
    assert.deepEqual(Buffer.from(await head.arrayBuffer()), bytes.subarray(2, 10));
    const tail = await fetch(srtUrl, { headers: { range: 'bytes=-6' } });
    assert.equal(tail.status, 206);
    assert.equal(tail.headers.get('content-range'), `bytes ${bytes.length - 6}-${bytes.length - 1}/${bytes.length}`);
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), bytes.subarray(bytes.length - 6));
    const unsatisfiable = await fetch(srtUrl, { headers: { range: `bytes=${bytes.length + 10}-` } });
    assert.equal(unsatisfiable.status, 416);

    // A binary output: the right type, and a range of it.
    const [a, b] = [op.files.url('/f/tone-2s-44k-stereo.mp3'), op.files.url('/f/tone-3s-44k-stereo.mp3')];
    const merged = await send(op.server.base, '/merge-audios/', { json: { audio_urls: `${a},${b}` } });
    const mp3Url = merged.body.output_file as string;
    const mp3 = await readFile(op.server.pathOf(mp3Url));
    const part = await fetch(mp3Url, { headers: { range: 'bytes=100-1099' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-type'), 'audio/mpeg');
    assert.equal(part.headers.get('content-range'), `bytes 100-1099/${mp3.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), mp3.subarray(100, 1100));
    const image = await send(op.server.base, '/resize_image/', {
      json: { image_url: op.files.url('/f/small-300x200.png'), width: 20, height: 20 },
    });
    assert.equal((await fetch(image.body.output_file as string)).headers.get('content-type'), 'image/jpeg');

    // Missing outputs, folders, files still being published, and ways out of the uploads folder.
    const folder = srtUrl.slice(0, srtUrl.lastIndexOf('/'));
    await writeFile(path.join(op.server.dataDir, 'uploads', '.partial-0123'), 'half a file');
    for (const url of [
      `${op.server.base}/uploads/00000000-0000-4000-8000-000000000000/generated_subtitles.srt`,
      `${op.server.base}/uploads/nothing.mp4`,
      folder,
      `${folder}/`,
      `${op.server.base}/uploads/.partial-0123`,
      `${op.server.base}/uploads/../package.json`,
      `${op.server.base}/uploads/%2e%2e/%2e%2e/etc/passwd`,
    ]) {
      assertError(await getJson(url), 404, op.server);
    }
    for (const url of [
      `${op.server.base}/uploads/..%2f..%2fetc%2fpasswd`,
      `${op.server.base}/uploads/%E0%A4%A`,
      `${op.server.base}/uploads/a%00b`,
    ]) {
      const res = await getJson(url);
      assert.ok(res.status >= 400 && res.status < 500, `${url}: ${res.status}`);
      assertError(res, res.status, op.server);
    }
  });

  it('answers unknown routes with a 404 {error}, and an operation with another method with a 405', async () => {
    assertError(await getJson(`${op.server.base}/`), 404, op.server);
    assertError(await getJson(`${op.server.base}/no-such-operation/`), 404, op.server, /Not found/);
    assertError(await send(op.server.base, '/no-such-operation/', { json: { text: 'x' } }), 404, op.server);
    // An operation's path with another method is a 405 (http-requests.test.ts has the details).
    assertError(await getJson(`${op.server.base}/generate-subtitles/`), 405, op.server, /not allowed/);
    assertError(await send(op.server.base, '/health', { json: {} }), 404, op.server);
  });

  it('reports the ffmpeg in use and the queue on GET /health', async () => {
    const res = await getJson(`${op.server.base}/health`);
    assert.equal(res.status, 200);
    const health = res.body as {
      status: string;
      ffmpeg: { version: string; source: string };
      ffprobe: { version: string };
      queue: { waiting: number; running: number; concurrency: number };
    };
    assert.equal(health.status, 'ok');
    const { stdout } = await execa('ffmpeg', ['-version']);
    assert.equal(health.ffmpeg.version, stdout.split('\n')[0]);
    assert.match(health.ffprobe.version, /^ffprobe version /);
    assert.equal(typeof health.ffmpeg.source, 'string');
    assert.equal(health.queue.waiting, 0);
    assert.equal(health.queue.running, 0);
    assert.equal(health.queue.concurrency, op.server.config.concurrency);
  });

  it('refuses a file part where no URL field is, malformed bodies and unknown content types with {error}', async () => {
    const withFile = new FormData();
    withFile.append('text', 'hello');
    withFile.append('subtitle', new Blob(['1\n00:00:00,000 --> 00:00:01,000\nhi\n']), 'hi.srt');
    assertError(
      await send(op.server.base, '/generate-subtitles/', { multipart: withFile }),
      400,
      op.server,
      /^File part `subtitle` is not an input: this route takes no files$/,
    );

    assertError(
      await send(op.server.base, '/generate-subtitles/', { raw: '{"text": "unterminated', type: 'application/json' }),
      400,
      op.server,
    );
    assertError(
      await send(op.server.base, '/generate-subtitles/', { raw: '', type: 'application/json' }),
      400,
      op.server,
    );
    assertError(
      await send(op.server.base, '/generate-subtitles/', { raw: '["text"]', type: 'application/json' }),
      400,
      op.server,
    );
    assertError(
      await send(op.server.base, '/generate-subtitles/', {
        raw: '{"__proto__": {"polluted": 1}, "text": "x"}',
        type: 'application/json',
      }),
      400,
      op.server,
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assertError(
      await send(op.server.base, '/generate-subtitles/', { raw: 'text=hi', type: 'multipart/form-data' }),
      400,
      op.server,
    );
    for (const type of ['text/plain', 'application/xml', 'application/octet-stream', 'image/png']) {
      assertError(
        await send(op.server.base, '/generate-subtitles/', { raw: 'text=hello', type }),
        415,
        op.server,
        /Content-Type/,
      );
    }
    // Still serving.
    const ok = await send(op.server.base, '/generate-subtitles/', { multipart: { text: 'still here' } });
    assert.equal(ok.status, 200);
  });

  it('keeps input failures free of server paths: a 502 names the URL, a 422 the problem', async () => {
    const missing = op.files.url('/f/missing.png');
    assertError(
      await send(op.server.base, '/resize_image/', { json: { image_url: missing, width: 10, height: 10 } }),
      502,
      op.server,
      /^Failed to download http:\/\/127\.0\.0\.1:\d+\/f\/missing\.png: HTTP 404/,
    );
    assertError(
      await send(op.server.base, '/resize_image/', {
        json: { image_url: op.files.url('/f/not-media.txt'), width: 10, height: 10 },
      }),
      422,
      op.server,
    );
    assertError(
      await send(op.server.base, '/resize_image/', {
        json: { image_url: 'file:///etc/passwd', width: 10, height: 10 },
      }),
      400,
      op.server,
    );
    assertError(
      await send(op.server.base, '/resize_image/', { json: { image_url: 'not a url', width: 10, height: 10 } }),
      400,
      op.server,
    );
    assert.deepEqual(await op.server.workLeftovers(), []);
    assert.equal((await fetch(`${op.server.base}/health`)).status, 200);
  });

  it('requires X-API-Key on operations when MEDIAFLOW_API_KEY is set, and leaves /health open', async () => {
    const keyed = await startMediaflow({ MEDIAFLOW_API_KEY: 'k' });
    try {
      const fields = { text: 'secret words' };
      for (const headers of [
        {} as Record<string, string>,
        { 'x-api-key': 'wrong' },
        { 'x-api-key': '' },
        { 'x-api-key': 'K' },
        { 'x-api-key': 'kk' },
      ]) {
        const res = await send(keyed.base, '/generate-subtitles/', { multipart: fields }, headers);
        assertError(res, 401, keyed, /^Invalid or missing API key$/);
      }
      // Checked before the body is read: a malformed or oversized body without the key is still a 401.
      assertError(
        await send(keyed.base, '/generate-subtitles/', { raw: '{bad', type: 'application/json' }),
        401,
        keyed,
        /^Invalid or missing API key$/,
      );
      assertError(await send(keyed.base, '/generate-subtitles', { json: { text: 'x'.repeat(1_100_000) } }), 401, keyed);
      const ok = await send(keyed.base, '/generate-subtitles/', { multipart: fields }, { 'x-api-key': 'k' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(
        await readFile(keyed.pathOf(ok.body.subtitle_file_url as string), 'utf8'),
        '1\n00:00:00,000 --> 00:00:03,000\nsecret words\n',
      );
      assert.equal((await fetch(`${keyed.base}/health`)).status, 200);
      assert.deepEqual(
        await readFile(keyed.pathOf(ok.body.subtitle_file_url as string)),
        Buffer.from(await (await fetch(ok.body.subtitle_file_url as string)).arrayBuffer()),
      );
    } finally {
      await keyed.close();
    }
  });

  it('answers a body over MEDIAFLOW_BODY_LIMIT with a 413 naming the limit, in every encoding', async () => {
    const small = await startMediaflow({ MEDIAFLOW_BODY_LIMIT: '4096' });
    try {
      const big = { text: 'word '.repeat(1000) };
      assertError(await send(small.base, '/generate-subtitles/', { json: big }), 413, small, /4096/);
      assertError(await send(small.base, '/generate-subtitles/', { form: big }), 413, small, /4096/);
      assertError(await send(small.base, '/generate-subtitles/', { multipart: big }), 413, small, /4096/);
      // Many fields that only add up to more than the limit.
      const many: Record<string, string> = { text: 'hi' };
      for (let i = 0; i < 10; i++) many[`unknown_${i}`] = 'x'.repeat(500);
      assertError(await send(small.base, '/generate-subtitles/', { multipart: many }), 413, small, /4096/);
      // Under the limit, each encoding works.
      const fine = { text: 'word '.repeat(100) };
      for (const body of [{ json: fine }, { form: fine }, { multipart: fine }]) {
        assert.equal((await send(small.base, '/generate-subtitles/', body)).status, 200);
      }
    } finally {
      await small.close();
    }
  });

  it(
    'builds output URLs on MEDIAFLOW_PUBLIC_URL, ' + 'and on X-Forwarded-* only when MEDIAFLOW_TRUST_PROXY is on',
    async () => {
      const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'media.example.org:8443' };
      const uuidPath = /\/uploads\/[0-9a-f-]{36}\/generated_subtitles\.srt$/;

      // Not trusted: the headers change nothing.
      const plain = await send(op.server.base, '/generate-subtitles/', { multipart: { text: 'x' } }, forwarded);
      assert.ok(
        (plain.body.subtitle_file_url as string).startsWith(`${op.server.base}/uploads/`),
        plain.body.subtitle_file_url as string,
      );

      const proxied = await startMediaflow({ MEDIAFLOW_TRUST_PROXY: 'on' });
      try {
        const res = await send(proxied.base, '/generate-subtitles/', { multipart: { text: 'x' } }, forwarded);
        const url = res.body.subtitle_file_url as string;
        assert.ok(url.startsWith('https://media.example.org:8443/uploads/'), url);
        assert.match(url, uuidPath);
        const direct = await send(proxied.base, '/generate-subtitles/', { multipart: { text: 'x' } });
        assert.ok((direct.body.subtitle_file_url as string).startsWith(`${proxied.base}/uploads/`));
      } finally {
        await proxied.close();
      }

      for (const publicUrl of [
        'https://cdn.example.com/media',
        'https://cdn.example.com/media/',
        'https://cdn.example.com/media//',
      ]) {
        const pub = await startMediaflow({ MEDIAFLOW_PUBLIC_URL: publicUrl, MEDIAFLOW_TRUST_PROXY: '1' });
        try {
          const res = await send(pub.base, '/generate-subtitles/', { multipart: { text: 'x' } }, forwarded);
          const url = res.body.subtitle_file_url as string;
          assert.ok(url.startsWith('https://cdn.example.com/media/uploads/'), url);
          assert.ok(!url.slice('https://'.length).includes('//'), `no double slash: ${url}`);
          assert.match(url, uuidPath);
          // The file behind it is this server's.
          const local = path.join(pub.dataDir, 'uploads', url.slice('https://cdn.example.com/media/uploads/'.length));
          assert.equal(await readFile(local, 'utf8'), '1\n00:00:00,000 --> 00:00:03,000\nx\n');
        } finally {
          await pub.close();
        }
      }
    },
  );

  it('still answers after all of the above, with nothing left in the work folder', async () => {
    await mkdir(path.join(op.server.dataDir, 'work'), { recursive: true });
    assert.deepEqual(await op.server.workLeftovers(), []);
    const res = await send(op.server.base, '/generate-subtitles/', { json: { text: 'the end' } });
    assert.equal(res.status, 200);
    assert.equal(await srtOf(res), '1\n00:00:00,000 --> 00:00:03,000\nthe end\n');
  });
});
