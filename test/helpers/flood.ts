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
