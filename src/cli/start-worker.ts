import { pino } from 'pino';
import { resolveBinaries } from '../engine/exec/binaries.js';
import type { Config } from '../engine/config.js';
import { workerServices } from '../runtime.js';
import type { Registry } from '../engine/plugins/registry.js';
import { clearLeftovers, JOB_GRACE_MS, onStopSignal, SHUTDOWN_GRACE_MS } from '../server/lifecycle.js';

/** `mediaflow worker` at work (worker-command.ts loads this module only then). */
export async function startWorker(config: Config, registry: Registry): Promise<void> {
  const logger = pino({ level: config.logLevel });
  const binaries = resolveBinaries();
  const leftovers = await clearLeftovers(config);
  if (leftovers > 0) logger.warn({ leftovers }, 'removed work left by an earlier run');
  const jobs = await workerServices({ config, registry, logger, binaries });
  logger.info({ concurrency: config.concurrency, pid: process.pid }, 'worker ready');
  onStopSignal((signal) => {
    logger.info({ signal }, 'shutting down: finishing running jobs, handing back the rest');
    const deadline = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    jobs.shutdown(JOB_GRACE_MS).then(
      () => {
        clearTimeout(deadline);
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
}
