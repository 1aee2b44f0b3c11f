import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from './helpers/lifecycle.js';
import { loadConfig } from '../src/engine/config.js';
import { resolveBinaries } from '../src/engine/exec/binaries.js';
import { LocalOutputStore } from '../src/engine/storage/storage.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { cliServices, createRuntime, resolve, TOKENS } from '../src/runtime.js';

// Nothing here connects: the store, the work folders and the engine are made, never used. The
// addresses are loopback ports nothing listens on, so a connection by mistake would fail at once.
const dataDir = path.join(os.tmpdir(), 'mediaflow-runtime-test');
const configOf = (env: Record<string, string> = {}) => loadConfig({ MEDIAFLOW_DATA_DIR: dataDir, ...env });
const parts = { registry: builtinRegistry(), binaries: resolveBinaries() };

describe('the composition root', () => {
  it('makes each part once per runtime, from the parts it resolves; another runtime makes its own', async () => {
    const runtime = await createRuntime({ config: configOf(), ...parts });
    const engine = resolve(runtime, TOKENS.Engine);
    assert.equal(resolve(runtime, TOKENS.Engine), engine);
    // The engine got the runtime's own work folders, not a second instance.
    assert.equal(engine.workspaces, resolve(runtime, TOKENS.Workspaces));
    const other = await createRuntime({ config: configOf(), ...parts });
    assert.notEqual(resolve(other, TOKENS.Engine), engine);
    assert.notEqual(resolve(other, TOKENS.Store), resolve(runtime, TOKENS.Store));
  });

  it('chooses the output store and the work folder from the configuration', async () => {
    const embedded = await createRuntime({ config: configOf(), ...parts });
    const local = resolve(embedded, TOKENS.Store);
    assert.ok(local instanceof LocalOutputStore);
    assert.equal(local.root, path.join(dataDir, 'uploads'));
    assert.equal(resolve(embedded, TOKENS.Workspaces).root, path.join(dataDir, 'work'));

    const shared = await createRuntime({
      config: configOf({
        MEDIAFLOW_S3_BUCKET: 'outputs',
        MEDIAFLOW_S3_ENDPOINT: 'http://127.0.0.1:9',
        MEDIAFLOW_REDIS_URL: 'redis://127.0.0.1:9',
      }),
      ...parts,
    });
    // The bucket: outputs are not served by this process.
    assert.equal(resolve(shared, TOKENS.Store).servedHere, false);
    // Processes sharing the data directory each work in a folder of their own.
    assert.equal(resolve(shared, TOKENS.Workspaces).root, path.join(dataDir, 'work', `pid-${process.pid}`));
  });

  it('gives a CLI run the work folder it names, whatever the configuration says', () => {
    const workRoot = path.join(dataDir, 'cli-work');
    const config = configOf({ MEDIAFLOW_REDIS_URL: 'redis://127.0.0.1:9' });
    const store = new LocalOutputStore(path.join(dataDir, 'out'));
    const { engine, workspaces } = cliServices({ config, ...parts, store, workRoot });
    assert.equal(workspaces.root, workRoot);
    assert.equal(engine.workspaces, workspaces);
  });
});
