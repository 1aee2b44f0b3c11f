import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/engine/config.js';
import { MediaflowError } from '../../src/engine/errors.js';
import { builtinRegistry } from '../../src/plugins/index.js';
import { buildServer } from '../../src/server/app.js';
import { after, describe, it } from '../helpers/lifecycle.js';
import { floodConnections, openDescriptors, slowBodies } from '../helpers/flood.js';
import { eventually, startServeProcess, withFileLimit, type ServeProcess } from '../helpers/serve-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const portOf = (serve: ServeProcess) => Number(new URL(serve.base).port);
const health = (serve: ServeProcess) =>
  fetch(`${serve.base}/health`, { signal: AbortSignal.timeout(5000) }).then(
    (res) => res.status,
    () => 0,
  );

/**
 * Connections as an attacker opens them, against a real `mediaflow serve` whose open-file limit is
 * lowered to 1024: an idle flood from one address, the same flood with the connection limits off
 * (so the process really runs out of descriptors), bodies that trickle in, and JSON nested 20,000
 * levels deep. The server must answer /health throughout and after, and never exit.
 */
describe('connections', () => {
  const dirs: string[] = [];
  const serves: ServeProcess[] = [];
  const start = async (env: Record<string, string>) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-conn-'));
    dirs.push(dir);
    const serve = await startServeProcess(dir, { MEDIAFLOW_LOG_LEVEL: 'warn', ...env }, withFileLimit(1024));
    serves.push(serve);
    return serve;
  };
  after(async () => {
    for (const serve of serves) serve.child.kill('SIGKILL');
    await Promise.all(serves.map((serve) => serve.child));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** Holds a 1,100-socket flood from 127.0.0.2 open for 3 s (the pressure checks run every second), then closes it. */
  async function survivesFlood(serve: ServeProcess) {
    const pid = serve.child.pid!;
    const baseline = await openDescriptors(pid);
    const flood = await floodConnections(portOf(serve), 1100);
    assert.ok(flood.connected > 0, 'the flood reached the server');
    for (let i = 0; i < 6; i++) {
      await sleep(500);
      assert.equal(await health(serve), 200, `/health during the flood (${serve.output().slice(-2000)})`);
    }
    await flood.end();
    assert.equal(serve.child.exitCode, null, `the server is still running: ${serve.output().slice(-2000)}`);
    assert.equal(await health(serve), 200, '/health after the flood');
    const settled = await eventually(async () => (await openDescriptors(pid)) <= baseline + 10, 10_000, 200);
    assert.ok(settled, `descriptors back near ${baseline}: ${await openDescriptors(pid)}`);
    return flood;
  }

  it(
    'an idle flood of 1,100 sockets from one client leaves /health answering; ' + 'the client is held to its share',
    async () => {
      const serve = await start({});
      const flood = await survivesFlood(serve);
      // The server closed all but its 64 (the default per client): the client saw the rest closed.
      assert.ok(flood.closed() >= 1100 - 64, `closed by the server: ${flood.closed()}`);
      // The per-client limit closed most of the flood at once, so it never came near the descriptor limit.
      assert.doesNotMatch(serve.output(), /EMFILE/);
    },
  );

  it('with the connection limits off, running out of descriptors does not stop the server', async () => {
    // Limits above what the process may open: accept() and the pressure checks meet EMFILE for real.
    const serve = await start({ MEDIAFLOW_MAX_CONNECTIONS: '5000', MEDIAFLOW_MAX_CONNECTIONS_PER_CLIENT: '0' });
    const pid = serve.child.pid!;
    const baseline = await openDescriptors(pid);
    const flood = await floodConnections(portOf(serve), 1100);
    // The descriptors really ran out: the process holds close to its 1024.
    const exhausted = await eventually(async () => (await openDescriptors(pid)) > 1000, 5000, 100);
    assert.ok(exhausted, `descriptors: ${await openDescriptors(pid)}`);
    await sleep(3000);
    assert.equal(serve.child.exitCode, null, `the server is still running: ${serve.output().slice(-2000)}`);
    await flood.end();
    assert.ok(await eventually(async () => (await health(serve)) === 200, 10_000, 200), '/health after the flood');
    assert.equal(serve.child.exitCode, null);
    const settled = await eventually(async () => (await openDescriptors(pid)) <= baseline + 10, 10_000, 200);
    assert.ok(settled, `descriptors: ${await openDescriptors(pid)}`);
  });

  it('bodies that trickle in are cut off at the request time limit (408 or closed) while /health answers', async () => {
    const serve = await start({ MEDIAFLOW_REQUEST_TIMEOUT: '3s' });
    const slow = slowBodies(portOf(serve), '/resize_image/', 5, 500);
    try {
      for (let i = 0; i < 4; i++) {
        await sleep(500);
        assert.equal(await health(serve), 200, '/health while bodies trickle in');
      }
      // 3 s of limit, plus the server's check interval and some slack for a loaded machine.
      const cut = await eventually(() => slow.results().every((r) => r.closedAfterMs !== undefined), 8000, 100);
      assert.ok(cut, `every slow body was cut off: ${JSON.stringify(slow.results())}`);
      for (const result of slow.results()) {
        assert.ok(result.status === undefined || result.status === 408, `408 or closed: ${JSON.stringify(result)}`);
        assert.ok(result.closedAfterMs! >= 2500, `not before the limit: ${JSON.stringify(result)}`);
      }
    } finally {
      slow.stop();
    }
    assert.equal(await health(serve), 200);
    assert.equal(serve.child.exitCode, null);
  });

  it('JSON nested 20,000 levels deep is a 400 naming the limit, and the server stays up', async () => {
    const serve = await start({});
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    for (const body of [`{"text": "hi", "metadata": ${deep}}`, `{"text": "hi", "words": ${deep}}`]) {
      const res = await fetch(`${serve.base}/generate-subtitles/`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': `deep-${body.length}`,
          prefer: 'respond-async',
        },
        body,
      });
      const answer = (await res.json()) as { error: string };
      assert.equal(res.status, 400, JSON.stringify(answer));
      assert.match(answer.error, /nested at most 32 levels deep/);
    }
    // A body within the limit still works.
    const ok = await fetch(`${serve.base}/generate-subtitles/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'One two three.', metadata: { a: { b: { c: [1, [2, [3]]] } } } }),
    });
    assert.equal(ok.status, 200, await ok.text());
    assert.equal(await health(serve), 200);
  });

  it('a submission that does not come over HTTP is held to the same nesting limit before its fingerprint', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-conn-'));
    dirs.push(dir);
    const config = loadConfig({ MEDIAFLOW_DATA_DIR: dir });
    const { app, jobs } = await buildServer({ config, registry: builtinRegistry(), logger: false });
    try {
      let deep: unknown = [];
      for (let i = 0; i < 20_000; i++) deep = [deep];
      const submission = {
        kind: 'operation' as const,
        name: 'generate-subtitles',
        baseUrl: 'http://127.0.0.1',
        ownBases: [],
        mode: 'async' as const,
      };
      await assert.rejects(
        jobs.submit({ ...submission, fields: { text: 'hi', words: deep }, idempotencyKey: 'deep' }),
        (error) => {
          assert.ok(error instanceof MediaflowError, String(error));
          assert.equal(error.status, 400);
          assert.match(error.message, /nested at most 32 levels deep/);
          return true;
        },
      );
    } finally {
      await app.close();
    }
  });
});
