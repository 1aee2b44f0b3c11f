import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';

/**
 * The OpenAPI 3.1 document a server of this registry (and these settings) serves at `GET /openapi.json`, without
 * listening: @fastify/swagger makes it from the routes' schemas, so a server is built (its data in a temporary folder,
 * no job recovered) and closed.
 */
export async function openApiDocument(
  registry: Registry,
  settings: Partial<Pick<Config, 'apiKey' | 'apiKeys' | 'publicUrl' | 'bodyLimit' | 'metricsToken'>> = {},
): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-openapi-'));
  try {
    const config = { ...loadConfig({ MEDIAFLOW_DATA_DIR: dataDir }), ...settings };
    // Fastify loads here, not with the package's entry, which plugins import for the SDK.
    const { buildServer } = await import('./app.js');
    const { app } = await buildServer({ config, registry, logger: false });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
