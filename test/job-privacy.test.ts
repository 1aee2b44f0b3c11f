import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, isFinal, submitJob, waitForJob, type JobView } from './helpers/jobs.js';
import { probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { eventually, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const PIPELINES = path.resolve(import.meta.dirname, '../pipelines');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/;
const ASYNC = { prefer: 'respond-async' };

/** The hex digits of a UUID, to look for it however it is spelled (dashes, case). */
const digitsOf = (uuid: string) => uuid.replaceAll('-', '').toLowerCase();

/** The job's record as the embedded store keeps it on disk. */
const recordOf = async (server: TestServer, id: string) =>
  JSON.parse(await readFile(path.join(server.dataDir, 'jobs', `${id}.json`), 'utf8')) as Record<string, unknown>;

/** A finished job's event stream: its one event, then the end. */
async function eventsOf(
  base: string,
  id: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/jobs/${id}/events`, { headers, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, text: await res.text() };
}

describe('outputs are named apart from their job', () => {
  const op = useOperation({
    fixtures: [
      'small-300x200.png',
      'tone-1s-22k-mono.wav',
      'tone-2s-44k-stereo.mp3',
      'tone-1s-48k-stereo.m4a',
      'tone-2s-48k-stereo.aac',
    ],
    env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES },
  });

  it(
    'gives an operation output a UUID v4 of its own: ' + 'the URL does not contain the job id, nor lead to the job',
    async () => {
      const id = await submitJob(
        op.server.base,
        '/resize_image/',
        { image_url: op.files.url('/f/small-300x200.png'), width: '40', height: '30' },
        ASYNC,
      );
      const job = await waitForJob(op.server.base, id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const url = String(job.result!.output_file);
      const match = new RegExp(`^${op.server.base}/uploads/(${UUID.source})_resized\\.jpg$`).exec(url);
      assert.ok(match, url);
      const outputId = match[1]!;
      assert.notEqual(outputId, id);
      assert.ok(!digitsOf(url).includes(digitsOf(id)), 'no spelling of the job id is in the URL');
      // The output id is random, not derived: it is stored with the job, and no job answers to it.
      assert.equal((await recordOf(op.server, id)).output_id, outputId);
      assert.equal((await fetch(`${op.server.base}/jobs/${outputId}`)).status, 404);
      assert.equal((await fetch(`${op.server.base}/jobs/${outputId}`, { method: 'DELETE' })).status, 404);
      // The file is there under that name, and is the resized image.
      const file = path.join(op.scratch, 'out.jpg');
      await writeFile(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
      assert.deepEqual([videoOf(await probe(file))!.width, videoOf(await probe(file))!.height], [40, 30]);
      assert.ok(
        !(await readdir(path.join(op.server.dataDir, 'uploads'))).some((name) => name.includes(id)),
        'no upload is named by the job id',
      );
    },
  );

  it("puts a pipeline's results in a folder named by the output id, not the job id", async () => {
    const fields = {
      intro: op.files.url('/f/tone-1s-22k-mono.wav'),
      segments: `${op.files.url('/f/tone-2s-44k-stereo.mp3')}, ${op.files.url('/f/tone-1s-48k-stereo.m4a')}`,
      outro: op.files.url('/f/tone-2s-48k-stereo.aac'),
    };
    const id = await submitJob(op.server.base, '/pipelines/podcast/', fields, ASYNC);
    const job = await waitForJob(op.server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const episode = (job.result!.outputs as Record<string, string>).episode!;
    const outputId = String((await recordOf(op.server, id)).output_id);
    assert.match(outputId, new RegExp(`^${UUID.source}$`));
    assert.equal(episode, `${op.server.base}/uploads/${outputId}/episode.mp3`);
    assert.ok(!digitsOf(episode).includes(digitsOf(id)));
    assert.equal((await fetch(episode)).status, 200);
  });
});

describe('webhook URLs are shown without their secrets', () => {
  let files: FileServer;
  let server: TestServer;
  let receiver: WebhookReceiver;

  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
    receiver = await startWebhookReceiver();
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
    await files?.close();
  });

  it(
    'shows scheme, host and path with "(query redacted)" in GET /jobs, the events and the webhook body; ' +
      'delivers to the full URL',
    async () => {
      const hook = new URL(receiver.url('/hook/zap'));
      const full = `http://zapuser:zappass@${hook.host}/hook/zap?token=s3cr3t-t0ken&sig=abc`;
      const id = await submitJob(server.base, '/resize_image/', {
        image_url: files.url('/f/small-300x200.png'),
        width: '20',
        height: '20',
        webhook_url: full,
      });
      const job = await waitForJob(server.base, id, (j) => j.webhook?.delivered_at != null);
      const shown = `http://${hook.host}/hook/zap?(query redacted)`;
      assert.equal(job.webhook!.url, shown);

      const texts = [JSON.stringify(job), (await eventsOf(server.base, id)).text];
      const [delivery] = await receiver.received(1);
      texts.push(delivery!.body);
      assert.equal((delivery!.json.webhook as JobView['webhook'])!.url, shown);
      for (const text of texts) {
        for (const secret of ['s3cr3t-t0ken', 'zappass', 'zapuser', 'sig=abc'])
          assert.ok(!text.includes(secret), `${secret} shown in ${text}`);
      }
      assert.ok(texts[1]!.includes(JSON.stringify(shown)), 'the event stream shows the redacted URL');
      // The receiver got the whole URL: its query, and the user info as Basic authentication.
      assert.equal(delivery!.url, '/hook/zap?token=s3cr3t-t0ken&sig=abc');
      assert.equal(delivery!.headers.authorization, `Basic ${Buffer.from('zapuser:zappass').toString('base64')}`);
      // A URL with nothing to hide is shown as it is.
      const plain = receiver.url('/hook/plain');
      const other = await submitJob(server.base, '/resize_image/', {
        image_url: files.url('/f/small-300x200.png'),
        width: '20',
        height: '20',
        webhook_url: plain,
      });
      assert.equal((await waitForJob(server.base, other, (j) => j.webhook?.delivered_at != null)).webhook!.url, plain);
    },
  );
});

