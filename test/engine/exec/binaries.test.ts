import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { resolveBinaries } from '../../../src/engine/exec/binaries.js';

/** Resolution only checks that files are executable; these are never run. */
async function executable(file: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, '');
  await chmod(file, 0o755);
  return file;
}

describe('ffmpeg and ffprobe are resolved as a pair from one source', () => {
  let tmp: string;
  let pathDir: string;
  let envDir: string;
  const packaged = () => ({ ffmpeg: '/pkg/ffmpeg', ffprobe: '/pkg/ffprobe' });
  const noPackage = () => undefined;

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-binaries-'));
    pathDir = path.join(tmp, 'bin');
    envDir = path.join(tmp, 'custom');
    await executable(path.join(pathDir, 'ffmpeg'));
    await executable(path.join(pathDir, 'ffprobe'));
    await executable(path.join(envDir, 'ffmpeg'));
    await executable(path.join(envDir, 'ffprobe'));
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  it('FFMPEG_PATH first, with the ffprobe beside it rather than the one on PATH', () => {
    const found = resolveBinaries({ FFMPEG_PATH: path.join(envDir, 'ffmpeg'), PATH: pathDir }, packaged);
    assert.deepEqual(found, {
      ffmpeg: path.join(envDir, 'ffmpeg'),
      ffmpegSource: 'FFMPEG_PATH',
      ffprobe: path.join(envDir, 'ffprobe'),
      ffprobeSource: 'beside ffmpeg',
    });
  });

  it('FFPROBE_PATH names the probe for any ffmpeg', () => {
    const found = resolveBinaries({ FFPROBE_PATH: path.join(envDir, 'ffprobe'), PATH: pathDir }, packaged);
    assert.equal(found.ffmpeg, path.join(pathDir, 'ffmpeg'));
    assert.equal(found.ffprobe, path.join(envDir, 'ffprobe'));
    assert.equal(found.ffprobeSource, 'FFPROBE_PATH');
  });

  it('PATH comes before the optional package', () => {
    const found = resolveBinaries({ PATH: pathDir }, packaged);
    assert.equal(found.ffmpegSource, 'PATH');
    assert.equal(found.ffprobe, path.join(pathDir, 'ffprobe'));
  });

  it('the package pair when PATH has no ffmpeg, or an ffmpeg without its ffprobe', async () => {
    assert.equal(resolveBinaries({ PATH: path.join(tmp, 'empty') }, packaged).ffmpegSource, 'ffmpeg-ffprobe-static');
    const lone = path.join(tmp, 'lone');
    await executable(path.join(lone, 'ffmpeg'));
    const found = resolveBinaries({ PATH: lone }, packaged);
    assert.deepEqual([found.ffmpeg, found.ffprobe], ['/pkg/ffmpeg', '/pkg/ffprobe']);
    assert.throws(
      () => resolveBinaries({ PATH: lone }, noPackage),
      /No ffprobe binary found to go with .*lone\/ffmpeg.*apt-get install ffmpeg/,
    );
  });

  it('a FFMPEG_PATH without a probe of its own, or not executable, is an error rather than a mixed pair', async () => {
    const alone = await executable(path.join(tmp, 'alone', 'ffmpeg'));
    assert.throws(() => resolveBinaries({ FFMPEG_PATH: alone, PATH: pathDir }, packaged), /set FFPROBE_PATH/);
    assert.throws(
      () => resolveBinaries({ FFMPEG_PATH: path.join(tmp, 'none'), PATH: pathDir }, packaged),
      /FFMPEG_PATH=.*none is not an executable file/,
    );
    assert.throws(
      () => resolveBinaries({ FFPROBE_PATH: path.join(tmp, 'none'), PATH: pathDir }, packaged),
      /FFPROBE_PATH=.*none is not an executable file/,
    );
  });

  it('nothing anywhere says how to install ffmpeg', () => {
    assert.throws(
      () => resolveBinaries({ PATH: path.join(tmp, 'empty') }, noPackage),
      /No ffmpeg binary found\. Install ffmpeg \(Debian\/Ubuntu: apt-get install ffmpeg/,
    );
  });
});
