import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import { resultPaths, type JobRecord } from '../src/jobs/job.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { audioOf, durationOf, probe, videoOf } from './helpers/media.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { startS3, type TestS3 } from './helpers/s3-server.js';
import { eventually, startServeProcess, startWorkerProcess, type ServeProcess } from './helpers/serve-process.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';
const CLIP = '/f/clip-3s-640x360-25fps.mp4';

/** Three frames of the clip, each made a 64x48 thumbnail: a several-file step feeding `each`. */
const THUMBNAILS_PIPELINE = [
  'name: thumbnails',
  'description: Three frames of a clip, each made a 64x48 thumbnail',
  'inputs:',
  '  clip: url',
  'steps:',
  '  frames:',
  '    op: extract-frames',
  '    with: { video_url: "{{ inputs.clip }}", count: 3 }',
  '  small:',
  '    op: resize-image',
  '    each: "{{ steps.frames.output }}"',
  '    with: { image_url: "{{ item }}", width: 64, height: 48 }',
  'results:',
  '  small: "{{ steps.small.output }}"',
  '',
].join('\n');

/** One toolbox request: its route, its fields, and what its success body must say. */
interface Case {
  route: string;
  fields: (url: (file: string) => string) => Record<string, string>;
  /** Checks a success body (the synchronous answer, or an asynchronous job's result) and the files it names. */
  check: (body: Record<string, unknown>, download: (url: string) => Promise<string>) => Promise<void>;
}

/** Codec and pixel size of a picture or video file. */
const pictureOf = async (file: string) => {
  const video = videoOf(await probe(file));
  return { codec: video?.codec_name, width: video?.width, height: video?.height };
};

const near = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 0.2, `${what}: ${expected} s expected, got ${actual}`);

/** Asserts a bucket URL of the several-file answer `body` per name, in order, and returns them. */
function filesOf(body: Record<string, unknown>, names: string[], s3: () => TestS3): string[] {
  const urls = body.output_files as string[];
  assert.ok(Array.isArray(urls), `output_files: ${JSON.stringify(body)}`);
  assert.equal(urls.length, names.length, JSON.stringify(urls));
  assert.equal(body.output_file, urls[0], 'output_file is the first of output_files');
  const { endpoint, bucket } = s3();
  urls.forEach((url, n) => assert.match(url, new RegExp(`^${endpoint}/${bucket}/uploads/${UUID}/${names[n]}\\?`)));
  assert.equal(new Set(urls.map((url) => path.dirname(new URL(url).pathname))).size, 1, 'one folder per job');
  return urls;
}

/**
 * Issue 20's toolbox on the scaled-out set-up: one API process running no jobs, one `mediaflow
 * worker`, a real Redis and an S3 server on loopback. Each operation runs synchronously and
 * asynchronously; what it answers must be in the bucket, exactly (no more objects, no fewer), and
 * probe right once downloaded from the bucket URLs.
 */