describe('several API keys: each key sees only its own jobs', () => {
  let files: FileServer;
  let server: TestServer;
  const A = { 'x-api-key': 'key-of-alice-0123456789' };
  const B = { 'x-api-key': 'key-of-bob-9876543210' };
  const SOLO = { 'x-api-key': 'the-single-key' };

  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
    // One key in each setting: both are accepted, and together they are several.
    server = await startMediaflow({
      MEDIAFLOW_API_KEY: A['x-api-key'],
      MEDIAFLOW_API_KEYS: `${B['x-api-key']}, ${SOLO['x-api-key']}`,
      MEDIAFLOW_CACHE_BYTES: '0',
    });
  });
  after(async () => {
    await server?.close();
    await files?.close();
  });

  const fields = (files: FileServer) => ({ image_url: files.url('/f/small-300x200.png'), width: '16', height: '16' });

  it("answers 404 to another key on GET, events and DELETE, and the job stays its owner's", async () => {
    const id = await submitJob(server.base, '/resize_image/', fields(files), { ...ASYNC, ...A });
    const own = await waitForJob(server.base, id, isFinal, { headers: A });
    assert.equal(own.status, 'succeeded');
    for (const [method, route] of [
      ['GET', `/jobs/${id}`],
      ['GET', `/jobs/${id}/events`],
      ['DELETE', `/jobs/${id}`],
    ] as const) {
      const res = await fetch(`${server.base}${route}`, { method, headers: B });
      assert.equal(res.status, 404, `${method} ${route}`);
      assert.deepEqual(
        await res.json(),
        { error: `Unknown job '${id}' (it may have expired)`, code: 'MF_ERR_NOT_FOUND' },
        'the same answer as an unknown id',
      );
    }
    assert.equal((await fetch(`${server.base}/jobs/${id}`, { headers: { 'x-api-key': 'not-a-key' } })).status, 401);
    assert.deepEqual(await getJob(server.base, id, A), own, 'unchanged for its owner');
    const events = await eventsOf(server.base, id, A);
    assert.equal(events.status, 200);
    assert.match(events.text, new RegExp(`"job_id":"${id}"`));
    // The record names its owner by a hash of the key, never the key.
    const record = await recordOf(server, id);
    assert.equal(record.owner, createHash('sha256').update(A['x-api-key']).digest('hex'));
    assert.ok(!JSON.stringify(record).includes(A['x-api-key']));
  });

  it('cancels only for the owner: another key cannot stop a running job', async () => {
    const held = { image_urls: files.url('/f/small-300x200.png'), seconds_per_image: '3600', fps: '60' };
    const id = await submitJob(server.base, '/images-to-video/', held, { ...ASYNC, ...B });
    await waitForJob(server.base, id, (j) => j.status === 'running', { headers: B });
    assert.equal((await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE', headers: A })).status, 404);
    assert.equal((await getJob(server.base, id, B)).status, 'running', 'still running after the other key tried');
    const res = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE', headers: B });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as JobView).status, 'cancelled');
  });

  it(
    'keeps Idempotency-Keys apart: ' + 'the same key under two API keys makes two jobs, each replayed to its own',
    async () => {
      const key = { 'idempotency-key': 'order-1234' };
      const a = await submitJob(server.base, '/resize_image/', fields(files), { ...ASYNC, ...A, ...key });
      const b = await submitJob(server.base, '/resize_image/', fields(files), { ...ASYNC, ...B, ...key });
      assert.notEqual(a, b, 'two independent jobs');
      assert.equal((await waitForJob(server.base, a, isFinal, { headers: A })).status, 'succeeded');
      assert.equal((await waitForJob(server.base, b, isFinal, { headers: B })).status, 'succeeded');
      assert.equal(await submitJob(server.base, '/resize_image/', fields(files), { ...ASYNC, ...A, ...key }), a);
      assert.equal(await submitJob(server.base, '/resize_image/', fields(files), { ...ASYNC, ...B, ...key }), b);
      // Other fields under the same key: a 422 for its own key only; the third key starts afresh.
      const other = new FormData();
      for (const [name, value] of Object.entries({ ...fields(files), width: '18' })) other.append(name, value);
      assert.equal(
        (
          await fetch(`${server.base}/resize_image/`, {
            method: 'POST',
            body: other,
            headers: { ...ASYNC, ...A, ...key },
          })
        ).status,
        422,
      );
      const c = await submitJob(
        server.base,
        '/resize_image/',
        { ...fields(files), width: '18' },
        { ...ASYNC, ...SOLO, ...key },
      );
      assert.ok(![a, b].includes(c));
    },
  );
});

