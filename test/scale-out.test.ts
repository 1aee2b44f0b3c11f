import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, submitJob, waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { audioOf, durationOf, probe, videoOf } from './helpers/media.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { startS3, type TestS3 } from './helpers/s3-server.js';
import {
  eventually,
  ffmpegChildren,
  killQuietly,
  startServeProcess,
  startWorkerProcess,
  type ServeProcess,
} from './helpers/serve-process.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = `whsec_${Buffer.from('scale-out-test-secret-0123456789').toString('base64')}`;

/**
 * Issue 10's end-to-end case: one API process with no workers, two worker processes, Redis and an
 * S3 server, all real and on loopback. Twenty jobs (synchronous, asynchronous and pipelines) run
 * while one worker is killed with -9 mid-job; every one must succeed, its output must come from
 * the bucket and probe right, and every asynchronous job's webhook must arrive once.
 */
describe('one API, two workers, Redis and S3', () => {
  let redis: TestRedis;
  let s3: TestS3;
  let files: FileServer;
  let receiver: WebhookReceiver;
  let dataDir: string;
  let api: ServeProcess;
  const workers: ServeProcess[] = [];
  const orphans: number[] = [];

  before(async () => {
    await fixtures(
      'landscape-1920x1080.jpg',
      'small-300x200.png',
      'tone-2s-44k-stereo.mp3',
      'tone-3s-44k-stereo.mp3',
      'tone-1s-22k-mono.wav',
      'clip-2s-640x360-25fps.mp4',
    );
    [redis, s3, files, receiver] = await Promise.all([
      startRedis(),
      startS3(),
      startFileServer(),
      startWebhookReceiver(),
    ]);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-scale-'));
    const shared = {
      ...s3.env,
      MEDIAFLOW_REDIS_URL: redis.url,
      MEDIAFLOW_WEBHOOK_SECRET: SECRET,
      MEDIAFLOW_STALLED_INTERVAL: '3s',
    };
    // A worker started before the API: it waits for jobs.
    workers.push(await startWorkerProcess(dataDir, { ...shared, MEDIAFLOW_CONCURRENCY: '1' }));
    api = await startServeProcess(dataDir, { ...shared, MEDIAFLOW_WORKERS: '0' });
    workers.push(await startWorkerProcess(dataDir, { ...shared, MEDIAFLOW_CONCURRENCY: '1' }));
  });
  after(async () => {
    for (const proc of [api, ...workers]) if (proc && proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all([api, ...workers].map((proc) => proc?.child));
    for (const pid of orphans) killQuietly(pid);
    await Promise.all([redis?.close(), s3?.close(), files?.close(), receiver?.close()]);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs 20 mixed jobs to success while a worker is killed with -9 mid-job', async () => {
    const health = (await (await fetch(`${api.base}/health`)).json()) as Record<string, unknown>;
    assert.equal(health.role, 'api');
    assert.deepEqual(health.jobs, { backend: 'redis', ok: true });
    assert.deepEqual(health.storage, { kind: 's3', ok: true });

    // The job to interrupt: a slideshow that keeps a worker busy for several seconds.
    const slow = await submitJob(api.base, '/images-to-video/', {
      image_urls: files.url('/f/landscape-1920x1080.jpg'),
      seconds_per_image: '24',
      fps: '50',
      webhook_url: receiver.url('/slow'),
    });
    let victim: ServeProcess | undefined;
    assert.ok(
      await eventually(async () => {
        for (const worker of workers) if ((await ffmpegChildren(worker.child.pid!)).length > 0) victim = worker;
        return victim !== undefined;
      }, 20_000),
      'a worker runs the slideshow',
    );

    const asyncJobs: Array<{ id: string; check: (file: string) => Promise<void> }> = [
      { id: slow, check: expectVideo(1920, 1080, 24) },
    ];
    const audio = (n: number) => ({
      audio_urls: `${files.url('/f/tone-2s-44k-stereo.mp3')},${files.url('/f/tone-3s-44k-stereo.mp3')}`,
      format: n % 2 ? 'wav' : 'mp3',
    });
    for (let n = 0; n < 7; n++) {
      asyncJobs.push({
        id: await submitJob(api.base, '/merge-audios/', { ...audio(n), webhook_url: receiver.url(`/audio-${n}`) }),
        check: expectAudio(5),
      });
    }
    for (let n = 0; n < 2; n++) {
      const id = await submitJob(api.base, '/pipelines/podcast/', {
        intro: files.url('/f/tone-1s-22k-mono.wav'),
        segments: `${files.url('/f/tone-2s-44k-stereo.mp3')},${files.url('/f/tone-3s-44k-stereo.mp3')}`,
        outro: files.url('/f/tone-1s-22k-mono.wav'),
        webhook_url: receiver.url(`/podcast-${n}`),
      });
      asyncJobs.push({ id, check: expectAudio(7) });
    }
    // Ten synchronous requests at once, answered with the interface's exact bodies (docs/architecture.md).
    const sync = Array.from({ length: 10 }, (_, n) =>
      fetch(`${api.base}/${n % 2 ? 'resize_image' : 'convert-video'}/`, {
        method: 'POST',
        body: form(
          n % 2
            ? { image_url: files.url('/f/small-300x200.png'), width: String(40 + n), height: '30' }
            : { video_url: files.url('/f/clip-2s-640x360-25fps.mp4'), format: 'mkv' },
        ),
      }).then(async (res) => ({ n, status: res.status, body: (await res.json()) as Record<string, string> })),
    );

    // Kill the worker that runs the slideshow; its ffmpeg would run on as an orphan.
    orphans.push(...(await ffmpegChildren(victim!.child.pid!)));
    victim!.child.kill('SIGKILL');
    await victim!.child;
    for (const pid of orphans) killQuietly(pid);

    for (const { n, status, body } of await Promise.all(sync)) {
      assert.equal(status, 200, JSON.stringify(body));
      if (n % 2) {
        assert.equal(body.message, 'Image resized successfully');
        assert.match(
          body.output_file!,
          new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/[0-9a-f-]{36}_resized\\.jpg\\?`),
        );
        const video = videoOf(await probe(await download(body.output_file!, `sync-${n}.jpg`)));
        assert.deepEqual([video?.width, video?.height], [40 + n, 30]);
      } else {
        assert.equal(body.message, 'Conversion to .mkv successful');
        await expectVideo(640, 360, 2)(await download(body.output_file!, `sync-${n}.mkv`));
      }
    }
    for (const { id, check } of asyncJobs) {
      const job = await waitForJob(api.base, id, (j) => j.status !== 'queued' && j.status !== 'running', {
        ms: 90_000,
      });
      assert.equal(job.status, 'succeeded', `${job.name}: ${JSON.stringify(job.error)}`);
      const url = String(job.result!.output_file ?? (job.result!.outputs as Record<string, string>).episode);
      await check(await download(url, `${id}${path.extname(new URL(url).pathname)}`));
    }
    // The record counts the runs: the killed one and the one that finished on the other worker.
    const client = new Redis(redis.url);
    const record = JSON.parse((await client.get(`mediaflow:job:${slow}`))!) as { attempts: number };
    client.disconnect();
    assert.equal(record.attempts, 2);
    assert.equal((await getJob(api.base, slow)).progress, 100);

    // One webhook per job id, each signed; none for a job twice.
    const verifier = new Webhook(SECRET);
    assert.ok(
      await eventually(
        () => new Set(receiver.deliveries.map((d) => d.headers['webhook-id'])).size >= asyncJobs.length,
        30_000,
      ),
    );
    const byJob = new Map<string, number>();
    for (const delivery of receiver.deliveries) {
      const job = verifier.verify(delivery.body, delivery.headers as Record<string, string>) as {
        job_id: string;
        status: string;
      };
      assert.equal(job.status, 'succeeded');
      byJob.set(job.job_id, (byJob.get(job.job_id) ?? 0) + 1);
    }
    assert.deepEqual([...byJob.keys()].sort(), asyncJobs.map((job) => job.id).sort());
    assert.ok(
      [...byJob.values()].every((count) => count === 1),
      `each webhook arrives once: ${JSON.stringify([...byJob])}`,
    );
  });

  const form = (fields: Record<string, string>) => {
    const body = new FormData();
    for (const [key, value] of Object.entries(fields)) body.append(key, value);
    return body;
  };

  async function download(url: string, name: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `GET ${url}`);
    const file = path.join(dataDir, name);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  const expectVideo = (width: number, height: number, seconds: number) => async (file: string) => {
    const probed = await probe(file);
    assert.deepEqual([videoOf(probed)?.width, videoOf(probed)?.height], [width, height]);
    assert.ok(Math.abs(durationOf(probed) - seconds) < 0.3, `${seconds} s, got ${durationOf(probed)}`);
  };

  const expectAudio = (seconds: number) => async (file: string) => {
    const probed = await probe(file);
    assert.ok(audioOf(probed), 'an audio stream');
    assert.ok(Math.abs(durationOf(probed) - seconds) < 0.3, `${seconds} s, got ${durationOf(probed)}`);
  };
});
