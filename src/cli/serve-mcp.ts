import { pathToFileURL } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { pino } from 'pino';
import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { resolveBinaries } from '../engine/exec/binaries.js';
import { createMcpServer } from '../mcp/server.js';
import { serverServices } from '../runtime.js';
import { clearLeftovers, onStopSignal, startSweeper } from '../server/lifecycle.js';

/**
 * The result URLs' base: MEDIAFLOW_PUBLIC_URL when a server publishes the same outputs (the same data
 * directory or bucket), else the data directory as a `file://` URL, so that `<base>/uploads/<file>` is
 * the output's path on this machine. Either way a result URL given back as an input is read from the store.
 */
const baseUrlOf = (config: Config): string =>
  config.publicUrl ?? pathToFileURL(config.dataDir).href.replace(/\/+$/, '');

/** `mediaflow mcp` at work (mcp-command.ts loads this module only then). */
export async function serveMcp(config: Config, registry: Registry): Promise<void> {
  // stdout carries the protocol: the log goes to stderr, which MCP clients keep as the server's log.
  const logger = pino({ level: config.logLevel }, pino.destination(2));
  const binaries = resolveBinaries();
  const leftovers = await clearLeftovers(config);
  if (leftovers > 0) logger.warn({ leftovers }, 'removed work left by an earlier run');
  const { jobs, store } = await serverServices({ config, registry, logger, binaries });
  if (jobs.backend.kind === 'embedded') await jobs.recover();
  const sweeper = startSweeper(config, store, jobs, logger);
  const base = baseUrlOf(config);
  const server = createMcpServer(registry, { jobs, config, logger, baseUrl: base, ownBases: [base] });
  let stopped = false;
  // The client is gone: nobody waits for a running job's result, so it is stopped at once.
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(sweeper);
    jobs.shutdown(0).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  onStopSignal(stop);
  await server.connect(new StdioServerTransport());
  logger.info({ tools: registry.list().length, base }, 'MCP server ready on stdio');
}
