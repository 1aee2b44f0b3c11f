import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { startMediaflow } from './helpers/mediaflow.js';
import { startServeProcess } from './helpers/serve-process.js';

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('metrics', () => {
  const op = useOperation({ fixtures: ['small-300x200.png'] });

  it('count requests by route and status, jobs by outcome, bytes downloaded, and the queue', async () => {
    assert.equal(
      (
        await op.server.post('/resize_image/', {
          image_url: op.files.url('/f/small-300x200.png'),
          width: '20',
          height: '10',
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await op.server.post('/resize_image/', {
          image_url: op.files.url('/f/small-300x200.png'),
          width: '0',
          height: '10',
        })
      ).status,
      400,
    );
    assert.equal(
      (await op.server.post('/resize_image/', { image_url: op.files.url('/f/missing.png'), width: '5', height: '5' }))
        .status,
      502,
    );
    const res = await fetch(`${op.server.base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.equal(
      sample(text, 'mediaflow_http_requests_total', '{method="POST",route="/resize_image/",status="200"}'),
      1,
    );
    assert.equal(
      sample(text, 'mediaflow_http_requests_total', '{method="POST",route="/resize_image/",status="400"}'),
      1,
    );
    assert.equal(
      sample(text, 'mediaflow_http_requests_total', '{method="POST",route="/resize_image/",status="502"}'),
      1,
    );
    assert.equal(sample(text, 'mediaflow_job_duration_seconds_count', '{operation="resize_image",outcome="ok"}'), 1);
    assert.equal(
      sample(text, 'mediaflow_job_duration_seconds_count', '{operation="resize_image",outcome="failed"}'),
      1,
      'the 502; the 400 never became a job',
    );
    assert.equal(
      sample(text, 'mediaflow_downloaded_bytes_total'),
      (await stat(await fixture('small-300x200.png'))).size,
    );
    assert.equal(sample(text, 'mediaflow_queue_waiting'), 0);
    assert.equal(sample(text, 'mediaflow_queue_running'), 0);
  });
});

describe('metrics access', () => {
  const scrape = (base: string, headers: Record<string, string> = {}) => fetch(`${base}/metrics`, { headers });

  it(
    'need the API key (X-API-Key, ' + 'or as a Bearer token for Prometheus) when one is set; /health stays open',
    async () => {
      const keyed = await startMediaflow({ MEDIAFLOW_API_KEY: 'sesame' });
      try {
        for (const headers of [
          {},
          { 'x-api-key': 'wrong' },
          { authorization: 'Bearer wrong' },
          { authorization: 'Basic c2VzYW1l' },
        ] as Array<Record<string, string>>) {
          const res = await scrape(keyed.base, headers);
          assert.equal(res.status, 401, JSON.stringify(headers));
          assert.deepEqual(await res.json(), { error: 'Invalid or missing API key', code: 'MF_ERR_AUTH' });
          assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
        }
        for (const headers of [{ 'x-api-key': 'sesame' }, { authorization: 'Bearer sesame' }] as Array<
          Record<string, string>
        >) {
          const res = await scrape(keyed.base, headers);
          assert.equal(res.status, 200, JSON.stringify(headers));
          assert.match(await res.text(), /^# HELP mediaflow_/m);
        }
        assert.equal((await fetch(`${keyed.base}/health`)).status, 200);
      } finally {
        await keyed.close();
      }
    },
  );

  it('need MEDIAFLOW_METRICS_TOKEN as a Bearer token when it is set (the API key still works)', async () => {
    const tokened = await startMediaflow({ MEDIAFLOW_METRICS_TOKEN: 'scrape-me', MEDIAFLOW_API_KEY: 'sesame' });
    const onlyToken = await startMediaflow({ MEDIAFLOW_METRICS_TOKEN: 'scrape-me' });
    try {
      for (const server of [tokened, onlyToken]) {
        const denied = await scrape(server.base, { authorization: 'Bearer nope' });
        assert.equal(denied.status, 401);
        assert.match(((await denied.json()) as { error: string }).error, /^Invalid or missing metrics token/);
        assert.equal((await scrape(server.base, { authorization: 'Bearer scrape-me' })).status, 200);
      }
      assert.equal((await scrape(tokened.base, { 'x-api-key': 'sesame' })).status, 200);
      // The token opens /metrics only, not the operations.
      const operation = await fetch(`${tokened.base}/generate-subtitles/`, {
        method: 'POST',
        headers: { authorization: 'Bearer scrape-me', 'content-type': 'application/json' },
        body: '{"text":"x"}',
      });
      assert.equal(operation.status, 401);
      assert.equal((await scrape(onlyToken.base)).status, 401);
    } finally {
      await tokened.close();
      await onlyToken.close();
    }
  });
});

describe('logs', () => {
  let files: FileServer;
  let dataDir: string;
  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-logs-'));
  });
  after(async () => {
    await files?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('are JSON lines, with a request id on every request line and the job timings', async () => {
    const serve = await startServeProcess(dataDir);
    try {
      const body = new FormData();
      body.append('image_url', files.url('/f/small-300x200.png'));
      body.append('width', '16');
      body.append('height', '16');
      assert.equal((await fetch(`${serve.base}/resize_image/`, { method: 'POST', body })).status, 200);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.child;
    }
    const lines = serve
      .output()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const ofRequest = lines.filter((l) => (l.req as { url?: string } | undefined)?.url === '/resize_image/');
    assert.equal(ofRequest.length, 1);
    const id = ofRequest[0]!.reqId;
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    const sameRequest = lines.filter((l) => l.reqId === id);
    assert.ok(sameRequest.length >= 3, 'incoming, job finished, request completed');
    const finished = sameRequest.find((l) => l.msg === 'job finished') as
      { timings?: Record<string, number> } | undefined;
    assert.ok(finished?.timings, 'the job line carries its timings');
    for (const key of ['downloadMs', 'probeMs', 'processMs', 'publishMs'])
      assert.equal(typeof finished.timings[key], 'number', key);
  });
});
