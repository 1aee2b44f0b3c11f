/**
 * Runs the address scenarios of netns-cases.ts inside a network namespace that has only loopback,
 * and prints their results as one JSON line (`NETNS-RESULTS {...}`) for netns.test.ts to assert on.
 *
 * Start it only as `unshare -n -m node --import tsx test/security/netns-scenarios.ts` (root), or
 * with `unshare -r -n -m` (unprivileged user namespaces). It refuses to run anywhere else: it binds
 * over /etc/hosts and adds addresses to lo, which must never touch the host.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fixture } from '../helpers/fixtures.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';
import { startDnsStub } from './dns-stub.js';
import { ready } from './hostile.js';
import { CASES, DNS, INTERNAL_V4, INTERNAL_V6, PUBLIC, SERVERS, type ServerName } from './netns-cases.js';

export interface NetnsResult {
  name: string;
  status: number;
  body: Record<string, unknown>;
  healthStatus: number;
  leftovers: string[];
  publicHits: string[];
  internalHits: string[];
  /** Webhook bodies the public hook received (cases with a webhook_url). */
  webhooks: string[];
  dataDir: string;
}

const run = (command: string, args: string[]) =>
  execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function nsLink(pid: string, kind: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return undefined;
  }
}

/** Stops unless this process is in namespaces of its own with nothing but loopback. */
function assertIsolated(): void {
  for (const kind of ['net', 'mnt']) {
    const mine = nsLink('self', kind);
    const init = nsLink('1', kind);
    if (init !== undefined && mine === init)
      throw new Error(`not in a ${kind} namespace of its own: start this script with unshare -n -m`);
  }
  const links = run('ip', ['-o', 'link', 'show'])
    .trim()
    .split('\n')
    .map((line) => line.split(':')[1]?.trim().split('@')[0]);
  if (links.length !== 1 || links[0] !== 'lo')
    throw new Error(`the namespace has interfaces besides lo: ${links.join(', ')}`);
  if (run('ip', ['route', 'show', 'default']).trim() !== '') throw new Error('the namespace has a default route');
}

/** lo up with the pretend-public and private addresses; our own hosts, resolver and NSS files. */
async function setUpNamespace(): Promise<{ ipv6: boolean; cleanup: () => Promise<void> }> {
  run('ip', ['link', 'set', 'lo', 'up']);
  for (const address of [PUBLIC, ...INTERNAL_V4]) run('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo']);
  let ipv6 = true;
  try {
    for (const address of INTERNAL_V6) run('ip', ['-6', 'addr', 'add', `${address}/128`, 'dev', 'lo']);
  } catch {
    ipv6 = false;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-netns-'));
  const files: Record<string, string> = {
    '/etc/hosts': '127.0.0.1 localhost\n::1 localhost\n',
    '/etc/resolv.conf': 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n',
    // Only files and DNS: no NSS module may ask a resolver outside the namespace (nss-resolve talks
    // over a socket file).
    '/etc/nsswitch.conf': 'hosts: files dns\n',
  };
  for (const [target, content] of Object.entries(files)) {
    const source = path.join(dir, path.basename(target));
    await writeFile(source, content);
    if (existsSync(target)) run('mount', ['--bind', source, target]);
    else if (target !== '/etc/resolv.conf') throw new Error(`${target} is missing; cannot replace it in the namespace`);
    // Without /etc/resolv.conf, the C library asks 127.0.0.1, which is the stub anyway.
  }
  return { ipv6, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * One server on port 80 of every address: fixtures and redirects on PUBLIC, a valid PNG (and a count) anywhere else;
 * `POST /hook` takes a webhook on every address.
 */
async function startWorld(ipv6: boolean) {
  const hits = { public: [] as string[], internal: [] as string[], webhooks: [] as string[] };
  const png = await fixture('small-300x200.png');
  const send = async (res: http.ServerResponse, file: string, type: string) => {
    const { size } = await stat(file);
    res.writeHead(200, { 'content-type': type, 'content-length': size });
    createReadStream(file).pipe(res);
  };
  const server = http.createServer((req, res) => {
    const local = (req.socket.localAddress ?? '').replace(/^::ffff:/, '');
    const url = new URL(req.url ?? '/', 'http://x');
    const handle = async () => {
      if (local !== PUBLIC) hits.internal.push(`${local} ${url.pathname}`);
      else hits.public.push(url.pathname + url.search);
      // A hook on any address takes the webhook: an internal one is where MEDIAFLOW_WEBHOOK_ALLOWED_HOSTS points.
      if (url.pathname === '/hook' && req.method === 'POST') {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        hits.webhooks.push(Buffer.concat(chunks).toString('utf8'));
        return void res.writeHead(200).end('ok');
      }
      if (local !== PUBLIC) return send(res, png, 'image/png');
      if (url.pathname === '/redirect')
        return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end('moved');
      const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
      if (hop) return void res.writeHead(302, { location: `/hop/${Number(hop[1]) + 1}` }).end('moved');
      if (url.pathname.startsWith('/f/'))
        return send(res, await fixture(decodeURIComponent(url.pathname.slice(3))), 'image/png');
      res.writeHead(404).end('not found');
    };
    handle().catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 80, host: ipv6 ? '::' : '0.0.0.0', ipv6Only: false }, resolve);
  });
  return {
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function main(): Promise<void> {
  assertIsolated();
  const { ipv6, cleanup } = await setUpNamespace();
  const dns = await startDnsStub(DNS as never);
  const world = await startWorld(ipv6);
  const servers = {} as Record<ServerName, TestServer>;
  for (const [name, env] of Object.entries(SERVERS)) servers[name as ServerName] = await startMediaflow(env);
  await ready(...Object.values(servers));
  const results: NetnsResult[] = [];
  try {
    for (const testCase of CASES) {
      world.hits.public.length = 0;
      world.hits.internal.length = 0;
      world.hits.webhooks.length = 0;
      const server = servers[testCase.server];
      const fields = {
        image_url: testCase.url,
        target_format: 'png',
        ...(testCase.webhook ? { webhook_url: testCase.webhook } : {}),
      };
      const res = await server.post('/convert_image_from_url/', fields);
      // An accepted asynchronous job: wait until it has finished and its webhook has arrived (or 20 s passed).
      const deadline = Date.now() + 20_000;
      while (res.status === 202 && world.hits.webhooks.length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const health = await fetch(`${server.base}/health`);
      await health.arrayBuffer();
      results.push({
        name: testCase.name,
        status: res.status,
        body: res.body,
        healthStatus: health.status,
        leftovers: await server.workLeftovers(),
        publicHits: [...world.hits.public],
        internalHits: [...world.hits.internal],
        webhooks: [...world.hits.webhooks],
        dataDir: server.dataDir,
      });
    }
  } finally {
    for (const server of Object.values(servers)) await server.close();
    await world.close();
    await dns.close();
    await cleanup();
  }
  process.stdout.write(
    `NETNS-RESULTS ${JSON.stringify({ ipv6, queries: Object.fromEntries(dns.queries), results })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`netns scenarios failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