describe('the editing toolbox on Redis workers with S3 outputs', () => {
  let redis: TestRedis;
  let s3: TestS3;
  let files: FileServer;
  let dataDir: string;
  let api: ServeProcess;
  let worker: ServeProcess;
  let bucket: S3Client;
  let records: Redis;
  const extra: ServeProcess[] = [];
  /** The synchronous answers' metadata, which the asynchronous job's result must equal. */
  const metadataSeen: unknown[] = [];

  const CASES: Record<string, Case> = {
    'extract-frames count=3': {
      route: '/extract-frames/',
      fields: (url) => ({ video_url: url(CLIP), count: '3' }),
      check: async (body, download) => {
        assert.equal(body.message, 'Frames extracted successfully');
        const urls = filesOf(body, ['frame_001\\.jpg', 'frame_002\\.jpg', 'frame_003\\.jpg'], () => s3);
        for (const url of urls)
          assert.deepEqual(await pictureOf(await download(url)), { codec: 'mjpeg', width: 640, height: 360 });
      },
    },
    'extract-frames sheet=true': {
      route: '/extract-frames/',
      fields: (url) => ({ video_url: url(CLIP), count: '3', sheet: 'true', width: '160', format: 'png' }),
      check: async (body, download) => {
        const [sheet] = filesOf(body, ['sheet\\.png'], () => s3);
        // Three 160x90 frames across (the columns are at most the frames), one row.
        assert.deepEqual(await pictureOf(await download(sheet!)), { codec: 'png', width: 480, height: 90 });
      },
    },
    'media-metadata': {
      route: '/media-metadata/',
      fields: (url) => ({ media_url: url(CLIP) }),
      check: async (body) => {
        assert.deepEqual(Object.keys(body).sort(), ['message', 'metadata']);
        assert.equal(body.message, 'Metadata read successfully');
        const metadata = body.metadata as { duration: number; streams: Array<Record<string, unknown>> };
        near(metadata.duration, 3, 'duration');
        assert.deepEqual(
          metadata.streams.map(({ type, codec, width, height }) => ({ type, codec, width, height })),
          [
            { type: 'video', codec: 'h264', width: 640, height: 360 },
            { type: 'audio', codec: 'aac', width: undefined, height: undefined },
          ],
        );
        metadataSeen.push(body.metadata);
        assert.deepEqual(metadataSeen.at(-1), metadataSeen[0], 'the same metadata either way');
      },
    },
    'extract-audio': {
      route: '/extract-audio/',
      fields: (url) => ({ video_url: url(CLIP), format: 'mp3' }),
      check: async (body, download) => {
        assert.deepEqual(Object.keys(body).sort(), ['message', 'output_file']);
        const url = String(body.output_file);
        assert.match(url, new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/${UUID}/audio\\.mp3\\?`));
        const probed = await probe(await download(url));
        assert.equal(audioOf(probed)?.codec_name, 'mp3');
        assert.equal(videoOf(probed), undefined, 'no picture');
        near(durationOf(probed), 3, 'audio');
      },
    },
    'change-speed': {
      route: '/change-speed/',
      fields: (url) => ({ media_url: url(CLIP), speed: '2' }),
      check: async (body, download) => {
        assert.deepEqual(Object.keys(body).sort(), ['message', 'output_file']);
        const url = String(body.output_file);
        assert.match(url, new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/${UUID}/speed\\.mp4\\?`));
        const file = await download(url);
        const probed = await probe(file);
        assert.deepEqual(await pictureOf(file), { codec: 'h264', width: 640, height: 360 });
        assert.equal(audioOf(probed)?.codec_name, 'aac');
        near(durationOf(probed), 1.5, 'twice as fast');
      },
    },
    'pipeline: extract-frames, then each frame resized': {
      route: '/pipelines/thumbnails/',
      fields: (url) => ({ clip: url(CLIP) }),
      check: async (body, download) => {
        const urls = (body.outputs as Record<string, string[]>).small;
        assert.ok(Array.isArray(urls) && urls.length === 3, JSON.stringify(body));
        urls.forEach((url, n) =>
          assert.match(url, new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/${UUID}/small-${n + 1}\\.jpg\\?`)),
        );
        for (const url of urls)
          assert.deepEqual(await pictureOf(await download(url)), { codec: 'mjpeg', width: 64, height: 48 });
      },
    },
  };

  before(async () => {
    await fixtures(path.basename(CLIP));
    [redis, s3, files] = await Promise.all([startRedis(), startS3(), startFileServer()]);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-toolbox-scale-'));
    const pipelines = path.join(dataDir, 'pipelines');
    await mkdir(pipelines);
    await writeFile(path.join(pipelines, 'thumbnails.yaml'), THUMBNAILS_PIPELINE);
    const shared = { ...s3.env, MEDIAFLOW_REDIS_URL: redis.url, MEDIAFLOW_PIPELINES_DIR: pipelines };
    [api, worker] = await Promise.all([
      startServeProcess(dataDir, { ...shared, MEDIAFLOW_WORKERS: '0' }),
      startWorkerProcess(dataDir, { ...shared, MEDIAFLOW_CONCURRENCY: '2' }),
    ]);
    bucket = s3.client();
    records = new Redis(redis.url);
  });
  after(async () => {
    const procs = [api, worker, ...extra];
    for (const proc of procs) if (proc && proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all(procs.map((proc) => proc?.child));
    records?.disconnect();
    bucket?.destroy();
    await Promise.all([redis?.close(), s3?.close(), files?.close()]);
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Every key in the bucket. */
  async function keys(): Promise<string[]> {
    const listed = await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    return (listed.Contents ?? []).map((object) => object.Key!).sort();
  }

  /** The bucket key behind a presigned URL (path-style). */
  const keyOf = (url: string) => decodeURIComponent(new URL(url).pathname).slice(`/${s3.bucket}/`.length);

  /** Every URL of a success body: its files, or a pipeline's outputs. */
  const urlsOf = (body: Record<string, unknown>): string[] =>
    body.outputs
      ? Object.values(body.outputs as Record<string, string | string[]>).flat()
      : ((body.output_files as string[] | undefined) ?? (body.output_file ? [String(body.output_file)] : []));

  let downloads = 0;
  async function download(url: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `GET ${url}`);
    const file = path.join(dataDir, `download-${++downloads}${path.extname(new URL(url).pathname)}`);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  /** The several-file job of the count=3 case, for the retention case at the end. */
  let framesJob: { id: string; keys: string[] } | undefined;

  for (const [name, test] of Object.entries(CASES)) {
    it(`${name}, synchronously: its files in the bucket, and only those`, async () => {
      const before = await keys();
      const form = new FormData();
      for (const [field, value] of Object.entries(test.fields((file) => files.url(file)))) form.append(field, value);
      const res = await fetch(`${api.base}${test.route}`, { method: 'POST', body: form });
      const body = (await res.json()) as Record<string, unknown>;
      // A route that is missing (404) or refuses the fields fails here: nothing is skipped.
      assert.equal(res.status, 200, `${test.route}: ${JSON.stringify(body)}`);
      await test.check(body, download);
      const written = (await keys()).filter((key) => !before.includes(key));
      assert.deepEqual(written, urlsOf(body).map(keyOf).sort(), 'the objects written are the ones answered');
    });

    it(`${name}, asynchronously: the job's result and record name every object written`, async () => {
      const before = await keys();
      const id = await submitJob(
        api.base,
        test.route,
        test.fields((file) => files.url(file)),
        {
          prefer: 'respond-async',
        },
      );
      const job = await waitForJob(api.base, id, undefined, { ms: 45_000 });
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      await test.check(job.result!, download);
      const written = (await keys()).filter((key) => !before.includes(key));
      assert.deepEqual(written, urlsOf(job.result!).map(keyOf).sort(), 'the objects written are the ones answered');
      // The stored record names the same objects: what deleting it with its outputs removes.
      const record = JSON.parse((await records.get(`mediaflow:job:${id}`))!) as JobRecord;
      assert.deepEqual(
        resultPaths(record.result)
          .map((file) => `uploads/${file}`)
          .sort(),
        written,
      );
      if (test.route === '/extract-frames/' && written.length === 3) framesJob = { id, keys: written };
    });
  }

  it("expires a several-file job's objects all together with MEDIAFLOW_RETENTION", async () => {
    assert.ok(framesJob, 'the count=3 job ran');
    const present = await keys();
    for (const key of framesJob.keys) assert.ok(present.includes(key), `${key} is there before the sweep`);
    // Everything above is at least a second old: an API with a retention of 1 s sweeps it as it starts.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const sweeper = await startServeProcess(dataDir, {
      ...s3.env,
      MEDIAFLOW_REDIS_URL: redis.url,
      MEDIAFLOW_WORKERS: '0',
      MEDIAFLOW_RETENTION: '1s',
    });
    extra.push(sweeper);
    assert.ok(
      await eventually(() => sweeper.output().includes('deleted expired outputs and job records'), 20_000),
      sweeper.output(),
    );
    const left = await keys();
    assert.deepEqual(
      framesJob.keys.filter((key) => left.includes(key)),
      [],
      'no frame of the job outlives the others',
    );
    assert.deepEqual(left, [], 'every output of every job has expired');
  });
});
