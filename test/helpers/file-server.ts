import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { FIXTURE_DIR, fixture } from './fixtures.js';

/**
 * A fixture server on 127.0.0.1, the only network the tests use. `/f/<name>` serves a fixture
 * (made on demand); the other routes misbehave on purpose for the hostile-input tests.
 */
export interface FileServer {
  url: (pathname: string) => string;
  /** Requests seen, by path, so tests can tell whether something was fetched. */
  hits: Map<string, number>;
  close: () => Promise<void>;
}

export type Route = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

const CONTENT_TYPES: Record<string, string> = {
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.aac': 'audio/aac',
  '.mp4': 'video/mp4',
  '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo',
  '.webm': 'video/webm',
  '.jpg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.srt': 'application/x-subrip',
  '.vtt': 'text/vtt',
  '.ass': 'text/plain',
  '.txt': 'text/plain',
};

/** The content type a file of this name is served with (none for an unknown extension). */
export const contentTypeOf = (name: string): string | undefined => CONTENT_TYPES[path.extname(name)];

/** Sends a whole file with its length, and its content type when one is given. */
async function sendFile(res: http.ServerResponse, file: string, contentType?: string): Promise<void> {
  const { size } = await stat(file);
  res.writeHead(200, { ...(contentType ? { 'content-type': contentType } : {}), 'content-length': size });
  createReadStream(file).pipe(res);
}

/** A route that serves one file made by a test (outside the fixtures folder). */
export const serveFile =
  (file: string, contentType?: string): Route =>
  (_req, res) =>
    sendFile(res, file, contentType);

async function serveFixture(res: http.ServerResponse, name: string): Promise<void> {
  let file: string;
  try {
    file = await fixture(name);
  } catch {
    res.writeHead(404).end('no such fixture');
    return;
  }
  await sendFile(res, file, contentTypeOf(name) ?? 'application/octet-stream');
}

/** Starts the server; `routes` adds or overrides paths (exact match on pathname). */
export async function startFileServer(routes: Record<string, Route> = {}): Promise<FileServer> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const route = routes[url.pathname];
    const handle = route
      ? route(req, res, url)
      : url.pathname.startsWith('/f/')
        ? serveFixture(res, decodeURIComponent(url.pathname.slice(3)))
        : void res.writeHead(404).end('not found');
    Promise.resolve(handle).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { FIXTURE_DIR };
