/**
 * The connection phases of `npm run load` (LOAD_MODE=connections): a real `mediaflow serve` whose
 * open-file limit is lowered to LOAD_NOFILE (1024), attacked on loopback only, each phase bounded in
 * sockets and seconds:
 * - flood: LOAD_FLOOD (1100) idle sockets from one address (127.0.0.2), held LOAD_HOLD_SECONDS (5);
 * - spread flood: as many from 40 addresses (127.0.0.2-41), each under the per-client limit, so the
 *   total limit is what holds;
 * - slow bodies: LOAD_SLOW (200) sockets from 10 addresses sending a body one byte every 5 s, against
 *   a request time limit lowered to LOAD_REQUEST_TIMEOUT (10s) to keep the run short.
 * - the upload phases of scripts/load-upload-flood.ts: multipart bodies that never end.
 * Throughout, /health is asked from 127.0.0.1 every 250 ms. Reports per phase whether the server
 * stayed up, /health's answers, and its descriptors and memory against the baseline.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { floodConnections, openDescriptors, slowBodies } from '../test/helpers/flood.js';
import { eventually, startServeProcess, withFileLimit, type ServeProcess } from '../test/helpers/serve-process.js';
import { rssMiB } from '../bench/memory.js';
import { noProblems, uploadFloodPhases } from './load-upload-flood.js';

const nofile = Number(process.env.LOAD_NOFILE ?? 1024);
const floodSize = Number(process.env.LOAD_FLOOD ?? 1100);
const holdSeconds = Number(process.env.LOAD_HOLD_SECONDS ?? 5);
const slowCount = Number(process.env.LOAD_SLOW ?? 200);
const requestTimeout = process.env.LOAD_REQUEST_TIMEOUT ?? '10s';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const addresses = (count: number) => Array.from({ length: count }, (_, i) => `127.0.0.${i + 2}`);

/** Asks /health every 250 ms until stopped: how many answered 200, how many did not, the slowest answer. */
function probeHealth(base: string) {
  const seen = { ok: 0, failed: 0, slowestMs: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const status = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5000) }).then(
        (res) => res.status,
        () => 0,
      );
      seen.slowestMs = Math.max(seen.slowestMs, Math.round(performance.now() - started));
      if (status === 200) seen.ok++;
      else seen.failed++;
      await sleep(250);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return seen;
  };
}

/** Descriptors and memory now, and the peak of both while `during` runs. */
async function measured<T>(pid: number, during: () => Promise<T>) {
  const peak = { fds: 0, rssMiB: 0 };
  const sample = async () => {
    peak.fds = Math.max(peak.fds, await openDescriptors(pid));
    peak.rssMiB = Math.max(peak.rssMiB, await rssMiB(pid));
  };
  const timer = setInterval(() => void sample(), 100);
  try {
    return { result: await during(), peak };
  } finally {
    clearInterval(timer);
  }
}

async function phase(serve: ServeProcess, name: string, run: () => Promise<Record<string, unknown>>) {
  const pid = serve.child.pid!;
  const before = { fds: await openDescriptors(pid), rssMiB: Math.round(await rssMiB(pid)) };
  const stopProbe = probeHealth(serve.base);
  const { result, peak } = await measured(pid, run);
  const health = await stopProbe();
  // Closed sockets leave the server's table within a moment; give it a few seconds.
  await eventually(async () => (await openDescriptors(pid)) <= before.fds + 5, 10_000, 200);
  const after = { fds: await openDescriptors(pid), rssMiB: Math.round(await rssMiB(pid)) };
  const alive =
    serve.child.exitCode === null &&
    (await fetch(`${serve.base}/health`).then(
      (r) => r.status,
      () => 0,
    )) === 200;
  return {
    phase: name,
    alive,
    health,
    descriptors: { before: before.fds, peak: peak.fds, after: after.fds },
    rssMiB: { before: before.rssMiB, peak: Math.round(peak.rssMiB), after: after.rssMiB },
    ...result,
  };
}

export async function runConnections(): Promise<boolean> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-load-conn-'));
  const env = { MEDIAFLOW_LOG_LEVEL: 'warn', MEDIAFLOW_REQUEST_TIMEOUT: requestTimeout };
  const serve = await startServeProcess(dataDir, env, withFileLimit(nofile));
  const port = Number(new URL(serve.base).port);
  const reports: Array<Awaited<ReturnType<typeof phase>>> = [];
  let slowStillOpen = 0;
  try {
    for (const [name, from] of [
      ['flood, one address', '127.0.0.2'],
      ['flood, 40 addresses', addresses(40)],
    ] as const) {
      reports.push(
        await phase(serve, name, async () => {
          const flood = await floodConnections(port, floodSize, from);
          await sleep(holdSeconds * 1000);
          const held = flood.open();
          await flood.end();
          return { sockets: floodSize, heldByServer: held, closedByServer: floodSize - held };
        }),
      );
    }
    reports.push(
      await phase(serve, 'slow bodies', async () => {
        const started = Date.now();
        const slow = slowBodies(port, '/resize_image/', slowCount, 5000, addresses(10));
        await eventually(() => slow.results().every((r) => r.closedAfterMs !== undefined), 60_000, 250);
        const results = slow.results();
        slow.stop();
        slowStillOpen = results.filter((r) => r.closedAfterMs === undefined).length;
        const closedAfter = results.flatMap((r) => (r.closedAfterMs === undefined ? [] : [r.closedAfterMs]));
        return {
          sockets: slowCount,
          requestTimeout,
          answered408: results.filter((r) => r.status === 408).length,
          closedWithoutAnswer: results.filter((r) => r.status === undefined && r.closedAfterMs !== undefined).length,
          stillOpen: slowStillOpen,
          lastClosedAfterSeconds: Number((Math.max(0, ...closedAfter) / 1000).toFixed(1)),
          seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
        };
      }),
    );
    reports.push(...(await uploadFloodPhases(serve, dataDir, phase)));
  } finally {
    serve.child.kill('SIGTERM');
    await serve.child;
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ mode: 'connections', nofile, phases: reports }, null, 2));
  const ok =
    reports.every((r) => r.alive && r.descriptors.after <= r.descriptors.before + 5) &&
    slowStillOpen === 0 &&
    noProblems(reports);
  console.log(
    ok
      ? 'the server stayed up; descriptors back to the baseline after every phase'
      : 'the server fell over, or kept descriptors or slow bodies',
  );
  return ok;
}
