import assert from 'node:assert/strict';
import { execa } from 'execa';

/**
 * Where a flash and a beep are in a produced file, to hold picture and sound in sync: tests make inputs where
 * both start at the same time (a white frame, a 1 kHz tone) and check they still do after the operation.
 */

/** When the picture first turns white: the timestamp of the first frame whose mean brightness passes half. */
export async function flashAt(file: string): Promise<number> {
  const { stdout: times } = await execa('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'frame=pts_time',
    '-of',
    'json',
    file,
  ]);
  const { stdout } = await execa(
    'ffmpeg',
    [
      '-v',
      'error',
      '-i',
      file,
      '-map',
      '0:v:0',
      '-fps_mode',
      'passthrough',
      '-s',
      '8x6',
      '-pix_fmt',
      'gray',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    { encoding: 'buffer' },
  );
  const pixels = stdout as unknown as Uint8Array;
  const stamps = (JSON.parse(times) as { frames: Array<{ pts_time: string }> }).frames.map((f) => Number(f.pts_time));
  assert.equal(pixels.length, stamps.length * 48, 'one picture per frame timestamp');
  const index = stamps.findIndex((_, i) => pixels.subarray(i * 48, (i + 1) * 48).reduce((a, b) => a + b, 0) / 48 > 128);
  assert.ok(index >= 0, `no white frame in ${file}`);
  return stamps[index]!;
}

/** When the sound first beeps: the first sample louder than a tenth of full scale, from the stream's start. */
export async function beepAt(file: string): Promise<number> {
  const { stdout: start } = await execa('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'a:0',
    '-show_entries',
    'stream=start_time',
    '-of',
    'csv=p=0',
    file,
  ]);
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-ar', '48000', '-f', 'f32le', 'pipe:1'],
    { encoding: 'buffer' },
  );
  const bytes = stdout as unknown as Uint8Array;
  const samples = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const index = samples.findIndex((sample) => Math.abs(sample) > 0.1);
  assert.ok(index >= 0, `no beep in ${file}`);
  return (Number(start) || 0) + index / 48000;
}
