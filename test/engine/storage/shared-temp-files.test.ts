import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it } from '../../helpers/lifecycle.js';
import { InputCache } from '../../../src/engine/inputs/input-cache.js';
import { LocalOutputStore, TEMP_PREFIX } from '../../../src/engine/storage/storage.js';
import { FileJobStore } from '../../../src/jobs/job-store.js';

/** The pid of a process that has exited, so no running process can be writing under it. */
async function deadPid(): Promise<number> {
  const child = execa('true');
  await child;
  return child.pid!;
}

/**
 * A folder shared by processes (Redis mode: the API and workers on one machine share the data
 * directory) holding one temp file of a live process (a `sleep` child, playing another worker that is
 * downloading), one of a dead process, and one named before temp names carried a pid.
 */
async function sharedFolder(): Promise<{ dir: string; live: string; done: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-shared-temp-'));
  const other = execa('sleep', ['60']);
  other.catch(() => undefined);
  const live = `${TEMP_PREFIX}${other.pid}-download`;
  await writeFile(path.join(dir, live), 'being written');
  await writeFile(path.join(dir, `${TEMP_PREFIX}${await deadPid()}-download`), 'left by a kill -9');
  await writeFile(path.join(dir, `${TEMP_PREFIX}0b1c2d3e-from-an-older-version`), 'left long ago');
  return {
    dir,
    live,
    done: async () => {
      other.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe('temp files in folders that processes share', () => {
  for (const [where, open] of [
    [
      'the download cache',
      (dir: string) =>
        new InputCache(dir, 1 << 20).fetch('http://127.0.0.1:9/x', '/dev/null', () =>
          Promise.reject(new Error('no fetch')),
        ),
    ],
    ['the local output store', (dir: string) => new LocalOutputStore(dir).clearLeftovers()],
    ['the job record folder', (dir: string) => FileJobStore.open(dir)],
  ] as const) {
    it(`${where}: start-up removes the temp files of dead processes, not those a running process writes`, async () => {
      const folder = await sharedFolder();
      try {
        await open(folder.dir).catch(() => undefined);
        assert.deepEqual(await readdir(folder.dir), [folder.live]);
      } finally {
        await folder.done();
      }
    });
  }
});
