import { readdir } from 'node:fs/promises';
import net from 'node:net';

/**
 * Hostile connection patterns against a server on loopback, shared by the tests and `npm run load`:
 * many idle sockets from one address, and bodies sent a byte at a time.
 */

/** Descriptors a process holds open, counted in /proc/<pid>/fd (Linux); -1 once it is gone. */
export async function openDescriptors(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`).catch(() => null))?.length ?? -1;
}

export interface Flood {
  /** Sockets the server accepted and still holds open. */
  open: () => number;
  /** Sockets that connected at some point. */
  connected: number;
  /** Sockets refused, reset or closed by the server. */
  closed: () => number;
  end: () => Promise<void>;
}

/** The `i`-th of the loopback addresses the sockets come from, taken in turn. */
const fromOf = (from: string | string[], i: number) => (Array.isArray(from) ? from[i % from.length]! : from);

/**
 * Opens `count` idle sockets to `port` from `from` (other loopback addresses than the server's
 * 127.0.0.1; one address is one client to a per-client limit, several are taken in turn), waiting
 * until each connected or failed. Nothing is sent.
 */
export async function floodConnections(
  port: number,
  count: number,
  from: string | string[] = '127.0.0.2',
): Promise<Flood> {
  const sockets: net.Socket[] = [];
  let connected = 0;
  let closed = 0;
  await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const socket = net.connect({ host: '127.0.0.1', port, localAddress: fromOf(from, i) });
      sockets.push(socket);
      socket.on('error', () => {});
      socket.once('close', () => closed++);
      return new Promise<void>((resolve) => {
        socket.once('connect', () => {
          connected++;
          resolve();
        });
        socket.once('close', () => resolve());
      });
    }),
  );
  return {
    open: () => sockets.filter((s) => !s.destroyed && !s.readableEnded).length,
    connected,
    closed: () => closed,
    end: async () => {
      const closing = sockets
        .filter((s) => !s.destroyed)
        .map((s) => new Promise<void>((r) => s.once('close', () => r())));
      sockets.forEach((s) => s.destroy());
      await Promise.all(closing);
    },
  };
}

export interface SlowBody {
  /** Per socket: what the server answered (its status line) and when the socket closed, in ms after the start. */
  results: () => Array<{ status?: number; closedAfterMs?: number }>;
  stop: () => void;
}

/**
 * `count` sockets each send a POST whose declared body of 10,000 bytes arrives one byte every
 * `everyMs`: a request that never finishes arriving unless the server sets it a time limit.
 */
export function slowBodies(
  port: number,
  path: string,
  count: number,
  everyMs: number,
  from: string | string[] = '127.0.0.2',
): SlowBody {
  const started = Date.now();
  const results: Array<{ status?: number; closedAfterMs?: number }> = [];
  const timers: NodeJS.Timeout[] = [];
  const sockets = Array.from({ length: count }, (_, i) => {
    const result: { status?: number; closedAfterMs?: number } = {};
    results[i] = result;
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: fromOf(from, i) });
    socket.on('error', () => {});
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      if (status) result.status = Number(status);
    });
    socket.once('close', () => (result.closedAfterMs = Date.now() - started));
    socket.once('connect', () => {
      const head =
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` + `application/json\r\nContent-Length: 10000`;
      socket.write(`${head}\r\n\r\n{`);
      timers.push(setInterval(() => socket.writable && socket.write(' '), everyMs));
    });
    return socket;
  });
  return {
    results: () => results,
    stop: () => {
      timers.forEach(clearInterval);
      sockets.forEach((s) => s.destroy());
    },
  };
}

/** A multipart request on a socket, as `unterminatedUploads` and `stalledUpload` write it. */
function multipartHead(path: string, boundary: string, contentLength: number): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
    `Content-Length: ${contentLength}\r\n\r\n`
  );
}

