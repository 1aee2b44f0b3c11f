import type { Command } from 'commander';
import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { settingsCommand } from './setting-flags.js';

/** Settings of the HTTP server alone: `mediaflow mcp` listens on no port. */
const HTTP_ONLY = new Set<keyof Config>([
  'port',
  'host',
  'trustProxy',
  'apiKey',
  'apiKeys',
  'corsOrigins',
  'metricsToken',
  'dashboard',
  'maxEventLoopDelayMs',
  'headersTimeoutMs',
  'requestTimeoutMs',
  'keepAliveTimeoutMs',
  'maxConnections',
  'maxConnectionsPerClient',
  'mcpSessionsPerKey',
]);

/**
 * `mediaflow mcp`: every operation and pipeline as an MCP tool, over stdio, for a client that starts
 * mediaflow itself (Claude Desktop, an IDE). It runs jobs as `serve` does, on the same data directory,
 * and stops when the client closes its stdin.
 */
export function mcpCommand(registry: Registry): Command {
  return settingsCommand(
    'Serve every operation and pipeline as an MCP tool over stdio (docs/mcp.md)',
    // The MCP SDK, the runtime and the job stack load only when the command runs.
    async (config) => (await import('./serve-mcp.js')).serveMcp(config, registry),
    HTTP_ONLY,
  );
}
