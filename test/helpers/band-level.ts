import { execa } from 'execa';

/**
 * The level, in dB of full scale (RMS), of one frequency band of a file's sound between two times: its first channel
 * (the left; a mono sound's only one) passed twice through ffmpeg's band-pass around `hz` (a Q of 4 each: a tone an
 * octave and a half away is about 40 dB down), so that one tone of a mix is measured apart from the others.
 */
export async function bandLevelDb(file: string, hz: number, from: number, to: number): Promise<number> {
  const band = `bandpass=f=${hz}:width_type=q:width=4`;
  const { stdout } = await execa(
    'ffmpeg',
    [
      ...['-v', 'error', '-ss', String(from), '-t', String(to - from), '-i', file],
      ...['-map', '0:a:0', '-af', `pan=mono|c0=c0,${band},${band}`, '-f', 'f32le', 'pipe:1'],
    ],
    { encoding: 'buffer' },
  );
  const bytes = stdout as unknown as Uint8Array;
  const samples = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const power = samples.reduce((sum, sample) => sum + sample * sample, 0) / samples.length;
  return 10 * Math.log10(power);
}
