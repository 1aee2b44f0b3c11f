import type { Command } from 'commander';
import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { settingsCommand } from './setting-flags.js';

/** Settings a worker has no use for: it serves no HTTP. */
const API_ONLY = new Set<keyof Config>([
  'port',
  'host',
  'publicUrl',
  'trustProxy',
  'apiKey',
  'apiKeys',
  'bodyLimit',
  'maxEventLoopDelayMs',
  'workers',
  'headersTimeoutMs',
  'requestTimeoutMs',
  'keepAliveTimeoutMs',
  'maxConnections',
  'maxConnectionsPerClient',
  'mcpSessionsPerKey',
]);

/**
 * `mediaflow worker`: works jobs from the shared queue (MEDIAFLOW_REDIS_URL), `--concurrency` at
 * once, and serves no HTTP. On SIGTERM it finishes what it runs, or hands it back to the queue,
 * then exits.
 */
export function workerCommand(registry: Registry): Command {
  return settingsCommand(
    'Work jobs from the shared Redis queue (no HTTP)',
    // BullMQ, ioredis and the runtime load only when the command runs.
    async (config) => (await import('./start-worker.js')).startWorker(config, registry),
    API_ONLY,
  );
}
