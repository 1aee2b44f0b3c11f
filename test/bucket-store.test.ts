import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { BucketOutputStore, bucketStoreOf, s3ClientOf } from '../src/engine/storage/bucket-store.js';
import { loadConfig } from '../src/engine/config.js';
import { MediaflowError } from '../src/engine/errors.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { durationOf, probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { startS3, type TestS3 } from './helpers/s3-server.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('the S3 output store (real AWS SDK against s3rver on loopback)', () => {
  let s3: TestS3;
  let dir: string;
  const saved = { ...process.env };
  const configOf = (env: Record<string, string> = {}) => loadConfig({ ...s3.env, MEDIAFLOW_DATA_DIR: dir, ...env });

  before(async () => {
    s3 = await startS3();
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-bucket-'));
    // The SDK reads credentials from the environment (the standard chain), as in production.
    Object.assign(process.env, s3.env);
  });
  after(async () => {
    process.env = saved;
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('streams a file up in parts and serves the same bytes at a presigned URL, with its content type', async () => {
    const config = configOf();
    const store = new BucketOutputStore(s3ClientOf(config), {
      bucket: s3.bucket,
      prefix: '',
      endpoint: s3.endpoint,
      urlTtlSeconds: 600,
      partSize: 5 * 1024 * 1024,
    });
    const data = randomBytes(12 * 1024 * 1024);
    const file = path.join(dir, 'big.mp4');
    await writeFile(file, data);
    await store.publish(file, 'job-1/output.mp4');
    const url = await store.urlFor('job-1/output.mp4', 'http://ignored');
    assert.match(url, new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/job-1/output\\.mp4\\?.*X-Amz-Signature=`));
    assert.match(url, /X-Amz-Expires=600/);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'video/mp4');
    assert.equal(sha256(Buffer.from(await res.arrayBuffer())), sha256(data));
    assert.equal(await store.exists('job-1/output.mp4'), true);
    assert.equal(await store.exists('job-1/missing.mp4'), false);
  });

  it(
    "keeps the seed's key shapes under the prefix, builds public URLs on MEDIAFLOW_S3_PUBLIC_URL, and " +
      'overwrites on a re-run',
    async () => {
      const config = configOf({
        MEDIAFLOW_S3_PREFIX: 'tenant-a/',
        MEDIAFLOW_S3_PUBLIC_URL: 'https://cdn.example.com/media/',
      });
      const store = bucketStoreOf(config)!;
      const file = path.join(dir, 'x.jpg');
      await writeFile(file, 'first');
      await store.publish(file, 'abc_cropped.jpg');
      await writeFile(file, 'second');
      await store.publish(file, 'abc_cropped.jpg');
      assert.equal(
        await store.urlFor('abc_cropped.jpg', 'http://ignored'),
        'https://cdn.example.com/media/tenant-a/uploads/abc_cropped.jpg',
      );
      const listed = await s3ClientOf(config).send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'tenant-a/' }),
      );
      assert.deepEqual(
        listed.Contents?.map((o) => o.Key),
        ['tenant-a/uploads/abc_cropped.jpg'],
        'one object: the re-run replaced it',
      );
      const head = await s3ClientOf(config).send(
        new HeadObjectCommand({ Bucket: s3.bucket, Key: 'tenant-a/uploads/abc_cropped.jpg' }),
      );
      assert.equal(head.ContentLength, 'second'.length);
      assert.equal(head.ContentType, 'image/jpeg');
    },
  );

  it('stores each output with the media type the local server sends it with', async () => {
    // The S3 store kept a table of its own: no .bmp or .tif(f) (sent as application/octet-stream), .ass as text/plain.
    const config = configOf();
    const store = bucketStoreOf(config)!;
    const expected: Record<string, string> = {
      'image.tiff': 'image/tiff',
      'image.tif': 'image/tiff',
      'image.bmp': 'image/bmp',
      'subs.ass': 'text/x-ssa; charset=utf-8',
      'subs.srt': 'application/x-subrip; charset=utf-8',
      'sound.aac': 'audio/x-aac',
      'sound.flac': 'audio/x-flac',
    };
    for (const [name, type] of Object.entries(expected)) {
      const file = path.join(dir, name);
      await writeFile(file, 'x');
      await store.publish(file, `job-types/${name}`);
      const key = `uploads/job-types/${name}`;
      const head = await s3ClientOf(config).send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
      assert.equal(head.ContentType, type, name);
    }
  });

  it('reads an own output back (copyTo), maps its URLs back to store paths, and refuses what is not one', async () => {
    const store = bucketStoreOf(configOf())!;
    const file = path.join(dir, 'subs.srt');
    await writeFile(file, '1\n00:00:00,000 --> 00:00:01,000\nhello\n');
    await store.publish(file, 'job-2/generated_subtitles.srt');
    const copy = path.join(dir, 'copy.srt');
    await store.copyTo('job-2/generated_subtitles.srt', copy);
    assert.equal(await readFile(copy, 'utf8'), '1\n00:00:00,000 --> 00:00:01,000\nhello\n');
    await assert.rejects(
      store.copyTo('job-2/none.srt', path.join(dir, 'none.srt')),
      (error: unknown) => error instanceof MediaflowError && error.status === 400,
    );

    const presigned = await store.urlFor('job-2/generated_subtitles.srt', '');
    assert.equal(store.pathOfUrl(presigned), 'job-2/generated_subtitles.srt');
    assert.equal(
      store.pathOfUrl(`${s3.endpoint}/${s3.bucket}/uploads/job-2/generated_subtitles.srt`),
      undefined,
      'unsigned: not a URL the store gave',
    );
    assert.equal(store.pathOfUrl(`${s3.endpoint}/other-bucket/uploads/a.srt?X-Amz-Signature=x`), undefined);
    assert.equal(
      store.pathOfUrl(`${s3.endpoint}/${s3.bucket}/uploads/a/b/c.srt?X-Amz-Signature=x`),
      undefined,
      'three segments',
    );
    assert.equal(store.pathOfUrl(`${s3.endpoint}/${s3.bucket}/uploads/.partial-1?X-Amz-Signature=x`), undefined);
    const publicStore = bucketStoreOf(configOf({ MEDIAFLOW_S3_PUBLIC_URL: 'https://cdn.example.com' }))!;
    assert.equal(publicStore.pathOfUrl('https://cdn.example.com/uploads/abc_cropped.jpg'), 'abc_cropped.jpg');
    assert.equal(publicStore.pathOfUrl('https://cdn.example.com/elsewhere/abc_cropped.jpg'), undefined);
  });

  it("recognises presigned URLs only on the endpoint's host (path-style, or the bucket's virtual host)", () => {
    const store = bucketStoreOf(configOf())!;
    const endpoint = new URL(s3.endpoint);
    const key = `/${s3.bucket}/uploads/job-2/generated_subtitles.srt?X-Amz-Signature=x`;
    assert.equal(store.pathOfUrl(`${s3.endpoint}${key}`), 'job-2/generated_subtitles.srt');
    // Anything else carrying the same path and a signature is another server's file.
    for (const other of [
      `http://localhost:${endpoint.port}${key}`,
      `http://127.0.0.1:${Number(endpoint.port) + 1}${key}`,
      `https://127.0.0.1:${endpoint.port}${key}`,
      `http://attacker.example${key}`,
      `http://${s3.bucket}.attacker.example/uploads/a.srt?X-Amz-Signature=x`,
    ]) {
      assert.equal(store.pathOfUrl(other), undefined, other);
    }
    const named = bucketStoreOf(configOf({ MEDIAFLOW_S3_ENDPOINT: 'http://localhost:9000' }))!;
    assert.equal(
      named.pathOfUrl(`http://${s3.bucket}.localhost:9000/uploads/a.srt?X-Amz-Signature=x`),
      'a.srt',
      "the bucket's virtual host",
    );
    assert.equal(
      named.pathOfUrl(`http://${s3.bucket}.localhost:9001/uploads/a.srt?X-Amz-Signature=x`),
      undefined,
      'another port',
    );
    // AWS (no endpoint): the regional S3 host, as the SDK signs for it.
    const aws = bucketStoreOf(loadConfig({ MEDIAFLOW_S3_BUCKET: 'media', MEDIAFLOW_S3_REGION: 'eu-west-3' }))!;
    assert.equal(aws.pathOfUrl('https://media.s3.eu-west-3.amazonaws.com/uploads/a.srt?X-Amz-Signature=x'), 'a.srt');
    assert.equal(aws.pathOfUrl('https://s3.eu-west-3.amazonaws.com/media/uploads/a.srt?X-Amz-Signature=x'), 'a.srt');
    assert.equal(
      aws.pathOfUrl('https://media.s3.eu-west-3.amazonaws.com.attacker.example/uploads/a.srt?X-Amz-Signature=x'),
      undefined,
    );
    assert.equal(
      aws.pathOfUrl('https://s3.us-east-1.amazonaws.com/media/uploads/a.srt?X-Amz-Signature=x'),
      undefined,
      'another region',
    );
  });

  it('removes outputs, sweeps only those older than the retention, and checks the bucket', async () => {
    const store = bucketStoreOf(configOf({ MEDIAFLOW_S3_PREFIX: 'sweep/' }))!;
    const file = path.join(dir, 'a.mp3');
    await writeFile(file, 'audio');
    await store.publish(file, 'old/merged_output.mp3');
    await store.publish(file, 'gone_merged.mp4');
    await store.remove(['gone_merged.mp4']);
    assert.equal(await store.exists('gone_merged.mp4'), false);
    assert.equal(await store.sweep(3_600_000), 0, 'nothing is an hour old yet');
    assert.equal(await store.sweep(3_600_000, Date.now() + 2 * 3_600_000), 1, 'two hours on, the output has expired');
    assert.equal(await store.exists('old/merged_output.mp3'), false);
    await store.check();
    const missing = bucketStoreOf(configOf({ MEDIAFLOW_S3_BUCKET: 'no-such-bucket' }))!;
    await assert.rejects(missing.check(), /Storage check of bucket no-such-bucket failed/);
  });

  it('refuses a presigned-URL lifetime over 7 days when the configuration loads', () => {
    assert.throws(
      () => loadConfig({ MEDIAFLOW_S3_URL_TTL: '8d' }),
      /MEDIAFLOW_S3_URL_TTL \(--s3-url-ttl\) to be from 1s to 7d/,
    );
    assert.equal(loadConfig({ MEDIAFLOW_S3_URL_TTL: '7d' }).s3UrlTtlMs, 7 * 86_400_000);
  });
});

describe('a server publishing to S3', () => {
  let s3: TestS3;
  let server: TestServer;
  const saved = { ...process.env };

  before(async () => {
    await fixtures('clip-2s-480x270-black.mp4');
    s3 = await startS3();
    Object.assign(process.env, s3.env);
    // Private addresses refused: own outputs in the bucket must be read from it, never fetched.
    server = await startMediaflow({ ...s3.env, MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' });
  });
  after(async () => {
    await server?.close();
    process.env = saved;
    await s3?.close();
  });

  it(
    'answers with bucket URLs, signs them again at each GET /jobs, ' + 'and chains own outputs from the bucket',
    async () => {
      const store = bucketStoreOf(server.config)!;
      await store.publish(await fixture('clip-2s-480x270-black.mp4'), 'prior_merged.mp4');
      const video = await store.urlFor('prior_merged.mp4', '');

      const subs = await server.post('/generate-subtitles/', { text: 'HELLO FROM THE BUCKET', seconds_per_line: '2' });
      assert.equal(subs.status, 200, JSON.stringify(subs.body));
      assert.match(
        subs.body.subtitle_file_url!,
        new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/[0-9a-f-]{36}/generated_subtitles\\.srt\\?.*X-Amz-Signature=`),
      );
      assert.match(await (await fetch(subs.body.subtitle_file_url!)).text(), /HELLO FROM THE BUCKET/);
      assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')), [], 'nothing is published locally');

      const res = await server.post(
        '/add-subtitles/',
        { video_url: video, subtitle_url: subs.body.subtitle_file_url! },
        { headers: { prefer: 'respond-async' } },
      );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const job = await waitForJob(server.base, res.body.job_id!);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      const url = String(job.result!.output_video);
      const downloaded = path.join(server.dataDir, 'out.mp4');
      await writeFile(downloaded, Buffer.from(await (await fetch(url)).arrayBuffer()));
      const probed = await probe(downloaded);
      assert.equal(videoOf(probed)?.width, 480);
      assert.ok(Math.abs(durationOf(probed) - 2) < 0.15);
      // Each view signs anew (the signature's date moves on).
      await new Promise((r) => setTimeout(r, 1100));
      const again = String((await waitForJob(server.base, job.job_id)).result!.output_video);
      assert.notEqual(again, url);
      assert.equal(store.pathOfUrl(again), store.pathOfUrl(url));
      const health = (await (await fetch(`${server.base}/health`)).json()) as {
        storage: { kind: string; ok: boolean };
      };
      assert.deepEqual(health.storage, { kind: 's3', ok: true });
    },
  );

  it(
    'does not read a lookalike of a bucket URL on another host from the bucket: it is fetched, and loopback is ' +
      'refused',
    async () => {
      const store = bucketStoreOf(server.config)!;
      await store.publish(await fixture('clip-2s-480x270-black.mp4'), 'secret_merged.mp4');
      const endpoint = new URL(s3.endpoint);
      const objectPath = `/${s3.bucket}/uploads/secret_merged.mp4?X-Amz-Signature=forged`;
      for (const lookalike of [
        `http://localhost:${endpoint.port}${objectPath}`,
        `http://127.0.0.1:${Number(endpoint.port) + 1}${objectPath}`,
      ]) {
        const res = await server.post('/convert-video/', { video_url: lookalike, format: 'mp4' });
        // Read from the bucket, this was a 200 with the bucket's video; fetched, the address policy refuses it.
        assert.equal(res.status, 400, `${lookalike}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.error!, /is not allowed: .*(loopback|private|reserved)/i, lookalike);
      }
    },
  );
});
