/**
 * Writes nodes/Mediaflow/operations.json, the node's list of operations and pipelines with their fields, from a
 * mediaflow server's GET /openapi.json and GET /pipelines.
 *
 *   npm run generate -w n8n-nodes-mediaflow                     # this repository's built engine (npm run build first)
 *   npm run generate -w n8n-nodes-mediaflow -- --url https://mediaflow.example.com --api-key KEY
 *
 * The first form starts `mediaflow serve` from this repository (its built dist/, with the pipelines folder it
 * ships and the plugins MEDIAFLOW_PLUGINS names) on a free loopback port, reads it and stops it. The second reads
 * a deployment of your own, with its own plugins and pipelines, so that the node offers exactly those.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readCatalogue } from '../nodes/Mediaflow/catalogue';

const OUTPUT = path.resolve(__dirname, '../nodes/Mediaflow/operations.json');
const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/mediaflow.js');

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Runs `read` against this repository's built engine, started for it and stopped after. */
async function withLocalServer<T>(read: (base: string) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mediaflow-n8n-generate-'));
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', dataDir], {
    // From the repository's root, whose pipelines folder is the one the server reads by default.
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', MEDIAFLOW_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let tries = 0; ; tries++) {
      if (child.exitCode !== null) throw new Error(`mediaflow serve exited (${child.exitCode}): is dist/ built?`);
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {
        if (tries > 200) throw new Error('mediaflow serve did not answer /health within 20 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return await read(base);
  } finally {
    child.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const url = option('--url');
  const apiKey = option('--api-key') ?? process.env.MEDIAFLOW_API_KEY;
  const catalogue = url ? await readCatalogue(url, apiKey) : await withLocalServer((base) => readCatalogue(base));
  await writeFile(OUTPUT, `${JSON.stringify(catalogue, null, 2)}\n`);
  const pipelines = catalogue.entries.filter((entry) => entry.kind === 'pipeline').length;
  console.log(
    `${path.relative(process.cwd(), OUTPUT)}: ${catalogue.entries.length - pipelines} operations, ` +
      `${pipelines} pipelines (mediaflow ${catalogue.version})`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
