import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '../config.js';
import { MediaflowError, paramError } from '../errors.js';
import { contentTypeOf } from './media-types.js';
import type { OutputStore } from './storage.js';

/** The settings of a bucket store. */
export interface BucketSettings {
  bucket: string;
  /** Before every key: keys are `<prefix>uploads/<relative path>`, the seed's shapes. */
  prefix: string;
  /** Base of public object URLs; none: presigned GET URLs. */
  publicUrl?: string;
  /** The S3 API's address, where presigned URLs point (`regionalEndpoint` for AWS). */
  endpoint: string;
  urlTtlSeconds: number;
  /** Bytes per uploaded part (S3's minimum is 5 MiB). */
  partSize?: number;
}

const regionOf = (config: Config) => config.s3Region ?? process.env.AWS_REGION ?? 'us-east-1';

/** The S3 API's address: MEDIAFLOW_S3_ENDPOINT, else AWS's in the bucket's region (as the SDK addresses it). */
const endpointOf = (config: Config) => config.s3Endpoint ?? `https://s3.${regionOf(config)}.amazonaws.com`;

/** The S3 client of the configuration: credentials from the standard AWS chain (environment, profile, role). */
export function s3ClientOf(config: Config): S3Client {
  const options: S3ClientConfig = {
    region: regionOf(config),
    forcePathStyle: config.s3ForcePathStyle,
    // Checksums only where S3 requires them: S3-compatible servers (MinIO, R2, s3rver) do not all
    // accept the SDK's default CRC32 trailers on every upload.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(config.s3Endpoint ? { endpoint: config.s3Endpoint } : {}),
  };
  return new S3Client(options);
}

/** Why a bucket call failed, without credentials or internals. */
function storageError(action: string, error: unknown): MediaflowError {
  const name = (error as { name?: string }).name ?? 'error';
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return new MediaflowError(
    'MF_ERR_INTERNAL',
    `Storage ${action} failed: ${name}${status ? ` (HTTP ${status})` : ''}`,
    { cause: error },
  );
}

