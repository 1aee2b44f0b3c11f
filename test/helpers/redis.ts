import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { Redis } from 'ioredis';
import { freePort } from './serve-process.js';

export interface TestRedis {
  url: string;
  /** Stops the server (its data stays, for `start`). */
  stop: () => Promise<void>;
  /** Starts it again on the same port and folder. */
  start: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * Debian's redis-server on a free loopback port, in a temp folder, for one test file. With
 * `appendonly`, what it held survives `stop` and `start`, as a production Redis should.
 */
export async function startRedis(options: { appendonly?: boolean } = {}): Promise<TestRedis> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ResultPromise | undefined;
  const start = async () => {
    child = execa(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        options.appendonly ? 'yes' : 'no',
      ],
      { reject: false },
    );
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // Refused while the server starts: expected, and answered by the loop below.
    client.on('error', () => {});
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await client.connect();
        await client.ping();
        client.disconnect();
        return;
      } catch {
        client.disconnect();
        if (Date.now() > deadline) throw new Error('redis-server did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const stop = async () => {
    child?.kill('SIGTERM');
    await child;
  };
  await start();
  return { url, stop, start, close: async () => (await stop(), await rm(dir, { recursive: true, force: true })) };
}
