import assert from 'node:assert/strict';
import { open, readFile, writeFile } from 'node:fs/promises';
import { execa } from 'execa';
import { ebur128Summary, type LoudnessMeasure } from '../../src/plugins/shared/loudness-log.js';

export interface Probed {
  format: { format_name: string; duration?: string; size?: string };
  streams: Array<{
    codec_type: string;
    codec_name: string;
    width?: number;
    height?: number;
    pix_fmt?: string;
    sample_rate?: string;
    channels?: number;
    r_frame_rate?: string;
    avg_frame_rate?: string;
    duration?: string;
  }>;
}

/** ffprobe's view of a produced file. */
export async function probe(file: string): Promise<Probed> {
  const { stdout } = await execa('ffprobe', ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', file]);
  return JSON.parse(stdout) as Probed;
}

export const durationOf = (p: Probed) => Number(p.format.duration);
export const videoOf = (p: Probed) => p.streams.find((s) => s.codec_type === 'video');
export const audioOf = (p: Probed) => p.streams.find((s) => s.codec_type === 'audio');

/**
 * Decodes one frame (at `seconds`) to raw RGB and returns its pixels, so tests can check what a
 * viewer would see.
 */
export async function frameRgb(
  file: string,
  seconds = 0,
): Promise<{ width: number; height: number; pixel: (x: number, y: number) => [number, number, number] }> {
  const info = await probe(file);
  const video = videoOf(info)!;
  // ffmpeg 5.1 outputs nothing for a still picture opened by image2 after a seek, so seek only when asked to.
  const seek = seconds > 0 ? ['-ss', String(seconds)] : [];
  const { stdout } = await execa(
    'ffmpeg',
    ['-v', 'error', ...seek, '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    {
      encoding: 'buffer',
    },
  );
  const data = stdout as unknown as Uint8Array;
  const width = video.width!;
  const height = video.height!;
  if (data.length !== width * height * 3)
    throw new Error(`decoded ${data.length} bytes from ${file}, expected ${width * height * 3}`);
  return {
    width,
    height,
    pixel: (x, y) => {
      const i = (y * width + x) * 3;
      return [data[i]!, data[i + 1]!, data[i + 2]!];
    },
  };
}

/** Pixels of a rectangle brighter than `threshold` (luma). */
export function brightPixels(
  frame: Awaited<ReturnType<typeof frameRgb>>,
  x0: number,
  y0: number,
  w: number,
  h: number,
  threshold = 150,
): number {
  let count = 0;
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++) {
      const [r, g, b] = frame.pixel(x, y);
      if (0.299 * r + 0.587 * g + 0.114 * b > threshold) count++;
    }
  return count;
}

/** Pixels of a rectangle whose brightness (luma) differs by more than `threshold` between two frames of one size. */
export function differingPixels(
  a: Awaited<ReturnType<typeof frameRgb>>,
  b: Awaited<ReturnType<typeof frameRgb>>,
  x0: number,
  y0: number,
  w: number,
  h: number,
  threshold = 50,
): number {
  const luma = ([r, g, b]: [number, number, number]) => 0.299 * r + 0.587 * g + 0.114 * b;
  let count = 0;
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++) if (Math.abs(luma(a.pixel(x, y)) - luma(b.pixel(x, y))) > threshold) count++;
  return count;
}

/** Mean brightness (0..255) of a rectangle of a decoded frame. */
export function meanLuma(
  frame: Awaited<ReturnType<typeof frameRgb>>,
  x0: number,
  y0: number,
  w: number,
  h: number,
): number {
  let sum = 0;
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++) {
      const [r, g, b] = frame.pixel(x, y);
      sum += 0.299 * r + 0.587 * g + 0.114 * b;
    }
  return sum / (w * h);
}

/** The audio of a file from `start` for `seconds`, decoded to mono 16 kHz floats. */
export async function pcm(file: string, start: number, seconds: number): Promise<Float32Array> {
  const { stdout } = await execa(
    'ffmpeg',
    [
      '-v',
      'error',
      '-ss',
      String(start),
      '-t',
      String(seconds),
      '-i',
      file,
      '-map',
      '0:a:0',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-f',
      'f32le',
      'pipe:1',
    ],
    {
      encoding: 'buffer',
    },
  );
  const bytes = stdout as unknown as Uint8Array;
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Amplitude of one frequency in the samples (Goertzel): about 0.125 for lavfi's sine, about 0 when absent. */
export function toneLevel(samples: Float32Array, frequency: number, rate = 16000): number {
  const coeff = 2 * Math.cos((2 * Math.PI * frequency) / rate);
  let s1 = 0;
  let s2 = 0;
  for (const x of samples) {
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (2 * Math.sqrt(Math.max(0, s1 * s1 + s2 * s2 - coeff * s1 * s2))) / samples.length;
}

/** A frequency's level in a span of a file's sound, dB (of lavfi's sine amplitude scale). */
export async function toneDbAt(file: string, frequency: number, start: number, seconds: number): Promise<number> {
  return 20 * Math.log10(toneLevel(await pcm(file, start, seconds), frequency));
}

/**
 * What ffprobe shows of a file, a line an item (CSV, no keys): `entries` (`packet=pts_time`, `stream=start_time`)
 * of `stream` (`v:0`, `a:0`) or of the whole file, with `options` before them (`-count_frames`).
 */
export async function probeLines(file: string, entries: string, stream?: string, options: string[] = []) {
  const select = stream ? ['-select_streams', stream] : [];
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', ...options, ...select, '-show_entries', entries, '-of', 'csv=p=0', file],
  ]);
  return stdout.split('\n').filter((line) => line.trim() !== '');
}