const isMissing = (error: unknown) => {
  const name = (error as { name?: string }).name;
  return (
    name === 'NotFound' ||
    name === 'NoSuchKey' ||
    (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
  );
};

/**
 * Outputs in an S3-compatible bucket (AWS S3, MinIO, R2, Spaces), for workers on many machines.
 * Keys keep the local paths' shapes under `<prefix>uploads/`. Uploads are streamed in parts and
 * an object appears whole or not at all; a re-run writes the same key again. No ACL is ever
 * set, so buckets with ACLs disabled work: URLs are presigned at each view, or built on a
 * public base (a public bucket or a CDN).
 */
export class BucketOutputStore implements OutputStore {
  readonly servedHere = false;

  constructor(
    private readonly client: S3Client,
    private readonly settings: BucketSettings,
  ) {}

  /** The object key of a store path. */
  keyOf(relativePath: string): string {
    return `${this.settings.prefix}uploads/${relativePath}`;
  }

  async publish(file: string, relativePath: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.settings.bucket,
        Key: this.keyOf(relativePath),
        Body: createReadStream(file),
        ContentType: contentTypeOf(relativePath),
      },
      partSize: this.settings.partSize ?? 8 * 1024 * 1024,
      queueSize: 2,
      // A failed multi-part upload is aborted, so no half-made object or stray parts stay behind.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw storageError('upload', error);
    }
  }

  async exists(relativePath: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.keyOf(relativePath) }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw storageError('look-up', error);
    }
  }

  async remove(relativePaths: readonly string[]): Promise<void> {
    if (relativePaths.length === 0) return;
    try {
      await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.settings.bucket,
          Delete: { Objects: relativePaths.map((relative) => ({ Key: this.keyOf(relative) })), Quiet: true },
        }),
      );
    } catch (error) {
      throw storageError('delete', error);
    }
  }

  async copyTo(relativePath: string, target: string): Promise<void> {
    let body: Readable;
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.keyOf(relativePath) }),
      );
      body = answer.Body as Readable;
    } catch (error) {
      if (isMissing(error))
        throw paramError(`Input ${relativePath} is not a published output of this server (it may have expired)`);
      throw storageError('download', error);
    }
    try {
      await pipeline(body, createWriteStream(target));
    } catch (error) {
      await rm(target, { force: true });
      throw storageError('download', error);
    }
  }

  async urlFor(relativePath: string, _base: string): Promise<string> {
    const key = this.keyOf(relativePath);
    if (this.settings.publicUrl)
      return `${this.settings.publicUrl}/${key.split('/').map(encodeURIComponent).join('/')}`;
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }), {
      expiresIn: this.settings.urlTtlSeconds,
    });
  }

  /**
   * The store path behind a URL this store handed out (public or presigned), or undefined: own
   * results passed back as inputs are read from the bucket, not fetched.
   */
  pathOfUrl(source: string): string | undefined {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      return undefined;
    }
    const uploads = `${this.settings.prefix}uploads/`;
    const candidates = [] as string[];
    if (this.settings.publicUrl) {
      const base = new URL(`${this.settings.publicUrl}/`);
      if (url.origin === base.origin && url.pathname.startsWith(base.pathname))
        candidates.push(url.pathname.slice(base.pathname.length));
    }
    // Presigned URLs: path-style `<endpoint>/<bucket>/<key>` or virtual-hosted `<bucket>.<endpoint host>/<key>`.
    // Only on the endpoint's host: a lookalike path elsewhere is another server's file, fetched
    // (or refused) by the address policy like any URL, never answered from the bucket.
    const endpoint = new URL(this.settings.endpoint);
    if (url.searchParams.has('X-Amz-Signature') && url.protocol === endpoint.protocol) {
      const pathStyle = `/${this.settings.bucket}/`;
      if (url.host === endpoint.host && url.pathname.startsWith(pathStyle))
        candidates.push(url.pathname.slice(pathStyle.length));
      if (url.host === `${this.settings.bucket}.${endpoint.host}`) candidates.push(url.pathname.slice(1));
    }
    for (const encoded of candidates) {
      let key: string;
      try {
        key = encoded
          .split('/')
          .map((segment) => decodeURIComponent(segment))
          .join('/');
      } catch {
        return undefined;
      }
      if (!key.startsWith(uploads)) continue;
      const relative = key.slice(uploads.length).split('/');
      // Only an output's shape: one or two plain segments, as the local store's URLs.
      if (relative.length > 2 || relative.some((segment) => segment === '' || segment.startsWith('.')))
        return undefined;
      return relative.join('/');
    }
    return undefined;
  }

  async sweep(maxAgeMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.settings.bucket,
          Prefix: `${this.settings.prefix}uploads/`,
          ContinuationToken: token,
        }),
      );
      const expired = (page.Contents ?? []).filter(
        (object) => object.Key && object.LastModified && now - object.LastModified.getTime() > maxAgeMs,
      );
      if (expired.length > 0) {
        await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.settings.bucket,
            Delete: { Objects: expired.map((object) => ({ Key: object.Key! })), Quiet: true },
          }),
        );
        removed += expired.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return removed;
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (error) {
      throw storageError(`check of bucket ${this.settings.bucket}`, error);
    }
  }
}

/** The bucket store of the configuration, when MEDIAFLOW_S3_BUCKET is set. */
export function bucketStoreOf(config: Config): BucketOutputStore | undefined {
  if (!config.s3Bucket) return undefined;
  return new BucketOutputStore(s3ClientOf(config), {
    bucket: config.s3Bucket,
    prefix: config.s3Prefix,
    endpoint: endpointOf(config),
    urlTtlSeconds: Math.round(config.s3UrlTtlMs / 1000),
    ...(config.s3PublicUrl ? { publicUrl: config.s3PublicUrl } : {}),
  });
}
