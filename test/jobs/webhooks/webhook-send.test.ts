import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { startFileServer, type FileServer } from '../../helpers/file-server.js';
import type { AddressPolicy } from '../../../src/engine/inputs/address-guard.js';
import { postWebhook } from '../../../src/jobs/webhooks/send.js';
import { webhookHeaders } from '../../../src/jobs/webhooks/signing.js';

// Only loopback is ever contacted; other ranges are covered by the address-guard tests, which send nothing.
const open: AddressPolicy = { allowPrivate: true, allowedHosts: [] };
const closed: AddressPolicy = { allowPrivate: false, allowedHosts: [] };
const body = JSON.stringify({ job_id: 'j1', status: 'succeeded', metadata: 'café' });
const headers = webhookHeaders(undefined, 'msg_1', body);

describe('webhook send', () => {
  let receiver: FileServer;
  const received: { method?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  before(async () => {
    receiver = await startFileServer({
      '/ok': (req, res) => {
        let text = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (text += chunk));
        req.on('end', () => {
          received.push({ method: req.method, headers: req.headers, body: text });
          res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
        });
      },
      '/fail': (_req, res) => void res.writeHead(500).end('broken'),
      '/redirect': (_req, res) => void res.writeHead(302, { location: '/target' }).end(),
      '/target': (_req, res) => void res.writeHead(200).end(),
      '/silent': () => {
        // Reads the request and never answers.
      },
      '/stalled-body': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      },
      '/endless-body': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(16 * 1024, 120);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      },
    });
  });
  after(() => receiver.close());

  it('delivers to a 2xx receiver, with the body and headers given', async () => {
    const attempt = await postWebhook(receiver.url('/ok'), body, headers, { policy: open, timeoutMs: 5000 });
    assert.deepEqual(attempt, { ok: true, status: 200 });
    const request = received.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.body, body);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['content-length'], String(Buffer.byteLength(body)));
    assert.equal(request.headers['webhook-id'], 'msg_1');
    assert.equal(request.headers['user-agent'], 'mediaflow-webhooks');
  });

  it('reports a 500 as not delivered, with its status', async () => {
    const attempt = await postWebhook(receiver.url('/fail'), body, headers, { policy: open, timeoutMs: 5000 });
    assert.equal(attempt.ok, false);
    assert.equal(attempt.status, 500);
    assert.match(attempt.error ?? '', /500/);
  });

  it('does not follow a redirect', async () => {
    const attempt = await postWebhook(receiver.url('/redirect'), body, headers, { policy: open, timeoutMs: 5000 });
    assert.equal(attempt.ok, false);
    assert.equal(attempt.status, 302);
    assert.equal(attempt.error, `redirect to ${receiver.url('/target')} not followed`);
    await sleep(100);
    assert.equal(receiver.hits.get('/target'), undefined);
  });

  it('gives up on a receiver that never answers, within the time limit', async () => {
    const started = Date.now();
    const attempt = await postWebhook(receiver.url('/silent'), body, headers, { policy: open, timeoutMs: 300 });
    const elapsed = Date.now() - started;
    assert.deepEqual(attempt, { ok: false, status: null, error: 'no answer within 0.3 s' });
    assert.ok(elapsed >= 250 && elapsed < 5000, `${elapsed} ms`);
    assert.equal(receiver.hits.get('/silent'), 1);
  });

  it('judges by the status when the answer body stalls or never ends', async () => {
    const stalled = await postWebhook(receiver.url('/stalled-body'), body, headers, { policy: open, timeoutMs: 300 });
    assert.deepEqual(stalled, { ok: true, status: 200 });
    // Stops at 64 KiB long before the 30 s limit.
    const started = Date.now();
    const endless = await postWebhook(receiver.url('/endless-body'), body, headers, {
      policy: open,
      timeoutMs: 30_000,
    });
    assert.deepEqual(endless, { ok: true, status: 200 });
    assert.ok(Date.now() - started < 10_000);
  });

  it('refuses loopback receivers when private addresses are not allowed, sending nothing', async () => {
    const count = received.length;
    const literal = await postWebhook(receiver.url('/ok'), body, headers, { policy: closed, timeoutMs: 5000 });
    assert.equal(literal.ok, false);
    assert.equal(literal.status, null);
    assert.match(literal.error ?? '', /is not allowed: it resolves to a loopback address/);
    // A name is refused when it resolves, before any connection.
    const named = await postWebhook(receiver.url('/ok').replace('127.0.0.1', 'localhost'), body, headers, {
      policy: closed,
      timeoutMs: 5000,
    });
    assert.equal(named.ok, false);
    assert.equal(named.status, null);
    assert.match(named.error ?? '', /is not allowed: its host resolves to a loopback address/);
    assert.equal(received.length, count);
  });

  it('reports a refused connection without throwing', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const attempt = await postWebhook(`http://127.0.0.1:${port}/hook`, body, headers, {
      policy: open,
      timeoutMs: 5000,
    });
    assert.deepEqual(attempt, { ok: false, status: null, error: 'connection refused' });
  });

  it('rejects with the reason when cancelled before an answer', async () => {
    const controller = new AbortController();
    const attempt = postWebhook(receiver.url('/silent'), body, headers, {
      policy: open,
      timeoutMs: 5000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    await assert.rejects(attempt, /shutting down/);
  });

  it('answers non-http(s) URLs with a refusal, not a throw', async () => {
    const attempt = await postWebhook('ftp://127.0.0.1/hook', body, headers, { policy: open, timeoutMs: 5000 });
    assert.equal(attempt.ok, false);
    assert.equal(attempt.status, null);
    assert.match(attempt.error ?? '', /only http and https/);
  });
});
