import path from 'node:path';
import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/registry.js';
import { LocalOutputStore, Workspaces } from '../engine/storage.js';
import { resolveBinaries } from '../engine/binaries.js';
import { buildServer } from './app.js';

/** How long running jobs may finish after SIGTERM/SIGINT before they are killed. */
const SHUTDOWN_GRACE_MS = 30_000;
/**
 * Running jobs get this much of it: stopping one takes up to 2 s more (ffmpeg gets SIGTERM, then
 * SIGKILL 2 s later, and a slideshow ignores SIGTERM while it repeats a still image), and its hand-back
 * to the queue must be stored before the deadline ends the process.
 */
const JOB_GRACE_MS = SHUTDOWN_GRACE_MS - 5_000;

/**
 * Starts the server for real: finds ffmpeg (exiting with a hint when there is none), clears what
 * a killed predecessor left, sweeps old outputs, listens, and shuts down gracefully on signals.
 */
export async function startServer(config: Config, registry: Registry): Promise<void> {
  const binaries = resolveBinaries();
  const workspaces = new Workspaces(path.join(config.dataDir, 'work'));
  const store = new LocalOutputStore(path.join(config.dataDir, 'uploads'));
  const leftovers = (await workspaces.clearLeftovers()) + (await store.clearLeftovers());
  const { app, jobs } = await buildServer({ config, registry, binaries, logger: { level: config.logLevel } });
  if (leftovers > 0) app.log.warn({ leftovers }, 'removed work left by an earlier run');

  let sweeper: NodeJS.Timeout | undefined;
  if (config.retentionMs > 0) {
    // Outputs by their age, and job records (with their idempotency keys) with them.
    const sweep = () =>
      Promise.all([store.sweep(config.retentionMs), jobs.sweep()]).then(
        ([removed, records]) => (removed > 0 || records > 0) && app.log.info({ removed, records }, 'deleted expired outputs and job records'),
        (error: unknown) => app.log.error({ err: error }, 'sweeping outputs failed'),
      );
    void sweep();
    sweeper = setInterval(sweep, Math.min(config.retentionMs, 3_600_000) / 4).unref();
  }

  let stopping = false;
  app.addHook('onSend', async (_request, reply) => {
    if (stopping) void reply.header('connection', 'close');
  });
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new requests, finishing running jobs');
    // Keep-alive connections would hold the server open after their last response: close each
    // one as soon as it falls idle.
    app.server.closeIdleConnections();
    if (sweeper) clearInterval(sweeper);
    const deadline = setTimeout(() => {
      app.log.warn('shutdown deadline passed; stopping running jobs');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    // Running jobs get the grace period; whatever is still running then goes back to the queue.
    void jobs.shutdown(JOB_GRACE_MS);
    app.close().then(
      () => {
        clearTimeout(deadline);
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  // `on`, not `once`: execa's child clean-up (signal-exit) re-sends a signal that no other listener
  // hears, which would kill the process at once while an ffmpeg runs; stop() ignores repeats.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
}
