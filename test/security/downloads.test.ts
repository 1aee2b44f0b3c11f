import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer, type Route } from '../helpers/file-server.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';
import { assertStillServing, expectRefused, ready } from './hostile.js';

/**
 * Download limits against misbehaving servers on 127.0.0.1: an endless body, a slow body, no
 * answer at all, a huge declared length, a body cut short, wrong types, too many inputs. Each limit
 * must stop the transfer at once: the fixture server sees its response closed while it still had
 * (endlessly) more to send.
 */

const MAX_INPUT = 1_000_000;

/** What one hostile response managed to send before the client went away. */
interface Transfer {
  written: number;
  /** Resolves when the connection closed: whether the server had finished its response by then. */
  closed: Promise<{ finished: boolean; written: number }>;
}

const transfers = new Map<string, Transfer>();

function track(name: string, res: http.ServerResponse): Transfer {
  let resolve!: (value: { finished: boolean; written: number }) => void;
  const transfer: Transfer = { written: 0, closed: new Promise((r) => (resolve = r)) };
  res.on('close', () => resolve({ finished: res.writableFinished, written: transfer.written }));
  transfers.set(name, transfer);
  return transfer;
}

/** The transfer's end, or a failure when the client never closed it. */
async function closedWithin(name: string, ms = 5000): Promise<{ finished: boolean; written: number }> {
  const transfer = transfers.get(name);
  assert.ok(transfer, `${name} was never requested`);
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`${name}: the download was never stopped`)), ms).unref(),
  );
  return Promise.race([transfer.closed, timeout]);
}

const CHUNK = Buffer.alloc(64 * 1024, 0x41);

/** Writes CHUNK as fast as the client reads, for ever. */
function pump(res: http.ServerResponse, transfer: Transfer): void {
  while (!res.destroyed) {
    transfer.written += CHUNK.length;
    if (!res.write(CHUNK)) {
      res.once('drain', () => pump(res, transfer));
      return;
    }
  }
}

const routes: Record<string, Route> = {
  '/endless': (_req, res) => {
    const transfer = track('/endless', res);
    res.writeHead(200, { 'content-type': 'video/mp4' });
    pump(res, transfer);
  },
  '/endless-redirect': (_req, res) => {
    // A redirect whose body never ends: the body must not be read.
    const transfer = track('/endless-redirect', res);
    res.writeHead(302, { location: '/f/clip-1s-320x240-30fps-silent.mp4' });
    pump(res, transfer);
  },
  '/slow': (_req, res) => {
    const transfer = track('/slow', res);
    res.writeHead(200, { 'content-type': 'video/mp4' });
    const timer = setInterval(() => {
      transfer.written += 1;
      res.write('x');
    }, 100);
    res.on('close', () => clearInterval(timer));
  },
  '/silent': (_req, res) => {
    // Accepts the connection, never answers.
    track('/silent', res);
  },
  '/huge-declared': (_req, res) => {
    const transfer = track('/huge-declared', res);
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(10 ** 12) });
    transfer.written += CHUNK.length;
    res.write(CHUNK);
  },
  '/cut-short': (_req, res) => {
    const transfer = track('/cut-short', res);
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '100000' });
    transfer.written += 1000;
    res.write(Buffer.alloc(1000));
    setTimeout(() => res.socket?.destroy(), 50);
  },
  '/error-500': (_req, res) => void res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>boom</h1>'),
  '/endless-503': (_req, res) => {
    // An error page that never ends: it must not be read either.
    const transfer = track('/endless-503', res);
    res.writeHead(503, { 'content-type': 'text/html' });
    pump(res, transfer);
  },
  '/redirect-without-location': (_req, res) =>
    void res.writeHead(300, { 'content-type': 'video/mp4' }).end('not a video'),
  '/login-page': (_req, res) =>
    void res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        '<!doctype html>\n<html><head><title>Sign in</title></head><body><form action="/login"><input ' +
          'name="user"></form></body></html>\n',
      ),
  '/html-labelled-as-audio': (_req, res) =>
    void res
      .writeHead(200, { 'content-type': 'audio/mpeg' })
      .end('<!doctype html>\n<html><body>Not found</body></html>\n'),
  '/mp3-labelled-as-html': async (_req, res) =>
    void res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(await readFile(await fixture('tone-2s-44k-stereo.mp3'))),
  '/empty': (_req, res) => void res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '0' }).end(),
};
// Two bodies of 800 kB each: under the per-input limit, together over the per-request one.
for (const name of ['a', 'b']) {
  const body = randomBytes(800_000);
  routes[`/blob-${name}`] = (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    // Chunked, no length: only counting the bytes can catch it.
    res.write(body.subarray(0, 400_000));
    setTimeout(() => res.end(body.subarray(400_000)), 20);
  };
  routes[`/declared-${name}`] = (_req, res) =>
    void res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': body.length }).end(body);
}

