import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { gainRange, mp3Frames, withGain } from '../../src/plugins/normalize-audio/mp3-gain.js';

/** The decoded samples of an MP3, as ffmpeg's decoder gives them (32-bit float, channels interleaved). */
async function samplesOf(file: string): Promise<Float32Array> {
  const { stdout } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'f32le', '-'], { encoding: 'buffer' });
  const bytes = Buffer.from(stdout);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
}

describe('lossless MP3 gain (global_gain)', () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-mp3-gain-'));
  });
  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** A 2 s tone made by libmp3lame: MPEG-1 at 44.1 kHz, MPEG-2 at 22.05 kHz, MPEG-2.5 at 11.025 kHz. */
  const mp3 = async (name: string, rate: number, channels: number, rateControl: string[], extra: string[] = []) => {
    const file = path.join(scratch, name);
    await execa('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', `sine=f=440:r=${rate}:d=2`, '-af', 'volume=0.3'],
      ...['-ac', String(channels), '-c:a', 'libmp3lame', ...rateControl, ...extra, file],
    ]);
    return file;
  };

  for (const [name, rate, channels, rateControl] of [
    ['mpeg1-mono-cbr.mp3', 44100, 1, ['-b:a', '64k']],
    ['mpeg1-stereo-vbr.mp3', 44100, 2, ['-q:a', '4']],
    ['mpeg2-mono-vbr.mp3', 22050, 1, ['-q:a', '4']],
    ['mpeg2-stereo-cbr.mp3', 22050, 2, ['-b:a', '48k']],
    ['mpeg25-stereo-cbr.mp3', 11025, 2, ['-b:a', '32k']],
  ] as const) {
    it(`scales the decoded sound by exactly 2^(n/4): ${name}`, async () => {
      const input = await mp3(name, rate, channels, [...rateControl]);
      const data = await readFile(input);
      const layout = mp3Frames(data);
      assert.ok('frames' in layout, JSON.stringify(layout));
      // libmp3lame writes its Info/Xing frame first: left as it is.
      assert.equal(layout.frames.filter((frame) => frame.tag).length, 1);
      assert.ok(layout.frames[0]!.tag);
      const before = gainRange(data, layout.frames);
      for (const steps of [-3, 2]) {
        const out = withGain(data, layout.frames, steps);
        assert.equal(out.length, data.length);
        assert.deepEqual(gainRange(out, layout.frames), { min: before.min + steps, max: before.max + steps });
        const file = path.join(scratch, `${steps}-${name}`);
        await writeFile(file, out);
        const [original, gained] = await Promise.all([samplesOf(input), samplesOf(file)]);
        assert.equal(gained.length, original.length);
        const factor = 2 ** (steps / 4);
        let worst = 0;
        for (let i = 0; i < original.length; i++) worst = Math.max(worst, Math.abs(original[i]! * factor - gained[i]!));
        assert.ok(worst < 1e-5, `off by ${worst}`);
      }
    });
  }

  it('takes a file without the LAME/Xing frame, every frame one of sound', async () => {
    const input = await mp3('no-xing.mp3', 44100, 2, ['-b:a', '128k'], ['-write_xing', '0']);
    const data = await readFile(input);
    const layout = mp3Frames(data);
    assert.ok('frames' in layout, JSON.stringify(layout));
    assert.ok(layout.frames.every((frame) => !frame.tag));
    const file = path.join(scratch, 'no-xing-gained.mp3');
    await writeFile(file, withGain(data, layout.frames, -4));
    const [original, gained] = await Promise.all([samplesOf(input), samplesOf(file)]);
    assert.equal(gained.length, original.length);
    assert.ok(original.every((sample, i) => Math.abs(sample / 2 - gained[i]!) < 1e-5));
  });

  it('skips an ID3v2 tag at the start and ID3v1 and APE tags at the end, copied as they are', async () => {
    const input = await mp3(
      'tagged.mp3',
      44100,
      2,
      ['-b:a', '128k'],
      ['-id3v2_version', '3', '-metadata', 'title=Tone'],
    );
    const bare = await readFile(input);
    assert.equal(bare.toString('latin1', 0, 3), 'ID3');
    const ape = Buffer.alloc(32);
    ape.write('APETAGEX', 0, 'latin1');
    ape.writeUInt32LE(2000, 8);
    ape.writeUInt32LE(32, 12); // the footer alone: no items
    const id3v1 = Buffer.alloc(128);
    id3v1.write('TAGTone', 0, 'latin1');
    const data = Buffer.concat([bare, ape, id3v1]);
    const layout = mp3Frames(data);
    assert.ok('frames' in layout, JSON.stringify(layout));
    const out = withGain(data, layout.frames, 1);
    const firstFrame = layout.frames[0]!.offset;
    assert.deepEqual(out.subarray(0, firstFrame), data.subarray(0, firstFrame));
    assert.deepEqual(out.subarray(-160), data.subarray(-160));
  });

  /** Why `mp3Frames` refuses a file, or 'taken'. */
  const refusal = (data: Buffer): string => {
    const layout = mp3Frames(data);
    return 'refused' in layout ? layout.refused : 'taken';
  };

  it('refuses what it does not handle: junk, a cut frame, a CRC, another layer', async () => {
    const data = await readFile(await mp3('plain.mp3', 44100, 1, ['-b:a', '64k']));
    assert.equal(refusal(data), 'taken');
    assert.equal(refusal(Buffer.concat([data, Buffer.from('junk')])), `no Layer III frame at byte ${data.length}`);
    assert.match(refusal(data.subarray(0, data.length - 10)), /^the frame at byte \d+ is cut short$/);
    const crc = Buffer.from(data);
    const first = (mp3Frames(data) as { frames: { offset: number }[] }).frames[1]!.offset;
    crc[first + 1] = crc[first + 1]! & 0xfe; // protection_bit 0
    assert.equal(refusal(crc), `a frame protected by a CRC at byte ${first}`);
    const layer2 = await execa(
      'ffmpeg',
      ['-v', 'error', '-f', 'lavfi', '-i', 'sine=d=1', '-c:a', 'mp2', '-f', 'mp2', '-'],
      { encoding: 'buffer' },
    );
    assert.equal(refusal(Buffer.from(layer2.stdout)), 'no Layer III frame at byte 0');
  });
});
