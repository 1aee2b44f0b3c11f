import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { tidyStderr } from '../../src/engine/exec/ffmpeg.js';
import { ALL_DEMUXERS, concatList, inputArgs, lockedInputOptions } from '../../src/engine/exec/input-policy.js';
import { imageHeader, probeFile } from '../../src/engine/probe/probe.js';
import { gifBomb, jpegBomb, pngBomb } from './hostile.js';

/**
 * The layers under the HTTP tests, each on its own: the demuxer and protocol allowlists that keep
 * ffmpeg on one local file, the header check that refuses a decompression bomb without running
 * ffprobe, and the clean-up of tool messages.
 */
describe('ffmpeg lockdown', () => {
  let dir: string;

  before(async () => {
    await fixtures(
      'tone-2s-44k-stereo.mp3',
      'clip-2s-640x360-25fps.mp4',
      'clip-1s-320x240-30fps-silent.mp4',
      'small-300x200.png',
      'landscape-1920x1080.jpg',
      'blue-640x480.webp',
    );
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-lockdown-'));
    await copyFile(await fixture('tone-2s-44k-stereo.mp3'), path.join(dir, 'secret.mp3'));
    await writeFile(
      path.join(dir, 'list.m3u8'),
      ['#EXTM3U', '#EXT-X-TARGETDURATION:3', '#EXTINF:2.0,', path.join(dir, 'secret.mp3'), '#EXT-X-ENDLIST', ''].join(
        '\n',
      ),
    );
    await writeFile(path.join(dir, 'list.ffconcat'), `ffconcat version 1.0\nfile '${path.join(dir, 'secret.mp3')}'\n`);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const ffprobe = (args: string[]) =>
    execa('ffprobe', ['-hide_banner', '-loglevel', 'error', '-of', 'json', '-show_streams', ...args], {
      cwd: dir,
      reject: false,
    });

  it('the attack is real: unrestricted, ffprobe follows a playlist into a local file', async () => {
    const open = await ffprobe(['-protocol_whitelist', 'file', 'list.m3u8']);
    assert.equal(open.exitCode, 0, String(open.stderr));
    assert.match(String(open.stdout), /"codec_name": "mp3"/);
  });

  for (const list of ['list.m3u8', 'list.ffconcat']) {
    it(`the demuxer allowlist refuses ${list} in ffprobe, and in ffmpeg even with the format forced`, async () => {
      const probe = await ffprobe([...lockedInputOptions(ALL_DEMUXERS), list]);
      assert.notEqual(probe.exitCode, 0);
      assert.match(String(probe.stderr), /Format not on whitelist/);
      assert.doesNotMatch(String(probe.stdout), /codec_name/);
      const forced = inputArgs(
        { file: list, source: 'x', facts: { formatName: list.endsWith('m3u8') ? 'hls' : 'concat', isImage: false } },
        'audio',
      );
      const run = await execa('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...forced, '-f', 'null', '-'], {
        cwd: dir,
        reject: false,
      });
      assert.notEqual(run.exitCode, 0);
      assert.match(String(run.stderr), /Format not on whitelist/);
    });
  }

  it('opens probed inputs with allowlists, no data references and a pixel ceiling', () => {
    const args = inputArgs(
      {
        file: 'in0.mp4',
        source: 'x',
        facts: {
          formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
          isImage: false,
          video: { codec: 'h264', width: 640, height: 360, fps: 25, pixFmt: 'yuv420p' },
        },
      },
      'video',
    );
    assert.deepEqual(args.slice(0, 2), ['-protocol_whitelist', 'file,pipe']);
    assert.equal(args[args.indexOf('-format_whitelist') + 1]!.split(',').includes('hls'), false);
    assert.equal(args[args.indexOf('-enable_drefs') + 1], '0');
    assert.equal(args[args.indexOf('-max_pixels') + 1], '100000000');
    assert.deepEqual(args.slice(-4), ['-f', 'mov', '-i', 'in0.mp4']);
  });

  it('writes only generated names into concat lists', () => {
    assert.equal(concatList([{ file: 'part0.mov', duration: 2 }]), "file 'part0.mov'\nduration 2\n");
    for (const name of ['../x', '/etc/passwd', "a'b", 'a\nfile /etc/passwd', 'file:secret', '.hidden', '']) {
      assert.throws(() => concatList([{ file: name }]), /is not a generated name/, JSON.stringify(name));
    }
  });

  it('reads the size a picture header declares, without decoding', async () => {
    assert.deepEqual(imageHeader(pngBomb(100_000, 100_000)), {
      format: 'png_pipe',
      codec: 'png',
      width: 100_000,
      height: 100_000,
    });
    assert.deepEqual(imageHeader(jpegBomb(60_000, 50_000)), {
      format: 'jpeg_pipe',
      codec: 'mjpeg',
      width: 60_000,
      height: 50_000,
    });
    assert.deepEqual(imageHeader(gifBomb(65_535, 3)), { format: 'gif', codec: 'gif', width: 65_535, height: 3 });
    // Real files agree with ffprobe.
    assert.deepEqual(imageHeader(await readFile(await fixture('small-300x200.png')))?.width, 300);
    const jpeg = imageHeader(await readFile(await fixture('landscape-1920x1080.jpg')));
    assert.deepEqual([jpeg?.width, jpeg?.height], [1920, 1080]);
    const webp = imageHeader(await readFile(await fixture('blue-640x480.webp')));
    assert.deepEqual([webp?.width, webp?.height], [640, 480]);
    assert.equal(imageHeader(Buffer.from('not a picture at all')), undefined);
  });

  it('judges a bomb by its header: ffprobe is never started (a missing binary would fail)', async () => {
    await writeFile(path.join(dir, 'bomb.png'), pngBomb(100_000, 100_000));
    const facts = await probeFile('/nonexistent/ffprobe', 'bomb.png', { cwd: dir, timeoutMs: 10_000 });
    assert.deepEqual(facts.video && [facts.video.width, facts.video.height], [100_000, 100_000]);
    assert.equal(facts.isImage, true);
    // Under a raised limit the header still answers (PNG headers are trusted for facts); checkKind applies the limit.
    const raised = await probeFile('/nonexistent/ffprobe', 'bomb.png', {
      cwd: dir,
      timeoutMs: 10_000,
      maxPixels: 10 ** 11,
    });
    assert.deepEqual(raised.video && [raised.video.width, raised.video.height], [100_000, 100_000]);
  });

  it('names truncated MP4s briefly, wherever the cut is', async () => {
    const whole = await readFile(await fixture('clip-2s-640x360-25fps.mp4'));
    await writeFile(path.join(dir, 'in0.mp4'), whole.subarray(0, Math.floor(whole.length * 0.6)));
    await assert.rejects(probeFile('ffprobe', 'in0.mp4', { cwd: dir, timeoutMs: 30_000, source: 'http://h/v.mp4' }), {
      message: "Input http://h/v.mp4 is truncated: the file ends inside its 'mdat' box",
      status: 422,
    });
    await writeFile(path.join(dir, 'in1.mp4'), whole.subarray(0, 1500));
    await assert.rejects(probeFile('ffprobe', 'in1.mp4', { cwd: dir, timeoutMs: 30_000 }), {
      message: "Input is truncated: the file ends inside its 'moov' box",
    });
    const late = await readFile(await fixture('clip-1s-320x240-30fps-silent.mp4'));
    // Index at the end: ffprobe alone would only say "moov atom not found".
    await writeFile(path.join(dir, 'in2.mp4'), late.subarray(0, Math.floor(late.length / 2)));
    await assert.rejects(probeFile('ffprobe', 'in2.mp4', { cwd: dir, timeoutMs: 30_000 }), {
      message: "Input is truncated: the file ends inside its 'mdat' box",
    });
  });

  it('names an unreadable file briefly, without its file name', async () => {
    await writeFile(path.join(dir, 'in3.txt'), 'this is plainly not a media file\n');
    await assert.rejects(probeFile('ffprobe', 'in3.txt', { cwd: dir, timeoutMs: 30_000 }), {
      message: 'Input is not readable media (Invalid data found when processing input)',
    });
  });

  it('cuts component addresses and absolute paths out of tool messages', () => {
    const stderr =
      '[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0c4a1b2c0] moov atom not found\n[png @ 0x5600] [IMGUTILS @ ' +
      '0x7ffe2fd8f880] Picture size 1x1 is invalid\n/srv/mediaflow/data/work/abc/in0.mp4: Invalid data found ' +
      'when processing input\n';
    assert.equal(
      tidyStderr(stderr),
      'moov atom not found; Picture size 1x1 is invalid; in0.mp4: Invalid data found when processing input',
    );
  });
});