/** The presentation times of a stream's packets, in file order (a line may end in side data's comma). */
export const packetTimes = async (file: string, stream: 'v:0' | 'a:0'): Promise<number[]> =>
  (await probeLines(file, 'packet=pts_time', stream)).map((line) => parseFloat(line));

/** When a file's first audio stream starts, on its clock. */
export const audioStart = async (file: string): Promise<number> =>
  Number((await probeLines(file, 'stream=start_time', 'a:0'))[0]);

/** What a full decode says about a file at the error level: nothing, for a clean one. */
export async function decodeErrors(file: string): Promise<string> {
  const { stdout, stderr } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
  return `${stdout}${stderr}`;
}

/** Asserts that ffmpeg decodes the whole file without a single error. */
export const assertDecodesCleanly = async (file: string): Promise<void> =>
  assert.equal(await decodeErrors(file), '', `${file} decodes with errors`);

/** Asserts `actual` within `tolerance` of `expected`, saying what it is (a duration unless named). */
export const assertNear = (actual: number, expected: number, tolerance: number, what = 'duration'): void =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${expected} ± ${tolerance} expected, got ${actual}`);

export type Rgb = [number, number, number];

/** Asserts a colour within `tolerance` of each channel of `expected` (H.264 in 4:2:0 shifts colours a little). */
export function assertNearRgb(actual: Rgb, expected: Rgb, tolerance: number, what: string): void {
  assert.ok(
    actual.every((channel, i) => Math.abs(channel - expected[i]!) <= tolerance),
    `${what}: got rgb(${actual.join(', ')}), expected about rgb(${expected.join(', ')})`,
  );
}

/** The EBML DocType at the start of a Matroska file: 'webm' or 'matroska' (ffprobe names both alike). */
export async function docType(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64), 0, 64, 0);
    const head = buffer.subarray(0, bytesRead).toString('latin1');
    return head.includes('webm') ? 'webm' : head.includes('matroska') ? 'matroska' : undefined;
  } finally {
    await handle.close();
  }
}

/**
 * MD5s of the data of a file's first video or audio stream's packets as stored (no decoding): equal lists mean the
 * stream was copied. Side data (an Opus or AAC start's samples to skip) is left out, as containers say it each
 * their own way; an ADTS file's packets lose their 7-byte headers, which a copy out of MP4 or Matroska gains.
 */
async function packetHashes(file: string, stream: 'v' | 'a'): Promise<string[]> {
  const adts = stream === 'a' && (await probe(file)).format.format_name === 'aac';
  const { stdout } = await execa('ffmpeg', [
    '-v',
    'error',
    '-i',
    file,
    '-map',
    `0:${stream}:0`,
    '-c',
    'copy',
    ...(adts ? ['-bsf:a', 'aac_adtstoasc'] : []),
    '-f',
    'framemd5',
    'pipe:1',
  ]);
  // A line: stream, dts, pts, duration, size, hash[, side data...].
  return stdout
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(',')[5]!.trim());
}

/** MD5s of a file's video packets as stored (see packetHashes). */
export const videoPacketHashes = (file: string): Promise<string[]> => packetHashes(file, 'v');

/** MD5s of a file's first audio stream's packets as stored (see packetHashes). */
export const audioPacketHashes = (file: string): Promise<string[]> => packetHashes(file, 'a');

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
  const start = await audioStart(file);
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

/** A file's loudness as EBU R128 measures it: ffmpeg's ebur128 with true peak, over its first audio stream. */
export async function loudnessOf(file: string): Promise<LoudnessMeasure> {
  const { stderr } = await execa('ffmpeg', [
    ...['-hide_banner', '-nostats', '-loglevel', 'info', '-i', file],
    ...['-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-f', 'null', '-'],
  ]);
  const measure = ebur128Summary(stderr);
  assert.ok(measure, `no loudness summary for ${file}`);
  return measure;
}

/**
 * Makes `file` a lying MP3: its Xing/Info header's frame count (which ffprobe and the in-process reader
 * take for the length, the byte count being right) patched to claim `claimSeconds`, while its frames
 * run to their real end. The file must have been written by ffmpeg's mp3 muxer at 44.1 or 48 kHz.
 */
export async function claimMp3Seconds(file: string, claimSeconds: number): Promise<void> {
  const bytes = await readFile(file);
  const tag = ['Xing', 'Info'].map((name) => bytes.indexOf(name, 0, 'latin1')).find((at) => at >= 0);
  assert.ok(tag !== undefined && (bytes.readUInt32BE(tag + 4) & 3) === 3, `${file} has a Xing header with its counts`);
  // The first frame's header follows the ID3v2 tag, whose size is four bytes of seven bits.
  const id3 =
    bytes.toString('latin1', 0, 3) === 'ID3' ? 10 + bytes.subarray(6, 10).reduce((n, b) => n * 128 + b, 0) : 0;
  const rate = [44100, 48000, 32000][(bytes.readUInt32BE(id3) >>> 10) & 3]!;
  bytes.writeUInt32BE(Math.round((claimSeconds * rate) / 1152), tag + 8);
  await writeFile(file, bytes);
}
