import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { fixture, fixtures } from './helpers/fixtures.js';
import { waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { audioOf, durationOf, probe, videoOf } from './helpers/media.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { startS3, type TestS3 } from './helpers/s3-server.js';
import { startServeProcess, startWorkerProcess, type ServeProcess } from './helpers/serve-process.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';
const CLIP = 'clip-2s-640x360-25fps.mp4';

/**
 * Uploaded files when jobs run elsewhere: one API process running no jobs and one `mediaflow
 * worker` with a data directory of its own (another machine, as far as files go), a real Redis
 * and an S3 server on loopback. The API keeps each uploaded file in the bucket; the worker reads it
 * from there as an own output. Neither data directory keeps a copy.
 */
describe('files instead of URLs on Redis workers with S3 storage', () => {
  let redis: TestRedis;
  let s3: TestS3;
  let apiDir: string;
  let workerDir: string;
  let api: ServeProcess;
  let worker: ServeProcess;
  let bucket: S3Client;

  before(async () => {
    await fixtures(CLIP);
    [redis, s3] = await Promise.all([startRedis(), startS3()]);
    apiDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-upload-api-'));
    workerDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-upload-worker-'));
    const shared = { ...s3.env, MEDIAFLOW_REDIS_URL: redis.url };
    [api, worker] = await Promise.all([
      startServeProcess(apiDir, { ...shared, MEDIAFLOW_WORKERS: '0' }),
      startWorkerProcess(workerDir, shared),
    ]);
    bucket = s3.client();
  });
  after(async () => {
    for (const proc of [api, worker]) if (proc && proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all([api?.child, worker?.child]);
    bucket?.destroy();
    await Promise.all([redis?.close(), s3?.close()]);
    await Promise.all([apiDir, workerDir].map((dir) => dir && rm(dir, { recursive: true, force: true })));
  });

  async function keys(): Promise<string[]> {
    const listed = await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    return (listed.Contents ?? []).map((object) => object.Key!).sort();
  }

  /** Files kept in a data directory's uploads and work folders. */
  const localFiles = async (dir: string) =>
    (
      await Promise.all(
        ['uploads', 'work'].map((sub) =>
          readdir(path.join(dir, sub), { recursive: true, withFileTypes: true }).catch(() => []),
        ),
      )
    )
      .flat()
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);

  let downloads = 0;
  async function download(url: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `GET ${url}`);
    const file = path.join(apiDir, `download-${++downloads}${path.extname(new URL(url).pathname)}`);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  const clipForm = async (field: string, extra: Record<string, string> = {}) => {
    const form = new FormData();
    form.append(field, new Blob([await readFile(await fixture(CLIP))], { type: 'video/mp4' }), 'talk.mp4');
    for (const [key, value] of Object.entries(extra)) form.append(key, value);
    return form;
  };

  it('keeps a file posted to /files/ in the bucket, and a worker elsewhere runs an operation on its URL', async () => {
    const res = await fetch(`${api.base}/files/`, { method: 'POST', body: await clipForm('video') });
    const body = (await res.json()) as { files: Array<{ url: string; size: number }> };
    assert.equal(res.status, 200, JSON.stringify(body));
    const [stored] = body.files;
    assert.match(stored!.url, new RegExp(`^${api.base}/uploads/(${UUID}_upload\\.mp4)$`));
    const name = stored!.url.split('/').pop()!;
    // In the bucket, byte for byte; on neither machine's disk.
    const object = await bucket.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `uploads/${name}` }));
    assert.deepEqual(Buffer.from(await object.Body!.transformToByteArray()), await readFile(await fixture(CLIP)));
    assert.equal(object.ContentType, 'video/mp4');

    const form = new FormData();
    form.append('video_url', stored!.url);
    form.append('format', 'mp3');
    const ran = await fetch(`${api.base}/extract-audio/`, { method: 'POST', body: form });
    const answer = (await ran.json()) as Record<string, string>;
    assert.equal(ran.status, 200, JSON.stringify(answer));
    const probed = await probe(await download(answer.output_file!));
    assert.equal(audioOf(probed)?.codec_name, 'mp3');
    assert.ok(Math.abs(durationOf(probed) - 2) < 0.2, `duration ${durationOf(probed)}`);
    assert.match(worker.output(), /job ended/, 'the worker ran it');
    assert.deepEqual(await localFiles(apiDir), [], 'nothing kept on the API machine');
    assert.deepEqual(await localFiles(workerDir), [], 'nothing kept on the worker machine');
  });

  it('runs an asynchronous job on a file part: the worker reads the part from the bucket', async () => {
    const before = await keys();
    const res = await fetch(`${api.base}/convert-video/`, {
      method: 'POST',
      body: await clipForm('video_url', { format: 'mkv' }),
      headers: { prefer: 'respond-async' },
    });
    const body = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 202, JSON.stringify(body));
    const job = await waitForJob(api.base, body.job_id!, undefined, { ms: 120_000 });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const probed = await probe(await download(String(job.result!.output_file)));
    assert.equal(videoOf(probed)?.width, 640);
    assert.ok(Math.abs(durationOf(probed) - 2) < 0.3);
    const written = (await keys()).filter((key) => !before.includes(key));
    assert.deepEqual(
      written.map((key) => key.replace(new RegExp(UUID), '<id>')).sort(),
      ['uploads/<id>_input_video.mkv', 'uploads/<id>_upload.mp4'],
      'the part and the output, and nothing else',
    );
    assert.deepEqual(await localFiles(apiDir), []);
    assert.deepEqual(await localFiles(workerDir), []);
  });
});