/** The opening of a file part named `field` and `bytes` of its content (never a whole part: no boundary after it). */
function openFilePart(boundary: string, field: string, bytes: number): Buffer {
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="clip.mp4"\r\n` +
    'Content-Type: video/mp4\r\n\r\n';
  return Buffer.concat([Buffer.from(head), Buffer.alloc(bytes, 0x61)]);
}

/** What one request on a socket got: the status it was answered with, and when (ms after it was sent). */
export interface Answered {
  status?: number;
  afterMs?: number;
}

/** Resolves with the status line's code once the socket has it, or without one when it closes or `waitMs` pass. */
function answerOf(socket: net.Socket, waitMs: number): Promise<Answered> {
  const sent = Date.now();
  return new Promise((resolve) => {
    let text = '';
    const done = (answer: Answered) => {
      clearTimeout(timer);
      resolve(answer);
    };
    const timer = setTimeout(() => done({}), waitMs);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      if (status) done({ status: Number(status), afterMs: Date.now() - sent });
    });
    socket.once('close', () => done({}));
  });
}

/**
 * `count` requests, `concurrency` at a time from `from`, each a multipart body (a file part of
 * `bytes`, no closing boundary) sent whole with its exact Content-Length, to `paths` in turn.
 * Each socket waits up to `waitMs` for an answer, then closes. Returns the answers in order.
 */
export async function unterminatedUploads(
  port: number,
  options: {
    count: number;
    paths: string[];
    /** Bytes of the file part's content: under 4 KB by default (2,048). */
    bytes?: number;
    field?: string;
    concurrency?: number;
    waitMs?: number;
    from?: string;
  },
): Promise<Answered[]> {
  const { count, paths, bytes = 2048, field = 'video_url', concurrency = 50, waitMs = 5000 } = options;
  const from = options.from ?? '127.0.0.2';
  const answers: Answered[] = [];
  let next = 0;
  const one = async (i: number) => {
    const boundary = `unterminated-${i}`;
    const body = openFilePart(boundary, field, bytes);
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
    socket.on('error', () => {});
    await new Promise<void>((resolve) => {
      socket.once('connect', () => resolve());
      socket.once('close', () => resolve());
    });
    const answer = answerOf(socket, waitMs);
    socket.write(multipartHead(paths[i % paths.length]!, boundary, body.length));
    socket.write(body);
    answers[i] = await answer;
    socket.destroy();
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await one(next++);
    }),
  );
  return answers;
}

export interface StalledUpload {
  /** The server's answer, once it came (ms after the last byte sent). */
  answer: Promise<Answered>;
  /** Sends `bytes` more of the file part. */
  send: (bytes: number) => void;
  /** Whether the connection has closed. */
  closed: () => boolean;
  close: () => void;
}

/**
 * A multipart upload to `path` that declares a body of `declared` bytes and sends only the opening
 * of its file part (`bytes` of content), then waits: a client that keeps its connection but sends
 * nothing more, unless told to (`send`). From `from` (a loopback address) when given.
 */
export async function stalledUpload(
  port: number,
  path: string,
  options: { bytes: number; declared: number; field?: string; from?: string },
): Promise<StalledUpload> {
  const boundary = 'stalled-upload';
  const socket = net.connect({ host: '127.0.0.1', port, ...(options.from ? { localAddress: options.from } : {}) });
  socket.on('error', () => {});
  await new Promise<void>((resolve) => {
    socket.once('connect', () => resolve());
    socket.once('close', () => resolve());
  });
  socket.write(multipartHead(path, boundary, options.declared));
  socket.write(openFilePart(boundary, options.field ?? 'video_url', options.bytes));
  let lastSent = Date.now();
  const answer = answerOf(socket, 120_000).then((answered) =>
    answered.status === undefined ? answered : { ...answered, afterMs: Date.now() - lastSent },
  );
  return {
    answer,
    send: (bytes) => {
      lastSent = Date.now();
      socket.write(Buffer.alloc(bytes, 0x62));
    },
    closed: () => socket.destroyed || socket.readableEnded,
    close: () => socket.destroy(),
  };
}
