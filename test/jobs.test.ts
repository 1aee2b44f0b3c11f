import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer, type Route } from './helpers/file-server.js';
import { audioOf, durationOf, probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { eventually, ffmpegChildren } from './helpers/serve-process.js';
import { getJob, isFinal, waitForJob, type JobView } from './helpers/jobs.js';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from './helpers/webhook-receiver.js';

const PIPELINES = path.resolve(import.meta.dirname, '../pipelines');
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** Every field of a job as docs/jobs.md lists it, and no other. */
const JOB_FIELDS = [
  'job_id',
  'kind',
  'name',
  'status',
  'stage',
  'progress',
  'created_at',
  'started_at',
  'finished_at',
  'result',
  'error',
  'metadata',
  'webhook',
].sort();
const ASYNC = { prefer: 'respond-async' };

type Job = JobView;

type Answer = { status: number; body: Record<string, unknown>; headers: Headers };

/** POSTs a multipart form (as server.post) with any headers. */
async function postForm(
  base: string,
  route: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  const res = await fetch(`${base}${route}`, { method: 'POST', body: form, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** POSTs a JSON body. */
async function postJson(
  base: string,
  route: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** Checks a 202 answer to an asynchronous submission and returns the job id. */
function accepted(res: Answer, base: string): string {
  assert.equal(res.status, 202, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), ['job_id', 'status', 'status_url']);
  const id = res.body.job_id as string;
  assert.match(id, new RegExp(`^${UUID}$`));
  assert.equal(res.body.status, 'queued');
  assert.equal(res.body.status_url, `${base}/jobs/${id}`);
  assert.equal(res.headers.get('location'), res.body.status_url);
  return id;
}

/** The first delivery to a receiver path, once it arrives. */
async function deliveryTo(receiver: WebhookReceiver, pathname: string, ms = 20_000): Promise<Delivery> {
  assert.ok(
    await eventually(() => receiver.deliveries.some((d) => d.path === pathname), ms),
    `a webhook reached ${pathname}`,
  );
  return receiver.deliveries.find((d) => d.path === pathname)!;
}

/** The job as its webhook showed it, with the delivery state it had when the body was fixed. */
const withoutWebhook = (job: Job | Record<string, unknown>) => ({ ...job, webhook: undefined });

/** Checks the shape every job view has, whatever its state. */
function assertJobShape(job: Job, id: string, kind: string, name: string): void {
  assert.deepEqual(Object.keys(job).sort(), JOB_FIELDS);
  assert.equal(job.job_id, id);
  assert.equal(job.kind, kind);
  assert.equal(job.name, name);
  assert.ok(Number.isInteger(job.progress) && job.progress >= 0 && job.progress <= 100, `progress ${job.progress}`);
  assert.equal(typeof job.stage, 'string');
  assert.match(job.created_at, ISO);
  for (const at of [job.started_at, job.finished_at]) if (at !== null) assert.match(at, ISO);
  if (isFinal(job)) {
    assert.ok(job.finished_at !== null && job.finished_at >= job.created_at, 'finished after it was created');
    if (job.started_at !== null)
      assert.ok(
        job.started_at >= job.created_at && job.finished_at >= job.started_at,
        'created <= started <= finished',
      );
  }
}

/**
 * Reads a Server-Sent Events stream to its end (the server closes it) and returns the parsed
 * `data:` lines; `onEvent` hears each as it arrives.
 */
async function readEvents(
  url: string,
  onEvent: (job: Job) => void = () => {},
): Promise<{ res: Response; events: Job[] }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200);
  const events: Job[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body!) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (!line.startsWith('data:')) continue;
      const job = JSON.parse(line.slice('data:'.length)) as Job;
      events.push(job);
      onEvent(job);
    }
  }
  assert.equal(buffered, '', 'the stream ends after a whole event');
  return { res, events };
}

/** Downloads an output URL into `dir` and returns the file. */
async function download(url: string, dir: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 200, `GET ${url}`);
  const file = path.join(dir, `${randomBytes(6).toString('hex')}-${path.basename(new URL(url).pathname)}`);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

/** Gates that hold a fixture response until the test opens them. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A fixture served at another path, so its fetches are counted apart (FileServer.hits). */
const serveAs =
  (name: string, type: string, held?: Promise<void>): Route =>
  async (_req: IncomingMessage, res: ServerResponse) => {
    await held;
    res.writeHead(200, { 'content-type': type });
    createReadStream(await fixture(name)).pipe(res);
  };

