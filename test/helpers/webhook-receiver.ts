import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook request as the receiver saw it. */
export interface Delivery {
  at: number;
  path: string;
  /** The request target as sent: path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (the job object). */
  json: Record<string, unknown>;
  /** What the receiver answered (status), or 'hang' / 'reset'. */
  answered: number | 'hang' | 'reset';
}

/**
 * What the receiver does with the n-th request (0-based): a status, a redirect, hang without
 * answering, or drop the connection.
 */
export type Behaviour = number | { redirect: string } | 'hang' | 'reset';

export interface WebhookReceiver {
  url: (pathname?: string) => string;
  deliveries: Delivery[];
  /** Resolves once `count` deliveries have arrived (all paths). */
  received: (count: number, ms?: number) => Promise<Delivery[]>;
  close: () => Promise<void>;
}

/**
 * A real webhook receiver on 127.0.0.1. `plan(path, n)` says how to answer the n-th request to a
 * path (default 200). Every request is recorded, whatever the answer.
 */
export async function startWebhookReceiver(
  plan: (path: string, n: number) => Behaviour = () => 200,
): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const seen = new Map<string, number>();
  const waiters: Array<() => void> = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://receiver').pathname;
      const n = seen.get(path) ?? 0;
      seen.set(path, n + 1);
      const behaviour = plan(path, n);
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // recorded as is
      }
      const answered = typeof behaviour === 'number' ? behaviour : typeof behaviour === 'object' ? 302 : behaviour;
      deliveries.push({ at: Date.now(), path, url: req.url ?? '/', headers: req.headers, body, json, answered });
      for (const wake of waiters.splice(0)) wake();
      if (behaviour === 'hang') hanging.add(res);
      else if (behaviour === 'reset') req.socket.destroy();
      else if (typeof behaviour === 'object') res.writeHead(302, { location: behaviour.redirect }).end();
      else res.writeHead(behaviour, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname = '/hook') => `http://127.0.0.1:${port}${pathname}`,
    deliveries,
    received: async (count, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (deliveries.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} webhook deliveries, got ${deliveries.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return deliveries.slice(0, count);
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
