import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, type JobView } from './helpers/jobs.js';
import { loadConfig } from '../src/engine/config.js';
import type { JobEvents } from '../src/jobs/events.js';
import type { JobRecord } from '../src/jobs/job.js';
import type { JobStore } from '../src/jobs/job-store.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';

describe('job progress never goes down', () => {
  let dataDir: string;
  let files: FileServer;
  let app: Awaited<ReturnType<typeof buildServer>>['app'];
  let jobs: Awaited<ReturnType<typeof buildServer>>['jobs'];
  let base: string;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-sse-progress-'));
    // An input that never arrives: the job stays running (in its download) until it is cancelled.
    files = await startFileServer({ '/hang.png': () => new Promise(() => {}) });
    const env = { MEDIAFLOW_DATA_DIR: dataDir, MEDIAFLOW_ALLOW_PRIVATE_URLS: '1', MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0' };
    const config = loadConfig(env);
    ({ app, jobs } = await buildServer({ config, registry: builtinRegistry(), logger: false }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app?.close();
    await files?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('an event delivered late (older than what the stream sent) is not sent: SSE and GET stay up', async () => {
    const form = new FormData();
    const fields = { image_url: files.url('/hang.png'), width: '10', height: '10' };
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    const headers = { prefer: 'respond-async' };
    const submitted = await fetch(`${base}/resize_image`, { method: 'POST', body: form, headers });
    assert.equal(submitted.status, 202);
    const { job_id: id } = (await submitted.json()) as { job_id: string };
    // The service's own store and event bus, as a worker's progress writes reach them.
    const { store, events } = jobs as unknown as { store: JobStore; events: JobEvents };

    const res = await fetch(`${base}/jobs/${id}/events`, { signal: AbortSignal.timeout(30_000) });
    assert.equal(res.status, 200);
    const seen: JobView[] = [];
    let earlier: JobRecord | undefined;
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body!) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let end: number; (end = buffered.indexOf('\n\n')) >= 0; buffered = buffered.slice(end + 2)) {
        const line = buffered.slice(0, end);
        if (!line.startsWith('data:')) continue;
        const job = JSON.parse(line.slice('data:'.length)) as JobView;
        seen.push(job);
        if (job.status !== 'running' || earlier) continue;
        // The job runs: keep its record as it is now, then move its progress on as a worker does,
        // then deliver the earlier record again, as Redis pub/sub may after the stream read the newer one.
        earlier = (await store.get(id))!;
        events.publish((await store.update(id, (r) => void (r.progress = Math.max(r.progress, 40))))!);
        events.publish(earlier);
        assert.equal((await getJob(base, id)).progress, 40);
        setTimeout(() => void fetch(`${base}/jobs/${id}`, { method: 'DELETE' }), 200);
      }
    }
    const progress = seen.map((job) => job.progress);
    assert.ok(earlier, `the job ran: ${JSON.stringify(seen.map((job) => [job.status, job.stage, job.progress]))}`);
    const upward = progress.every((value, i) => i === 0 || value >= progress[i - 1]!);
    assert.ok(upward, `progress went down: ${progress.join(', ')}`);
    assert.equal(seen.at(-1)?.status, 'cancelled');
    assert.equal(seen.at(-1)?.progress, 40);
    assert.equal((await getJob(base, id)).progress, 40);
  });
});
