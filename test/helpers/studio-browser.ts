import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import puppeteer, { type Browser, type ConnectionTransport } from 'puppeteer-core';

/**
 * Headless Chromium (Debian's, never a downloaded one) driven by puppeteer-core, with no network but loopback: it runs
 * in a network namespace of its own (`unshare -n`, as helpers/chromium.ts runs it), where a small relay listens on
 * 127.0.0.1 at the test server's port and passes each connection through a Unix socket (which crosses namespaces) to
 * the server. So the page reaches the server at the very URL the server's answers name, and nothing else: not a
 * packet can leave the machine, whatever the browser tries. It is driven over a pipe (`--remote-debugging-pipe`).
 */

/** Runs inside the namespace: loopback up, the relay listening, then the browser (its pipe on fds 3 and 4). */
const INSIDE = `
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
const [socket, port, binary, ...args] = process.argv.slice(2);
execFileSync('ip', ['link', 'set', 'lo', 'up']);
const relay = net.createServer((client) => {
  const upstream = net.connect(socket);
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
relay.listen(Number(port), '127.0.0.1', () => {
  const browser = spawn(binary, args, { stdio: ['ignore', 'ignore', 'ignore', 3, 4] });
  browser.on('exit', (code) => process.exit(code ?? 1));
});
`;

/** A CDP transport over the browser's pipe: messages end with a NUL byte. */
class PipeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private buffered = '';

  constructor(
    private readonly toBrowser: Writable,
    fromBrowser: Readable,
  ) {
    fromBrowser.setEncoding('utf8');
    fromBrowser.on('data', (chunk: string) => {
      this.buffered += chunk;
      let end: number;
      while ((end = this.buffered.indexOf('\0')) >= 0) {
        const message = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 1);
        this.onmessage?.(message);
      }
    });
    fromBrowser.on('close', () => this.onclose?.());
  }

  send(message: string): void {
    this.toBrowser.write(`${message}\0`);
  }

  close(): void {
    this.toBrowser.end();
  }
}

export interface StudioBrowser {
  browser: Browser;
  close: () => Promise<void>;
}

/** Starts the browser with a fresh profile, able to reach `http://127.0.0.1:<port>` (the test server) and no more. */
export async function launchStudioBrowser(binary: string, port: number): Promise<StudioBrowser> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-studio-browser-'));
  const socket = path.join(dir, 'relay.sock');
  const bridge = net.createServer((client) => {
    const server = net.connect(port, '127.0.0.1');
    client.pipe(server).pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => bridge.listen(socket, resolve));
  await writeFile(path.join(dir, 'inside.mjs'), INSIDE);
  const child = spawn(
    'unshare',
    [
      '-n',
      process.execPath,
      path.join(dir, 'inside.mjs'),
      socket,
      String(port),
      binary,
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--no-default-browser-check',
      '--autoplay-policy=no-user-gesture-required',
      `--user-data-dir=${path.join(dir, 'profile')}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    // A group of its own, so that the browser's processes are stopped with it.
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true },
  );
  const transport = new PipeTransport(child.stdio[3] as Writable, child.stdio[4] as Readable);
  const browser = await puppeteer.connect({ transport, defaultViewport: null });
  return {
    browser,
    close: async () => {
      const gone = new Promise((resolve) =>
        child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve),
      );
      await browser.close().catch(() => {});
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
      await new Promise((resolve) => bridge.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
