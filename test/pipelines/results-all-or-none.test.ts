import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';

/**
 * Three frames published under two results, the second of which the store cannot take: its file
 * name (`<name>-1.jpg`, 256 bytes) is past the file system's 255, so its publishing fails for real
 * after the first result's three files were published.
 */
const FAILING_PUBLISH = [
  'name: failing-publish',
  'description: Three frames under two results, the second of which cannot be written',
  'inputs:',
  '  clip: url',
  'steps:',
  '  frames:',
  '    op: extract-frames',
  '    with: { video_url: "{{ inputs.clip }}", count: 3 }',
  'results:',
  '  frames: "{{ steps.frames.output }}"',
  `  ${'x'.repeat(250)}: "{{ steps.frames.output }}"`,
  '',
].join('\n');

/** Every file under a folder, as paths relative to it. */
const filesUnder = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));

describe("a pipeline's results are published all or none", () => {
  let files: FileServer;
  let server: TestServer;
  let pipelines: string;

  before(async () => {
    await fixtures('clip-3s-640x360-25fps.mp4');
    pipelines = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-publish-'));
    await writeFile(path.join(pipelines, 'failing-publish.yaml'), FAILING_PUBLISH);
    files = await startFileServer();
    server = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: pipelines });
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (pipelines) await rm(pipelines, { recursive: true, force: true });
  });

  it('removes the results already published when a later one fails, as an operation does with its files', async () => {
    const res = await server.post('/pipelines/failing-publish/', { clip: files.url('/f/clip-3s-640x360-25fps.mp4') });
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.deepEqual(await filesUnder(path.join(server.dataDir, 'uploads')), [], 'no result of the failed run is left');
    assert.deepEqual(await server.workLeftovers(), []);
  });
});
