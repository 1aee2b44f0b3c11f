import assert from 'node:assert/strict';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';
import { ALLOW_PRIVATE_HINT, expectRefused, literal, ready } from './hostile.js';

/**
 * Loopback in every notation, and schemes other than http(s), against a server with private
 * addresses closed. Only 127.0.0.1 and ::1 are named here; every other address is in
 * netns.test.ts, which runs in a network namespace of its own. The fixture server on 127.0.0.1
 * serves a valid image at the path every URL names, so a guard that let one through would be seen.
 */
describe('SSRF guard on loopback and schemes', () => {
  let files: FileServer;
  let closed: TestServer;
  let open: TestServer;
  let port: number;
  const IMAGE = '/f/small-300x200.png';

  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
    port = Number(new URL(files.url('/')).port);
    closed = await startMediaflow({ MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' });
    open = await startMediaflow();
    await ready(closed, open);
  });
  after(async () => {
    await closed?.close();
    await open?.close();
    await files?.close();
  });

  const convert = (url: string) => ({ image_url: url, target_format: 'png' });

  it('control: with MEDIAFLOW_ALLOW_PRIVATE_URLS on, the same loopback URL is fetched', async () => {
    const res = await open.post('/convert_image_from_url/', convert(files.url(IMAGE)));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(files.hits.get(IMAGE), 1);
    files.hits.clear();
  });

  it('names the setting that allows a refused address in its 400, as the CLI names its flag', async () => {
    const url = files.url(IMAGE);
    assert.match(url, /^http:\/\/127\.0\.0\.1:/);
    const res = await closed.post('/convert_image_from_url/', convert(url));
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'MF_ERR_URL');
    assert.match(res.body.error!, /is not allowed: .*loopback.*; MEDIAFLOW_ALLOW_PRIVATE_URLS=1 allows /);
    assert.equal(files.hits.size, 0, 'the fixture server was reached');
  });

  const literals: Array<[string, string, string]> = [
    ['dotted', `http://127.0.0.1:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['another address in 127/8', `http://127.42.0.7:PORT${IMAGE}`, 'a loopback address (127.42.0.7)'],
    ['decimal', `http://2130706433:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['hex', `http://0x7f000001:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['dotted hex, short', `http://0x7f.1:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['octal', `http://0177.0.0.01:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['octal, one number', `http://017700000001:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['short form', `http://127.1:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['trailing dot', `http://127.0.0.1.:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['IPv6', `http://[::1]:PORT${IMAGE}`, 'a loopback address (::1)'],
    ['IPv6, written out', `http://[0:0:0:0:0:0:0:1]:PORT${IMAGE}`, 'a loopback address (::1)'],
    ['IPv4-mapped IPv6', `http://[::ffff:127.0.0.1]:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['IPv4-mapped IPv6 in hex', `http://[::ffff:7f00:1]:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
    ['IPv4-compatible IPv6 (deprecated ::/96)', `http://[::127.0.0.1]:PORT${IMAGE}`, 'a reserved address (::7f00:1)'],
    ['upper-case scheme', `HTTPS://127.0.0.1:PORT${IMAGE}`, 'a loopback address (127.0.0.1)'],
  ];
  for (const [name, template, what] of literals) {
    it(`refuses loopback written as ${name}`, async () => {
      const url = template.replace('PORT', String(port));
      await expectRefused(closed, '/convert_image_from_url/', convert(url), {
        status: 400,
        error: `URL '${url}' is not allowed: it resolves to ${what}${ALLOW_PRIVATE_HINT}`,
      });
      assert.equal(files.hits.size, 0, 'the fixture server was reached');
    });
  }

  for (const host of ['localhost', 'LOCALHOST', 'LocalHost']) {
    it(`refuses a name that resolves to loopback (${host}), after resolving it, without connecting`, async () => {
      const url = `http://${host}:${port}${IMAGE}`;
      await expectRefused(closed, '/convert_image_from_url/', convert(url), {
        status: 400,
        error: new RegExp(
          `^${literal(`URL '${url}' is not allowed: its host resolves to a loopback address (`)}` +
            `(127\\.0\\.0\\.1|::1)\\)${literal(ALLOW_PRIVATE_HINT)}$`,
        ),
      });
      assert.equal(files.hits.size, 0, 'the fixture server was reached');
    });
  }

  it('refuses a literal loopback input among others before anything is fetched or resolved', async () => {
    const bad = `http://0x7f000001:${port}${IMAGE}`;
    await expectRefused(
      closed,
      '/merge-audios/',
      { audio_urls: `http://localhost:${port}/f/tone-2s-44k-stereo.mp3,${bad}` },
      {
        status: 400,
        error: `URL '${bad}' is not allowed: it resolves to a loopback address (127.0.0.1)${ALLOW_PRIVATE_HINT}`,
      },
    );
    assert.equal(files.hits.size, 0);
  });

  const schemes: Array<[string, string]> = [
    ['file:///etc/passwd', 'file'],
    ['file://localhost/etc/passwd', 'file'],
    [`ftp://127.0.0.1:${21}/a.png`, 'ftp'],
    ['gopher://127.0.0.1:6379/_SET%20x%201', 'gopher'],
    ['dict://127.0.0.1:11211/stat', 'dict'],
    ['data:image/png;base64,iVBORw0KGgo=', 'data'],
    ['javascript:alert(1)', 'javascript'],
    ['ws://127.0.0.1/a.png', 'ws'],
    ['blob:http://127.0.0.1/uuid', 'blob'],
  ];
  for (const [url, scheme] of schemes) {
    it(`refuses the ${scheme}: scheme (${url})`, async () => {
      await expectRefused(closed, '/convert_image_from_url/', convert(url), {
        status: 400,
        error: `Invalid URL '${url}': only http and https are allowed, not ${scheme}`,
      });
      // The switch for private addresses does not open other schemes.
      await expectRefused(open, '/convert_image_from_url/', convert(url), {
        status: 400,
        error: `Invalid URL '${url}': only http and https are allowed, not ${scheme}`,
      });
    });
  }

  // An absolute path is shown by its last name only: no answer names a path of the server's disk.
  for (const [url, shown] of [
    ['/etc/passwd', 'passwd'],
    ['../../etc/passwd', '../../etc/passwd'],
    ['//127.0.0.1/a.png', '//127.0.0.1/a.png'],
    ['not a url', 'not a url'],
    ['http://', 'http://'],
    ['http://[::1/a.png', 'http://[::1/a.png'],
  ]) {
    it(`refuses a string that is not an absolute URL: ${url}`, async () => {
      // Server inputs are URLs only; local paths are a CLI feature.
      await expectRefused(open, '/convert_image_from_url/', convert(url!), {
        status: 400,
        error: `Invalid URL '${shown}': not an absolute http(s) URL`,
      });
    });
  }
});
