import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it } from '../../helpers/lifecycle.js';
import { eventually } from '../../helpers/serve-process.js';
import { resolveBinaries } from '../../../src/engine/exec/binaries.js';
import { clearDeadProcessFolders, Workspaces } from '../../../src/engine/storage/storage.js';

// No process can have this pid: it is above Linux's largest pid_max.
const DEAD = 'pid-4194305';

describe('work folder clean-up at start', () => {
  it("ends the ffmpeg a killed server left running in its job's workspace, before removing the workspace", async () => {
    // The check wanted a folder below the workspace, but ffmpeg runs in the workspace itself: it encoded on.
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-work-folders-'));
    const root = path.join(dataDir, 'work');
    const workspace = path.join(root, '0b6c3c1e-killed-job');
    await mkdir(workspace, { recursive: true });
    const endless = ['-nostdin', '-v', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=rate=5', '-f', 'null', '-'];
    const orphan = execa(resolveBinaries().ffmpeg, endless, { cwd: workspace, reject: false });
    const cwdOf = (pid: number | undefined) => readlink(`/proc/${pid}/cwd`).catch(() => '');
    try {
      assert.ok(await eventually(async () => (await cwdOf(orphan.pid)) === workspace), 'ffmpeg runs in the workspace');
      assert.equal(await new Workspaces(root).clearLeftovers(), 1);
      const ended = () => orphan.signalCode !== null || orphan.exitCode !== null;
      assert.ok(await eventually(ended, 5_000), 'the orphan was ended');
      assert.equal(orphan.signalCode, 'SIGKILL');
      assert.deepEqual(await readdir(root), []);
    } finally {
      orphan.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it(
    "a server's clean-up spares the pid-<pid> folders of running processes (a CLI run sharing the data " + 'directory)',
    async () => {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-work-folders-'));
      try {
        const root = path.join(dataDir, 'work');
        const live = `pid-${process.ppid}`;
        for (const entry of ['0b6c3c1e-killed-job', live, DEAD])
          await mkdir(path.join(root, entry, 'job'), { recursive: true });
        assert.equal(await new Workspaces(root).clearLeftovers(), 2);
        assert.deepEqual(await readdir(root), [live]);

        // A CLI run's clean-up removes only the folders of processes that are gone.
        await mkdir(path.join(root, DEAD, 'job'), { recursive: true });
        await mkdir(path.join(root, 'a-server-job'));
        assert.equal(await clearDeadProcessFolders(dataDir), 1);
        assert.deepEqual((await readdir(root)).sort(), ['a-server-job', live]);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('work folder names', () => {
  it('a pipeline run gets an absolute folder under the root, a CLI --output a new staging folder each time', () => {
    // Relative, as MEDIAFLOW_DATA_DIR may be: step inputs name files in a pipeline's folder, so it is absolute.
    const workspaces = new Workspaces(path.join('data', 'work'));
    assert.equal(workspaces.pipelineDir('run-1'), path.resolve('data', 'work', 'pipeline-run-1'));
    assert.match(path.basename(workspaces.pipelineDir()), /^pipeline-[0-9a-f-]{36}$/);
    const staging = workspaces.outputStagingDir();
    assert.equal(path.dirname(staging), workspaces.root);
    assert.match(path.basename(staging), /^output-[0-9a-f-]{36}$/);
    assert.notEqual(workspaces.outputStagingDir(), staging);
  });
});
