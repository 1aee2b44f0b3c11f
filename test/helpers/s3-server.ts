import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { freePort } from './serve-process.js';

/** s3rver's fixed credentials: every client of the test server signs with them. */
export const S3_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** A client of the real AWS SDK for the test to look into the bucket with. */
  client: () => S3Client;
  /** Environment for a mediaflow process (or this one) that publishes to the bucket. */
  env: Record<string, string>;
  close: () => Promise<void>;
}

/**
 * An S3 server (s3rver) on 127.0.0.1 with one bucket, in a temp folder; the real AWS SDK talks to
 * it path-style. It is a small implementation, and what it does not do stays untested here: it
 * answers anonymous GETs of private objects (so "unsigned is refused" cannot be shown), checks no
 * checksums, and ignores ACLs, versions and lifecycle rules.
 */
export async function startS3(bucket = 'mediaflow-test'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-s3-'));
  const port = await freePort();
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    client: () =>
      new S3Client({
        endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: {
          accessKeyId: S3_CREDENTIALS.AWS_ACCESS_KEY_ID,
          secretAccessKey: S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
        },
      }),
    env: {
      ...S3_CREDENTIALS,
      // Credentials come from the environment: the SDK must never ask the EC2 metadata address.
      AWS_EC2_METADATA_DISABLED: 'true',
      MEDIAFLOW_S3_BUCKET: bucket,
      MEDIAFLOW_S3_ENDPOINT: endpoint,
      MEDIAFLOW_S3_REGION: 'us-east-1',
      MEDIAFLOW_S3_FORCE_PATH_STYLE: '1',
    },
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