describe('several API keys with jobs in Redis', () => {
  let files: FileServer;
  let redis: TestRedis;
  let serve: ServeProcess;
  let dataDir: string;
  const A = { 'x-api-key': 'redis-key-a' };
  const B = { 'x-api-key': 'redis-key-b' };

  before(async () => {
    await fixtures('small-300x200.png');
    [files, redis, dataDir] = await Promise.all([
      startFileServer(),
      startRedis(),
      mkdtemp(path.join(os.tmpdir(), 'mediaflow-privacy-redis-')),
    ]);
    serve = await startServeProcess(dataDir, {
      MEDIAFLOW_REDIS_URL: redis.url,
      MEDIAFLOW_API_KEYS: `${A['x-api-key']},${B['x-api-key']}`,
    });
  });
  after(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.child;
    await redis?.close();
    await files?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("keeps each key's jobs and Idempotency-Keys apart in the shared store too", async () => {
    const fields = { image_url: files.url('/f/small-300x200.png'), width: '12', height: '12' };
    const key = { 'idempotency-key': 'shared-order-1' };
    const a = await submitJob(serve.base, '/resize_image/', fields, { ...ASYNC, ...A, ...key });
    const b = await submitJob(serve.base, '/resize_image/', fields, { ...ASYNC, ...B, ...key });
    assert.notEqual(a, b);
    assert.equal((await waitForJob(serve.base, a, isFinal, { headers: A })).status, 'succeeded');
    assert.equal((await waitForJob(serve.base, b, isFinal, { headers: B })).status, 'succeeded');
    assert.equal(
      await submitJob(serve.base, '/resize_image/', fields, { ...ASYNC, ...B, ...key }),
      b,
      'replayed to its own job',
    );
    assert.equal((await fetch(`${serve.base}/jobs/${a}`, { headers: B })).status, 404);
    assert.equal((await fetch(`${serve.base}/jobs/${b}/events`, { headers: A })).status, 404);
  });
});

describe('one API key: jobs are shared as before', () => {
  const op = useOperation({ fixtures: ['small-300x200.png'], env: { MEDIAFLOW_API_KEYS: 'only-key' } });

  it('accepts a key given only in MEDIAFLOW_API_KEYS and records no owner', async () => {
    assert.equal((await fetch(`${op.server.base}/jobs/00000000-0000-4000-8000-000000000000`)).status, 401);
    const id = await submitJob(
      op.server.base,
      '/resize_image/',
      { image_url: op.files.url('/f/small-300x200.png'), width: '8', height: '8' },
      { ...ASYNC, 'x-api-key': 'only-key' },
    );
    assert.equal(
      (await waitForJob(op.server.base, id, isFinal, { headers: { 'x-api-key': 'only-key' } })).status,
      'succeeded',
    );
    assert.equal((await recordOf(op.server, id)).owner, undefined);
  });
});

describe('webhook signing at start', () => {
  it('warns in the log when webhooks would go out unsigned, and not when MEDIAFLOW_WEBHOOK_SECRET is set', async () => {
    const dirs = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), 'mediaflow-warn-'))));
    const unsigned = await startServeProcess(dirs[0]!);
    const signed = await startServeProcess(dirs[1]!, {
      MEDIAFLOW_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    });
    try {
      const warned = (output: string) =>
        output
          .split('\n')
          .some(
            (line) =>
              line.includes('MEDIAFLOW_WEBHOOK_SECRET') && /"level":40\b/.test(line) && line.includes('unsigned'),
          );
      assert.ok(await eventually(() => warned(unsigned.output())), unsigned.output());
      assert.ok(!warned(signed.output()), signed.output());
    } finally {
      for (const serve of [unsigned, signed]) serve.child.kill('SIGTERM');
      await Promise.all([unsigned.child, signed.child]);
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
});