describe('download limits against hostile servers', () => {
  let files: FileServer;
  let server: TestServer;

  before(async () => {
    await fixtures('tone-2s-44k-stereo.mp3', 'clip-1s-320x240-30fps-silent.mp4', 'small-300x200.png');
    files = await startFileServer(routes);
    server = await startMediaflow({
      MEDIAFLOW_MAX_INPUT_BYTES: String(MAX_INPUT),
      MEDIAFLOW_MAX_REQUEST_BYTES: '1500000',
      MEDIAFLOW_DOWNLOAD_TIMEOUT: '2',
      MEDIAFLOW_FIRST_BYTE_TIMEOUT: '1',
      MEDIAFLOW_MAX_INPUTS: '20',
    });
    await ready(server);
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  it('stops an endless body at MEDIAFLOW_MAX_INPUT_BYTES with a 413, closing the connection at once', async () => {
    const url = files.url('/endless');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: url },
      {
        status: 413,
        error: `Input ${url} is larger than the limit of 1000000 bytes (MEDIAFLOW_MAX_INPUT_BYTES)`,
      },
    );
    const { finished, written } = await closedWithin('/endless');
    assert.equal(finished, false);
    // What was read, plus what the socket buffers held: far below anything endless.
    assert.ok(written < 32 * 1024 * 1024, `the server wrote ${written} bytes before the download stopped`);
  });

  it('stops a slow body at MEDIAFLOW_DOWNLOAD_TIMEOUT with a 502', async () => {
    const url = files.url('/slow');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: url },
      { status: 502, error: `Failed to download ${url}: timed out after 2 s` },
    );
    const { finished, written } = await closedWithin('/slow');
    assert.equal(finished, false);
    assert.ok(written < 100, `the server trickled ${written} bytes`);
  });

  it('gives up on a server that never answers at MEDIAFLOW_FIRST_BYTE_TIMEOUT with a 502', async () => {
    const url = files.url('/silent');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: url },
      { status: 502, error: `Failed to download ${url}: no response within 1 s` },
    );
    assert.equal((await closedWithin('/silent')).finished, false);
  });

  it('refuses a huge declared Content-Length with a 413 before reading the body', async () => {
    const url = files.url('/huge-declared');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: url },
      {
        status: 413,
        error: `Input ${url} is larger than the limit of 1000000 bytes (MEDIAFLOW_MAX_INPUT_BYTES)`,
      },
    );
    assert.equal((await closedWithin('/huge-declared')).finished, false);
  });

  it('stops inputs that together pass MEDIAFLOW_MAX_REQUEST_BYTES with a 413 (counted, and declared)', async () => {
    const error = 'The inputs of this request add up to more than the limit of 1.43 MiB (MEDIAFLOW_MAX_REQUEST_BYTES)';
    for (const kind of ['blob', 'declared']) {
      const urls = [files.url(`/${kind}-a`), files.url(`/${kind}-b`)];
      await expectRefused(server, '/merge-audios/', { audio_urls: urls.join(',') }, { status: 413, error });
    }
  });

  it('does not read the body of a redirect', async () => {
    const res = await server.post('/convert-video/', { video_url: files.url('/endless-redirect'), format: 'mkv' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { finished, written } = await closedWithin('/endless-redirect');
    assert.equal(finished, false);
    assert.ok(written < 32 * 1024 * 1024, `the redirect wrote ${written} bytes`);
    await assertStillServing(server);
  });

  it('answers a body cut short, and HTTP errors (without reading an endless error page), with a 502', async () => {
    const cut = files.url('/cut-short');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: cut },
      { status: 502, error: `Failed to download ${cut}: connection reset` },
    );
    const failing = files.url('/error-500');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: failing },
      { status: 502, error: `Failed to download ${failing}: HTTP 500 Internal Server Error` },
    );
    const endless = files.url('/endless-503');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: endless },
      { status: 502, error: `Failed to download ${endless}: HTTP 503 Service Unavailable` },
    );
    assert.equal((await closedWithin('/endless-503')).finished, false);
    const nowhere = files.url('/redirect-without-location');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: nowhere },
      { status: 502, error: `Failed to download ${nowhere}: HTTP 300 Multiple Choices` },
    );
    const missing = files.url('/f/missing.mp4');
    await expectRefused(
      server,
      '/convert-video/',
      { video_url: missing },
      { status: 502, error: `Failed to download ${missing}: HTTP 404 Not Found` },
    );
  });

  it(
    'judges an input by its content, not its Content-Type: ' + 'an HTML page is a 422, an MP3 labelled HTML works',
    async () => {
      for (const path of ['/login-page', '/html-labelled-as-audio']) {
        const url = files.url(path);
        await expectRefused(
          server,
          '/merge-audios/',
          { audio_urls: `${files.url('/f/tone-2s-44k-stereo.mp3')},${url}` },
          {
            status: 422,
            error: /^Input (\S+ )?is not readable media \(Invalid data found when processing input\)$/,
          },
        );
      }
      const res = await server.post('/merge-audios/', {
        audio_urls: `${files.url('/f/tone-2s-44k-stereo.mp3')},${files.url('/mp3-labelled-as-html')}`,
        format: 'wav',
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await assertStillServing(server);
    },
  );

  it('answers an empty body with a 422', async () => {
    await expectRefused(
      server,
      '/merge-audios/',
      { audio_urls: `${files.url('/f/tone-2s-44k-stereo.mp3')},${files.url('/empty')}` },
      {
        status: 422,
        error: /^Input (\S+ )?is empty$/,
      },
    );
  });

  it('refuses a thousand URLs with a 400 before fetching any of them', async () => {
    files.hits.clear();
    const urls = Array.from({ length: 1000 }, (_, i) => files.url(`/f/small-300x200.png?n=${i}`));
    await expectRefused(
      server,
      '/images-to-video/',
      { image_urls: urls.join(',') },
      {
        status: 400,
        error: 'Too many inputs: 1000 given, the limit is 20 (MEDIAFLOW_MAX_INPUTS)',
      },
    );
    await expectRefused(
      server,
      '/merge-audios/',
      { audio_urls: urls.slice(0, 21).join(',') },
      {
        status: 400,
        error: 'Too many inputs: 21 given, the limit is 20 (MEDIAFLOW_MAX_INPUTS)',
      },
    );
    assert.equal(files.hits.size, 0, 'an input was fetched');
  });
});
