import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { clearDeadProcessFolders, Workspaces } from '../../src/engine/storage.js';

// No process can have this pid: it is above Linux's largest pid_max.
const DEAD = 'pid-4194305';

describe('work folder clean-up at start', () => {
  it("a server's clean-up spares the pid-<pid> folders of running processes (a CLI run sharing the data directory)", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-work-folders-'));
    try {
      const root = path.join(dataDir, 'work');
      const live = `pid-${process.ppid}`;
      for (const entry of ['0b6c3c1e-killed-job', live, DEAD]) await mkdir(path.join(root, entry, 'job'), { recursive: true });
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
  });
});
