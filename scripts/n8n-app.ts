/**
 * `npm run test:n8n-app`: the n8n node in the real n8n application (test/integrations/n8n-app.e2e.ts).
 *
 * 1. Installs n8n 1.123.0 into a cache folder when it is not there yet (`~/.cache/mediaflow/n8n-1.123.0`, or
 *    MEDIAFLOW_N8N_APP_DIR): minutes, over a gigabyte. n8n-nodes-base takes `xlsx` as a tarball from
 *    cdn.sheetjs.com; an npm override puts the registry's xlsx 0.18.5 in its place, so that only the npm registry
 *    is needed. Install scripts are skipped (one of them reports the install to an analytics service), but for
 *    sqlite3's, built from source (python3, make, a C++ compiler) instead of downloading a prebuilt binary.
 * 2. Builds mediaflow and the node (`npm run build`, `npm run build -w n8n-nodes-mediaflow`).
 * 3. Runs the test in a network namespace with nothing but loopback (`unshare -rn`), n8n and mediaflow inside it.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const N8N_VERSION = '1.123.0';
const ROOT = path.resolve(import.meta.dirname, '..');
const APP_DIR =
  process.env.MEDIAFLOW_N8N_APP_DIR ?? path.join(os.homedir(), '.cache', 'mediaflow', `n8n-${N8N_VERSION}`);
/** Written once the install has finished, so that an interrupted one is started again. */
const DONE = path.join(APP_DIR, 'installed.json');

async function installed(): Promise<boolean> {
  if (!existsSync(DONE)) return false;
  return (JSON.parse(await readFile(DONE, 'utf8')) as { n8n: string }).n8n === N8N_VERSION;
}

async function install(): Promise<void> {
  console.log(`Installing n8n ${N8N_VERSION} into ${APP_DIR} (minutes; once)`);
  const started = Date.now();
  await rm(APP_DIR, { recursive: true, force: true });
  await mkdir(APP_DIR, { recursive: true });
  await writeFile(
    path.join(APP_DIR, 'package.json'),
    `${JSON.stringify({ name: 'n8n-app', private: true, overrides: { xlsx: '0.18.5' } }, null, 2)}\n`,
  );
  const npm = (args: string[], env: Record<string, string> = {}) =>
    execa('npm', args, { cwd: APP_DIR, stdio: 'inherit', env });
  await npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', `n8n@${N8N_VERSION}`]);
  // Read by sqlite3's install script (prebuild-install): build, do not download.
  await npm(['rebuild', 'sqlite3'], { npm_config_build_from_source: 'true' });
  const seconds = Math.round((Date.now() - started) / 1000);
  const { stdout } = await execa('du', ['-sh', APP_DIR]);
  console.log(`Installed n8n ${N8N_VERSION} in ${seconds} s: ${stdout.split('\t')[0]}`);
  await writeFile(DONE, `${JSON.stringify({ n8n: N8N_VERSION, seconds })}\n`);
}

async function main(): Promise<void> {
  if (!(await installed())) await install();
  const inRoot = (command: string, ...args: string[]) => execa(command, args, { cwd: ROOT, stdio: 'inherit' });
  await inRoot('npm', 'run', 'build');
  await inRoot('npm', 'run', 'build', '-w', 'n8n-nodes-mediaflow');
  const test = await execa(
    'unshare',
    ['-rn', process.execPath, '--import', 'tsx', 'test/integrations/n8n-app.e2e.ts'],
    { cwd: ROOT, stdio: 'inherit', env: { MEDIAFLOW_N8N_APP_DIR: APP_DIR }, reject: false },
  );
  process.exitCode = test.exitCode ?? 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
