import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import { loadConfig, type Config } from '../../src/engine/config.js';
import type { Registry } from '../../src/engine/plugins/registry.js';
import { builtinRegistry } from '../../src/plugins/index.js';
import { buildServer } from '../../src/server/app.js';

export interface TestServer {
  base: string;
  dataDir: string;
  config: Config;
  /** POSTs fields as multipart/form-data (docs/architecture.md: the interface's encoding), returns status and JSON. */
  post: (
    route: string,
    fields: Record<string, string>,
    init?: { headers?: Record<string, string> },
  ) => Promise<{ status: number; body: Record<string, string>; headers: Headers }>;
  /** The local path behind an output URL this server returned. */
  pathOf: (url: string) => string;
  /** Files left in the work directory (should be none between requests). */
  workLeftovers: () => Promise<string[]>;
  close: () => Promise<void>;
}

/** Starts a real mediaflow server on a loopback port with a fresh data directory (the built-ins, or `registry`). */
export async function startMediaflow(
  env: Record<string, string> = {},
  registry: Registry = builtinRegistry(),
): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-test-'));
  // The event-loop guard would answer 503 when a loaded CI machine stalls a test; its own behaviour
  // is not under test here.
  const config = loadConfig({
    MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
    MEDIAFLOW_DATA_DIR: dataDir,
    PORT: '0',
    MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0',
    ...env,
  });
  const { app } = await buildServer({ config, registry, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    dataDir,
    config,
    post: async (route, fields, init = {}) => {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.append(key, value);
      const res = await fetch(`${base}${route}`, {
        method: 'POST',
        body: form,
        ...(init.headers ? { headers: init.headers } : {}),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string>, headers: res.headers };
    },
    pathOf: (url) => {
      const prefix = `${base}/uploads/`;
      if (!url.startsWith(prefix)) throw new Error(`${url} is not an upload of ${base}`);
      return path.join(dataDir, 'uploads', decodeURIComponent(url.slice(prefix.length)));
    },
    workLeftovers: async () => readdir(path.join(dataDir, 'work')).catch(() => []),
    close: async () => {
      // Tests end with connections their fetches keep alive; a test server need not wait for them.
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const BIN = path.resolve(import.meta.dirname, '../../bin/mediaflow.js');

/** Runs the real CLI as a child process (built dist/, as a user runs it), with `input` on its standard input. */
export async function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
) {
  const result = await execa('node', [BIN, ...args], {
    reject: false,
    cwd: options.cwd ?? process.cwd(),
    env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '1', ...options.env },
    timeout: 120_000,
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** An argument as sh reads it back: a test's own arguments only, quoted whole. */
const shellWord = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the real CLI on a terminal of its own (util-linux `script` gives it a pseudo-terminal), as a user at a
 * terminal runs it: what it wrote there, standard output and error together, as the terminal received it (status
 * lines redrawn with `\r` and erased with ESC[2K included).
 */
export async function runCliOnTerminal(args: string[], options: { cwd: string; env?: Record<string, string> }) {
  const command = ['node', BIN, ...args].map(shellWord).join(' ');
  const result = await execa('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    reject: false,
    cwd: options.cwd,
    env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '1', COLUMNS: '120', ...options.env },
    timeout: 120_000,
    stdin: 'ignore',
  });
  return { exitCode: result.exitCode ?? -1, terminal: String(result.stdout) };
}
