import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { resolveBinaries } from '../engine/exec/binaries.js';
import { clearLeftovers, JOB_GRACE_MS, onStopSignal, SHUTDOWN_GRACE_MS, startSweeper } from './lifecycle.js';

/**
 * Starts the server for real: finds ffmpeg (exiting with a hint when there is none), clears what
 * a killed predecessor left, sweeps old outputs, listens, and shuts down gracefully on signals.
 * Fastify and the job stack load here, not with the package's entry, which exports this.
 */
export async function startServer(config: Config, registry: Registry): Promise<void> {
  const binaries = resolveBinaries();
  const leftovers = await clearLeftovers(config);
  const { buildServer } = await import('./app.js');
  const { app, jobs, store } = await buildServer({ config, registry, binaries, logger: { level: config.logLevel } });
  if (leftovers > 0) app.log.warn({ leftovers }, 'removed work left by an earlier run');

  const sweeper = startSweeper(config, store, jobs, app.log);

  let stopping = false;
  app.addHook('onSend', async (_request, reply) => {
    if (stopping) void reply.header('connection', 'close');
  });
  onStopSignal((signal) => {
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new requests, finishing running jobs');
    // Keep-alive connections would hold the server open after their last response: close each
    // one as soon as it falls idle.
    app.server.closeIdleConnections();
    clearInterval(sweeper);
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
  });

  await app.listen({ port: config.port, host: config.host });
}