/** A slideshow that takes ffmpeg minutes: one picture shown for an hour at 60 fps. */
const longJob = (files: FileServer) => ({
  image_urls: files.url('/f/small-300x200.png'),
  seconds_per_image: '3600',
  fps: '60',
});

/** The `{id}` of a job's outputs, from its record: a UUID of its own, not the job id. */
async function outputIdOf(server: TestServer, id: string): Promise<string> {
  const record = JSON.parse(await readFile(path.join(server.dataDir, 'jobs', `${id}.json`), 'utf8')) as {
    output_id: string;
  };
  assert.match(record.output_id, new RegExp(`^${UUID}$`));
  assert.notEqual(record.output_id, id);
  return record.output_id;
}

/** The entries under uploads/ that belong to a job (its `<output id>/` folder or `<output id>_...` files). */
async function uploadsOf(server: TestServer, id: string): Promise<string[]> {
  const outputId = await outputIdOf(server, id);
  return (await readdir(path.join(server.dataDir, 'uploads')).catch(() => [] as string[])).filter((name) =>
    name.startsWith(outputId),
  );
}

const jobRecords = async (server: TestServer) =>
  (await readdir(path.join(server.dataDir, 'jobs')).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));

describe('asynchronous jobs', () => {
  let files: FileServer;
  let server: TestServer;
  let receiver: WebhookReceiver;
  let work: string;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const held = gate();
  const sseHeld = gate();
  const resizeFields = (files: FileServer) => ({
    image_url: files.url('/f/landscape-1920x1080.jpg'),
    width: '160',
    height: '90',
  });

  before(async () => {
    await fixtures(
      'landscape-1920x1080.jpg',
      'small-300x200.png',
      'not-media.txt',
      'tone-1s-22k-mono.wav',
      'tone-2s-44k-stereo.mp3',
      'tone-1s-48k-stereo.m4a',
      'tone-2s-48k-stereo.aac',
    );
    files = await startFileServer({
      '/held.png': serveAs('small-300x200.png', 'image/png', held.opened),
      '/sse.jpg': serveAs('landscape-1920x1080.jpg', 'image/jpeg', sseHeld.opened),
      '/once/async.png': serveAs('small-300x200.png', 'image/png'),
      '/once/sync.png': serveAs('small-300x200.png', 'image/png'),
    });
    receiver = await startWebhookReceiver();
    // No input cache: a fetch the idempotency tests count must not be saved by the cache instead.
    server = await startMediaflow({
      MEDIAFLOW_WEBHOOK_SECRET: secret,
      MEDIAFLOW_PIPELINES_DIR: PIPELINES,
      MEDIAFLOW_CACHE_BYTES: '0',
    });
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-jobs-'));
  });
  after(async () => {
    held.open();
    sseHeld.open();
    await server?.close();
    await receiver?.close();
    await files?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it(
    'answers 202 with Location, then GET /jobs/<id> shows the whole job until it succeeds with the ' +
      'synchronous body',
    async () => {
      const res = await postForm(server.base, '/resize_image/', resizeFields(files), ASYNC);
      const id = accepted(res, server.base);

      const early = await getJob(server.base, id);
      assertJobShape(early, id, 'operation', 'resize_image');
      assert.ok(['queued', 'running', 'succeeded'].includes(early.status), early.status);

      const job = await waitForJob(server.base, id);
      assertJobShape(job, id, 'operation', 'resize_image');
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.progress, 100);
      assert.equal(job.stage, 'succeeded');
      assert.ok(job.started_at !== null && job.finished_at !== null);
      assert.equal(job.error, null);
      assert.equal(job.metadata, null);
      assert.equal(job.webhook, null);
      // The result is exactly the synchronous success body; the output's {id} is the job's output id.
      const sync = await server.post('/resize_image/', resizeFields(files));
      assert.equal(sync.status, 200);
      assert.deepEqual(Object.keys(job.result!).sort(), Object.keys(sync.body).sort());
      assert.equal(job.result!.message, sync.body.message);
      assert.equal(job.result!.output_file, `${server.base}/uploads/${await outputIdOf(server, id)}_resized.jpg`);

      const file = await download(job.result!.output_file as string, work);
      const video = videoOf(await probe(file))!;
      assert.equal(video.codec_name, 'mjpeg');
      assert.deepEqual([video.width, video.height], [160, 90]);
      assert.deepEqual(await server.workLeftovers(), []);
    },
  );

  it(
    'makes a request with webhook_url asynchronous and POSTs the finished job, signed, with form metadata ' +
      'echoed as is',
    async () => {
      // A string that looks like JSON stays a string; non-ASCII text must survive signing and echo.
      const metadata = '{"order": 42, "note": "café ✓"}';
      const hook = receiver.url('/hook/form');
      const res = await postForm(server.base, '/resize_image/', {
        ...resizeFields(files),
        webhook_url: hook,
        metadata,
      });
      const id = accepted(res, server.base);

      const delivery = await deliveryTo(receiver, '/hook/form');
      assert.match(String(delivery.headers['content-type']), /^application\/json/);
      const body = delivery.json as unknown as Job;
      assertJobShape(body, id, 'operation', 'resize_image');
      assert.equal(body.status, 'succeeded');
      assert.equal(body.progress, 100);
      assert.equal(body.metadata, metadata);
      assert.equal(body.error, null);
      assert.equal(body.result!.message, 'Image resized successfully');
      assert.equal(body.result!.output_file, `${server.base}/uploads/${await outputIdOf(server, id)}_resized.jpg`);
      assert.equal(body.webhook!.url, hook);
      const file = await download(body.result!.output_file as string, work);
      assert.deepEqual([videoOf(await probe(file))!.width, videoOf(await probe(file))!.height], [160, 90]);

      // Standard Webhooks headers, checked by an independent implementation as a receiver would.
      const headers = {
        'webhook-id': String(delivery.headers['webhook-id']),
        'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
        'webhook-signature': String(delivery.headers['webhook-signature']),
      };
      assert.ok(headers['webhook-id'].length > 0);
      assert.ok(
        Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 120,
        `timestamp ${headers['webhook-timestamp']}`,
      );
      assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
      assert.deepEqual(new Webhook(secret).verify(delivery.body, headers), delivery.json);
      assert.throws(
        () => new Webhook(secret).verify(delivery.body.replace('"succeeded"', '"failed"'), headers),
        /signature/i,
        'a tampered body fails',
      );
      assert.throws(
        () => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(delivery.body, headers),
        /signature/i,
        'another secret fails',
      );

      // The job shows the delivery; apart from that state, the webhook body is the job.
      const job = await waitForJob(server.base, id, (j) => j.webhook?.attempts === 1);
      assert.equal(job.webhook!.url, hook);
      assert.equal(job.webhook!.last_status, 200);
      assert.match(job.webhook!.delivered_at!, ISO);
      assert.ok(job.webhook!.delivered_at! >= job.finished_at!);
      assert.deepEqual(withoutWebhook(body), withoutWebhook(job));
      assert.equal(receiver.deliveries.filter((d) => d.path === '/hook/form').length, 1, 'delivered once');
    },
  );

  it("echoes a JSON body's metadata object unchanged in the job and its webhook", async () => {
    const metadata = { order: 7, tags: ['a', 'b'], nested: { none: null, yes: true, text: 'ünïcode' } };
    const res = await postJson(server.base, '/resize_image', {
      ...resizeFields(files),
      webhook_url: receiver.url('/hook/json'),
      metadata,
    });
    const id = accepted(res, server.base);
    const delivery = await deliveryTo(receiver, '/hook/json');
    assert.equal(delivery.json.job_id, id);
    assert.equal(delivery.json.status, 'succeeded');
    assert.deepEqual(delivery.json.metadata, metadata);
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    const job = await waitForJob(server.base, id, (j) => j.webhook?.delivered_at != null);
    assert.deepEqual(job.metadata, metadata);
    assert.deepEqual(job.webhook, {
      url: receiver.url('/hook/json'),
      attempts: 1,
      last_status: 200,
      delivered_at: job.webhook!.delivered_at,
      next_attempt_at: null,
    });
  });

  it(
    'fails a job whose input cannot be downloaded (502) or is not media (422), as the synchronous route would, ' +
      'in the record and the webhook',
    async () => {
      const cases = [
        { url: files.url('/f/missing.png'), hook: '/hook/missing', status: 502, code: 'MF_ERR_DOWNLOAD' },
        { url: files.url('/f/not-media.txt'), hook: '/hook/not-media', status: 422, code: 'MF_ERR_MEDIA' },
      ];
      for (const { url, hook, status, code } of cases) {
        const fields = { image_url: url, width: '32', height: '32' };
        const sync = await server.post('/resize_image/', fields);
        assert.equal(sync.status, status, JSON.stringify(sync.body));
        assert.equal(sync.body.code, code);
        if (status === 502) assert.ok(sync.body.error!.startsWith(`Failed to download ${url}`), sync.body.error);

        const id = accepted(
          await postForm(
            server.base,
            '/resize_image/',
            { ...fields, webhook_url: receiver.url(hook), metadata: hook },
            ASYNC,
          ),
          server.base,
        );
        const delivery = await deliveryTo(receiver, hook);
        const body = delivery.json as unknown as Job;
        assertJobShape(body, id, 'operation', 'resize_image');
        assert.equal(body.status, 'failed');
        assert.equal(body.stage, 'failed');
        assert.deepEqual(body.error, { status, error: sync.body.error, code });
        assert.equal(body.result, null);
        assert.equal(body.metadata, hook);
        assert.ok(body.progress < 100);
        new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);

        const job = await waitForJob(server.base, id, (j) => j.webhook?.attempts === 1);
        assert.equal(job.status, 'failed');
        assert.deepEqual(job.error, { status, error: sync.body.error, code });
        assert.equal(job.result, null);
        assert.deepEqual(withoutWebhook(job), withoutWebhook(body));
        assert.equal(job.webhook!.last_status, 200);
        assert.deepEqual(await uploadsOf(server, id), []);
      }
      assert.deepEqual(await server.workLeftovers(), []);
    },
  );

  it(
    'cancels a running job with DELETE: ffmpeg killed, files removed, a cancelled webhook; a second DELETE ' +
      'is a 409',
    async () => {
      const hook = receiver.url('/hook/cancel');
      const id = accepted(
        await postForm(server.base, '/images-to-video/', { ...longJob(files), webhook_url: hook }),
        server.base,
      );
      assert.ok(
        await eventually(async () => (await ffmpegChildren(process.pid)).length === 1, 20_000),
        'ffmpeg started',
      );
      const running = await getJob(server.base, id);
      assert.equal(running.status, 'running');
      assert.ok(running.started_at !== null);
      assert.ok((await server.workLeftovers()).length > 0, 'the job has a work folder while it runs');

      const res = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
      assert.equal(res.status, 200);
      const cancelled = (await res.json()) as Job;
      assertJobShape(cancelled, id, 'operation', 'images-to-video');
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.result, null);
      assert.ok(cancelled.finished_at !== null);

      assert.ok(
        await eventually(async () => (await ffmpegChildren(process.pid)).length === 0, 10_000),
        'ffmpeg was killed',
      );
      assert.ok(await eventually(async () => (await server.workLeftovers()).length === 0), 'work folder emptied');
      assert.deepEqual(await uploadsOf(server, id), []);

      const delivery = await deliveryTo(receiver, '/hook/cancel');
      assert.equal(delivery.json.job_id, id);
      assert.equal(delivery.json.status, 'cancelled');
      assert.equal(delivery.json.result, null);
      new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);

      const again = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
      assert.equal(again.status, 409);
      assert.equal(typeof ((await again.json()) as { error: string }).error, 'string');
      const job = await waitForJob(server.base, id, (j) => j.webhook?.attempts === 1);
      assert.equal(job.status, 'cancelled');
      assert.deepEqual(withoutWebhook(job), withoutWebhook(delivery.json));
    },
  );

  it('answers 404 {error} for an unknown job id on GET, DELETE and the event stream', async () => {
    const unknown = '3f0c7a52-8d7e-4c1b-9a55-2b3c4d5e6f70';
    for (const [method, route] of [
      ['GET', `/jobs/${unknown}`],
      ['DELETE', `/jobs/${unknown}`],
      ['GET', `/jobs/${unknown}/events`],
      ['GET', '/jobs/not-a-uuid'],
    ] as const) {
      const res = await fetch(`${server.base}${route}`, { method });
      assert.equal(res.status, 404, `${method} ${route}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = (await res.json()) as { error?: unknown };
      assert.equal(typeof body.error, 'string', `${method} ${route}`);
    }
  });

  it(
    'streams the job as Server-Sent Events: in order, ' + 'progress never down, closing after the terminal state',
    async () => {
      // 40 s of video at 30 fps: long enough for progress events, short enough to finish quickly. The
      // second picture is held back until the stream has said where the job stands, so the stream
      // sees the job before it ends whatever the machine's speed.
      const fields = {
        image_urls: `${files.url('/f/small-300x200.png')},${files.url('/sse.jpg')}`,
        seconds_per_image: '20',
        fps: '30',
      };
      const id = accepted(await postForm(server.base, '/images-to-video/', fields, ASYNC), server.base);
      const { res, events } = await readEvents(`${server.base}/jobs/${id}/events`, () => sseHeld.open());
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.ok(['queued', 'running'].includes(events[0]!.status), 'the first event comes before the end');
      assert.ok(events.length >= 2, `events: ${JSON.stringify(events.map((e) => [e.status, e.progress]))}`);
      const order = ['queued', 'running', 'succeeded'];
      for (const [i, event] of events.entries()) {
        assertJobShape(event, id, 'operation', 'images-to-video');
        if (i === 0) continue;
        const previous = events[i - 1]!;
        assert.ok(
          order.indexOf(event.status) >= order.indexOf(previous.status),
          `status went from ${previous.status} to ${event.status}`,
        );
        assert.ok(event.progress >= previous.progress, `progress went from ${previous.progress} to ${event.progress}`);
        assert.notDeepEqual(event, previous, `event ${i} repeats the one before: an event is sent at each change`);
      }
      const last = events.at(-1)!;
      assert.equal(last.status, 'succeeded');
      assert.equal(last.progress, 100);
      assert.equal(events.filter((e) => isFinal(e)).length, 1, 'one terminal event, the last');
      assert.deepEqual(last, await getJob(server.base, id));
      const info = await probe(server.pathOf(last.result!.output_file as string));
      assert.ok(Math.abs(durationOf(info) - 40) < 0.5, `duration ${durationOf(info)}`);

      // A finished job's stream gives its final state once, then closes.
      const replay = await readEvents(`${server.base}/jobs/${id}/events`);
      assert.deepEqual(replay.events, [last]);
    },
  );

  it('does not cancel an asynchronous job when its client disconnects', async () => {
    const fields = { image_url: files.url('/held.png'), width: '30', height: '20' };
    // fetch, aborted right after the 202's headers.
    const controller = new AbortController();
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${server.base}/resize_image/`, {
      method: 'POST',
      body: form,
      headers: ASYNC,
      signal: controller.signal,
    });
    assert.equal(res.status, 202);
    const first = res.headers.get('location')!.split('/').at(-1)!;
    controller.abort();
    await res.text().catch(() => undefined);
    // A raw connection, destroyed as soon as the status line is in, so the socket surely closes.
    const second = await new Promise<string>((resolve, reject) => {
      const body = new URLSearchParams({ ...fields, width: '20', height: '30' }).toString();
      const req = httpRequest(`${server.base}/resize_image/`, {
        method: 'POST',
        agent: false,
        headers: {
          ...ASYNC,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('response', (answer) => {
        const location = answer.headers.location;
        req.destroy();
        if (answer.statusCode === 202 && location) resolve(location.split('/').at(-1)!);
        else reject(new Error(`answered ${answer.statusCode}`));
      });
      req.on('error', reject);
      req.end(body);
    });
    // Both jobs wait for their input, with their clients gone.
    assert.ok(
      await eventually(() => (files.hits.get('/held.png') ?? 0) >= 2, 10_000),
      'both jobs asked for their input',
    );
    await new Promise((r) => setTimeout(r, 300));
    for (const id of [first, second]) assert.equal((await getJob(server.base, id)).status, 'running');
    held.open();
    for (const [id, size] of [
      [first, [30, 20]],
      [second, [20, 30]],
    ] as const) {
      const job = await waitForJob(server.base, id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const video = videoOf(await probe(await download(job.result!.output_file as string, work)))!;
      assert.deepEqual([video.width, video.height], size);
    }
  });

  it(
    'replays an Idempotency-Key with the same fields without running anything again; ' + 'other fields are a 422',
    async () => {
      const fields = { image_url: files.url('/once/async.png'), width: '40', height: '30' };
      const headers = { ...ASYNC, 'idempotency-key': `async-${randomBytes(4).toString('hex')}` };
      const first = accepted(await postForm(server.base, '/resize_image/', fields, headers), server.base);
      const records = await jobRecords(server);
      const second = await postForm(server.base, '/resize_image/', fields, headers);
      assert.equal(second.status, 202);
      assert.equal(second.body.job_id, first);
      assert.equal(second.headers.get('location'), `${server.base}/jobs/${first}`);
      const job = await waitForJob(server.base, first);
      assert.equal(job.status, 'succeeded');
      // A JSON body with the same fields is the same request.
      const third = await postJson(server.base, '/resize_image/', fields, headers);
      assert.equal(third.status, 202);
      assert.equal(third.body.job_id, first);
      assert.equal(third.body.status_url, `${server.base}/jobs/${first}`);
      assert.equal(files.hits.get('/once/async.png'), 1, 'the input was fetched once');
      assert.deepEqual(await getJob(server.base, first), job, 'the replays changed nothing');
      assert.deepEqual(await jobRecords(server), records, 'the replays made no job');

      const other = await postForm(server.base, '/resize_image/', { ...fields, width: '41' }, headers);
      assert.equal(other.status, 422);
      assert.equal(typeof other.body.error, 'string');
      assert.match(other.body.error as string, /Idempotency-Key/i);

      // Synchronous: the replay answers the first answer, byte for byte the same body.
      const syncFields = { image_url: files.url('/once/sync.png'), width: '24', height: '24' };
      const syncHeaders = { 'idempotency-key': `sync-${randomBytes(4).toString('hex')}` };
      const a = await postForm(server.base, '/resize_image/', syncFields, syncHeaders);
      const b = await postForm(server.base, '/resize_image/', syncFields, syncHeaders);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(b.status, 200);
      assert.deepEqual(b.body, a.body);
      assert.match(a.body.output_file as string, new RegExp(`^${server.base}/uploads/${UUID}_resized\\.jpg$`));
      assert.equal(files.hits.get('/once/sync.png'), 1, 'the input was fetched once');
      assert.equal(
        (await postForm(server.base, '/resize_image/', { ...syncFields, height: '25' }, syncHeaders)).status,
        422,
      );

      for (const bad of ['k'.repeat(300), 'has space', '']) {
        const res = await fetch(`${server.base}/resize_image/`, {
          method: 'POST',
          body: new URLSearchParams(fields),
          headers: { ...ASYNC, 'idempotency-key': bad },
        });
        assert.equal(res.status, 400, `key ${JSON.stringify(bad.slice(0, 20))}`);
        assert.match(((await res.json()) as { error: string }).error, /Idempotency-Key/);
      }
      assert.equal(files.hits.get('/once/async.png'), 1);
    },
  );

  it('runs a pipeline as a job: 202, then succeeded with {message, outputs} whose URLs download', async () => {
    const fields = {
      intro: files.url('/f/tone-1s-22k-mono.wav'),
      segments: `${files.url('/f/tone-2s-44k-stereo.mp3')}, ${files.url('/f/tone-1s-48k-stereo.m4a')}`,
      outro: files.url('/f/tone-2s-48k-stereo.aac'),
      metadata: 'episode 12',
    };
    const id = accepted(await postForm(server.base, '/pipelines/podcast/', fields, ASYNC), server.base);
    const job = await waitForJob(server.base, id);
    assertJobShape(job, id, 'pipeline', 'podcast');
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    assert.equal(job.metadata, 'episode 12');
    assert.deepEqual(Object.keys(job.result!).sort(), ['message', 'outputs']);
    assert.equal(typeof job.result!.message, 'string');
    const outputs = job.result!.outputs as Record<string, string>;
    assert.deepEqual(Object.keys(outputs), ['episode']);
    assert.equal(outputs.episode!, `${server.base}/uploads/${await outputIdOf(server, id)}/episode.mp3`);
    const info = await probe(await download(outputs.episode!, work));
    assert.equal(audioOf(info)?.codec_name, 'mp3');
    assert.ok(Math.abs(durationOf(info) - 6) < 0.2, `duration ${durationOf(info)}`);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('reports jobs by status, queue wait and webhook deliveries in /metrics', async () => {
    const text = await (await fetch(`${server.base}/metrics`)).text();
    const value = (pattern: RegExp) => {
      const match = pattern.exec(text);
      assert.ok(match, `${pattern} in /metrics`);
      return Number(match[1]);
    };
    assert.ok(value(/^mediaflow_jobs\{status="succeeded"\} (\S+)$/m) >= 8);
    assert.ok(value(/^mediaflow_jobs\{status="failed"\} (\S+)$/m) >= 2);
    assert.ok(value(/^mediaflow_jobs\{status="cancelled"\} (\S+)$/m) >= 1);
    assert.equal(value(/^mediaflow_jobs\{status="running"\} (\S+)$/m), 0);
    assert.ok(value(/^mediaflow_job_queue_wait_seconds_count (\S+)$/m) > 0);
    assert.ok(value(/^mediaflow_webhook_deliveries_total\{outcome="delivered"\} (\S+)$/m) >= 5);
  });
});

describe('asynchronous submissions refused at once', () => {
  let files: FileServer;
  let server: TestServer;
  let receiver: WebhookReceiver;
  const KEY = 'test-key-0123456789';
  const auth = { 'x-api-key': KEY };

  before(async () => {
    await fixtures('small-300x200.png');
    files = await startFileServer();
    receiver = await startWebhookReceiver();
    server = await startMediaflow({ MEDIAFLOW_API_KEY: KEY, MEDIAFLOW_BODY_LIMIT: '65536' });
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
    await files?.close();
  });

  it(
    'answers 400 for invalid fields, ' + 'oversized metadata and a webhook_url that is not http(s), creating no job',
    async () => {
      const fields = { image_url: files.url('/f/small-300x200.png'), width: '32', height: '32' };
      const cases: Array<{ res: Answer; names: RegExp }> = [
        {
          res: await postForm(server.base, '/resize_image/', { ...fields, width: 'wide' }, { ...auth, ...ASYNC }),
          names: /width/,
        },
        {
          res: await postForm(
            server.base,
            '/resize_image/',
            { ...fields, width: 'wide', webhook_url: receiver.url() },
            auth,
          ),
          names: /width/,
        },
        {
          res: await postForm(
            server.base,
            '/resize_image/',
            { ...fields, metadata: 'x'.repeat(4097) },
            { ...auth, ...ASYNC },
          ),
          names: /metadata/,
        },
        {
          res: await postForm(
            server.base,
            '/resize_image/',
            { ...fields, metadata: 'é'.repeat(2049) },
            { ...auth, ...ASYNC },
          ),
          names: /metadata/,
        },
        {
          res: await postJson(
            server.base,
            '/resize_image/',
            { ...fields, metadata: { blob: 'x'.repeat(4090) } },
            { ...auth, ...ASYNC },
          ),
          names: /metadata/,
        },
        {
          res: await postForm(server.base, '/resize_image/', { ...fields, webhook_url: 'ftp://127.0.0.1/x' }, auth),
          names: /webhook_url/,
        },
        {
          res: await postForm(
            server.base,
            '/resize_image/',
            { ...fields, webhook_url: 'not a url' },
            { ...auth, ...ASYNC },
          ),
          names: /webhook_url/,
        },
      ];
      for (const [i, { res, names }] of cases.entries()) {
        assert.equal(res.status, 400, `case ${i}: ${JSON.stringify(res.body)}`);
        assert.equal(res.headers.get('location'), null);
        assert.match(res.body.error as string, names, `case ${i}`);
      }
      // At the limit is fine (4096 bytes of metadata).
      const ok = await postForm(
        server.base,
        '/resize_image/',
        { ...fields, metadata: 'x'.repeat(4096) },
        { ...auth, ...ASYNC },
      );
      const id = accepted(ok, server.base);
      const job = await waitForJob(server.base, id, isFinal, { headers: auth });
      assert.equal(job.status, 'succeeded');
      assert.equal(job.metadata, 'x'.repeat(4096));
      assert.deepEqual(await jobRecords(server), [`${id}.json`], 'only the valid submission made a job');
    },
  );

  it('answers 413 for a body over the limit, at once', async () => {
    const res = await postForm(
      server.base,
      '/resize_image/',
      { image_url: files.url('/f/small-300x200.png'), width: '32', height: '32', filler: 'x'.repeat(70_000) },
      { ...auth, ...ASYNC },
    );
    assert.equal(res.status, 413);
    assert.equal(typeof res.body.error, 'string');
  });

  it('needs the API key for asynchronous submissions and every job route (401)', async () => {
    const existing = await jobRecords(server);
    const fields = { image_url: files.url('/f/small-300x200.png'), width: '32', height: '32' };
    const id = accepted(await postForm(server.base, '/resize_image/', fields, { ...auth, ...ASYNC }), server.base);
    for (const headers of [{}, { 'x-api-key': 'wrong' }] as Array<Record<string, string>>) {
      const unkeyed = [
        await postForm(server.base, '/resize_image/', fields, { ...headers, ...ASYNC }),
        await postForm(server.base, '/resize_image/', { ...fields, webhook_url: receiver.url() }, headers),
      ];
      for (const res of unkeyed) {
        assert.equal(res.status, 401);
        assert.deepEqual(res.body, { error: 'Invalid or missing API key', code: 'MF_ERR_AUTH' });
      }
      for (const [method, route] of [
        ['GET', `/jobs/${id}`],
        ['GET', `/jobs/${id}/events`],
        ['DELETE', `/jobs/${id}`],
      ] as const) {
        const res = await fetch(`${server.base}${route}`, { method, headers });
        assert.equal(res.status, 401, `${method} ${route}`);
        assert.deepEqual(await res.json(), { error: 'Invalid or missing API key', code: 'MF_ERR_AUTH' });
      }
    }
    const keyed = await fetch(`${server.base}/jobs/${id}`, { headers: auth });
    assert.equal(keyed.status, 200);
    assert.equal(((await keyed.json()) as Job).job_id, id, 'the DELETEs without the key cancelled nothing');
    assert.deepEqual(
      (await jobRecords(server)).sort(),
      [...existing, `${id}.json`].sort(),
      'the refused submissions made no job',
    );
    assert.equal(receiver.deliveries.length, 0);
  });
});

describe('load shedding with asynchronous jobs', () => {
  const op = useOperation({
    fixtures: ['small-300x200.png'],
    env: { MEDIAFLOW_CONCURRENCY: '1', MEDIAFLOW_MAX_QUEUE: '1' },
  });

  const health = async () => {
    const { queue } = (await (await fetch(`${op.server.base}/health`)).json()) as {
      queue: { waiting: number; running: number };
    };
    return { waiting: queue.waiting, running: queue.running };
  };

  it('counts waiting asynchronous jobs: one running and one waiting, the next is a 503 with Retry-After', async () => {
    const running = accepted(
      await postForm(op.server.base, '/images-to-video/', longJob(op.files), ASYNC),
      op.server.base,
    );
    assert.ok(
      await eventually(async () => (await ffmpegChildren(process.pid)).length === 1, 20_000),
      'the first job runs ffmpeg',
    );
    const waiting = accepted(
      await postForm(op.server.base, '/images-to-video/', longJob(op.files), ASYNC),
      op.server.base,
    );
    assert.deepEqual(await health(), { waiting: 1, running: 1 });
    assert.equal((await getJob(op.server.base, waiting)).status, 'queued');

    const refused = await postForm(
      op.server.base,
      '/resize_image/',
      { image_url: op.files.url('/f/small-300x200.png'), width: '8', height: '8' },
      ASYNC,
    );
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) > 0, `Retry-After ${refused.headers.get('retry-after')}`);
    assert.equal(typeof refused.body.error, 'string');
    assert.equal(refused.headers.get('location'), null);
    assert.deepEqual(
      (await jobRecords(op.server)).sort(),
      [`${running}.json`, `${waiting}.json`].sort(),
      'the refused job left no record',
    );

    // The waiting one is taken off the queue, the running one stopped.
    for (const id of [waiting, running]) {
      const res = await fetch(`${op.server.base}/jobs/${id}`, { method: 'DELETE' });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as Job).status, 'cancelled');
    }
    assert.equal((await getJob(op.server.base, waiting)).started_at, null, 'the waiting job never started');
    assert.ok(
      await eventually(async () => (await ffmpegChildren(process.pid)).length === 0, 10_000),
      'ffmpeg was killed',
    );
    assert.deepEqual(await health(), { waiting: 0, running: 0 });
    assert.ok(await eventually(async () => (await op.server.workLeftovers()).length === 0));
  });
});
