import { readFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyHttpOptions } from 'fastify';
import type { Config } from '../engine/config.js';

/**
 * Limits on connections, so that no client can take the descriptors the process needs: time
 * limits on the headers, the whole request and idle keep-alive (Node closes a late request with a
 * 408), a cap on connections open at once and a smaller one per client address (more are closed as
 * soon as they are accepted), and a server that logs running out of descriptors instead of dying.
 */

/** The open-file limit assumed where /proc/self/limits cannot be read: Linux's usual soft limit. */
const USUAL_OPEN_FILES = 1024;
/**
 * The fewest descriptors kept back from connections for ffmpeg's pipes and files, outputs, the cache, logs and Redis.
 */
const MIN_RESERVED = 256;
/** Warnings about refused connections are grouped: at most one line per this many ms. */
const WARN_EVERY_MS = 10_000;

/**
 * The process's soft limit on open files (`ulimit -n`), from /proc/self/limits; undefined when unlimited or unknown.
 */
export function openFileLimit(limits = '/proc/self/limits'): number | undefined {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync(limits, 'utf8'))?.[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Connections open at once when MEDIAFLOW_MAX_CONNECTIONS is unset: the open-file limit less a
 * quarter of it (at least 256) for everything else the process opens. 1024 gives 768; 65536, 49152.
 */
export function defaultMaxConnections(openFiles = openFileLimit() ?? USUAL_OPEN_FILES): number {
  return Math.max(32, openFiles - Math.max(MIN_RESERVED, Math.floor(openFiles / 4)));
}

/**
 * Node's time limits, as Fastify options. `requestTimeout` counts from the connection (or the
 * previous response) until the request has fully arrived, body included; the time the answer takes
 * is not counted, so long synchronous jobs are not cut. Connections are checked against the limits
 * a few times per limit, at most once a second (Node's default is every 30 s).
 */
export function timeLimitOptions(config: Config): FastifyHttpOptions<HttpServer> {
  // The headers are part of the request: their limit is at most the whole request's (Node insists).
  const headersTimeout = Math.min(config.headersTimeoutMs, config.requestTimeoutMs || Infinity);
  return {
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(headersTimeout / 4))),
    },
  };
}

/**
 * Uploads received at once: half the descriptors the connection cap leaves to everything else, since
 * each holds a file open besides its connection (at least 16). 1024 open files give 128, so that
 * uploads stalled on every connection cannot take the descriptors ffmpeg and the job store need.
 */
export function uploadsAtOnce(
  config: Pick<Config, 'maxConnections'>,
  openFiles = openFileLimit() ?? USUAL_OPEN_FILES,
): number {
  const connections = config.maxConnections ?? defaultMaxConnections(openFiles);
  return Math.max(16, Math.floor((openFiles - connections) / 2));
}

/** Counts events and logs them at most once per WARN_EVERY_MS, so a flood cannot flood the log too. */
function groupedWarning(log: FastifyBaseLogger, message: string): (details?: Record<string, unknown>) => void {
  let count = 0;
  let last = 0;
  return (details = {}) => {
    count++;
    if (Date.now() - last < WARN_EVERY_MS) return;
    log.warn({ ...details, count }, message);
    count = 0;
    last = Date.now();
  };
}

/**
 * Applies the connection caps to `server` and keeps it alive when descriptors run out: accept()
 * failing with EMFILE is an 'error' event on the server, fatal without a listener.
 */
export function limitConnections(server: HttpServer, config: Config, log: FastifyBaseLogger): void {
  server.maxConnections = config.maxConnections ?? defaultMaxConnections();
  const dropped = groupedWarning(
    log,
    `connections closed: ${server.maxConnections} are open (MEDIAFLOW_MAX_CONNECTIONS)`,
  );
  server.on('drop', () => dropped());

  const perClient = config.maxConnectionsPerClient;
  if (perClient > 0) {
    const open = new Map<string, number>();
    const refused = groupedWarning(
      log,
      `connections closed: the client holds ${perClient} already (MEDIAFLOW_MAX_CONNECTIONS_PER_CLIENT)`,
    );
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress;
      if (address === undefined) return;
      const count = (open.get(address) ?? 0) + 1;
      if (count > perClient) {
        refused({ client: address });
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = open.get(address)! - 1;
        if (left === 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }

  const failed = groupedWarning(
    log,
    'cannot accept connections: out of file descriptors (raise ulimit -n or lower MEDIAFLOW_MAX_CONNECTIONS)',
  );
  // Listening errors (EADDRINUSE) are Fastify's to report; only those after it listens are ours.
  server.once('listening', () =>
    server.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EMFILE' || error.code === 'ENFILE') failed({ code: error.code });
      else log.error({ err: error }, 'server error');
    }),
  );
}
