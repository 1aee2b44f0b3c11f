import { open, readFile, type FileHandle } from 'node:fs/promises';
import { mediaError } from '../errors.js';

/**
 * 16-bit mono PCM in WAV files, the form every engine's sentences are written in (ffmpeg's flite, espeak-ng,
 * sherpa-onnx's samples): read whole (one sentence at a time), and written as a stream whose header is completed
 * at the end (a long text's speech is never held in memory whole).
 */

/** A sentence's samples and their rate. */
export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
}

const HEADER_BYTES = 44;

/** The samples of a 16-bit mono PCM WAV file (the data chunk's declared size is not trusted past the file's end). */
export async function readPcm(file: string): Promise<Pcm> {
  const bytes = await readFile(file);
  const fail = (why: string) => mediaError(`A sentence's audio is not 16-bit mono PCM WAV: ${why}`);
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE')
    throw fail('no RIFF WAVE header');
  let sampleRate: number | undefined;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') {
      const format = bytes.readUInt16LE(body);
      const channels = bytes.readUInt16LE(body + 2);
      const bits = bytes.readUInt16LE(body + 14);
      // 0xfffe (extensible) carries the same PCM with a channel mask.
      if ((format !== 1 && format !== 0xfffe) || channels !== 1 || bits !== 16)
        throw fail(`format ${format}, ${channels} channels, ${bits} bits`);
      sampleRate = bytes.readUInt32LE(body + 4);
    } else if (id === 'data') {
      if (sampleRate === undefined) throw fail('data before the format');
      // espeak-ng streaming to a file it cannot seek, and a writer cut short, leave the size wrong: the file tells.
      const end = size === 0 || body + size > bytes.length ? bytes.length : body + size;
      const length = Math.floor((end - body) / 2);
      const samples = new Int16Array(length);
      for (let i = 0; i < length; i++) samples[i] = bytes.readInt16LE(body + 2 * i);
      return { samples, sampleRate };
    }
    at = body + size + (size % 2);
  }
  throw fail('no data chunk');
}

/** A WAV header for `dataBytes` of 16-bit mono PCM at `sampleRate`. */
export function waveHeader(sampleRate: number, dataBytes: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** 16-bit samples from floats in [-1, 1] (sherpa-onnx's output), clipped. */
export function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767);
  return out;
}

/** Writes a WAV file of PCM appended piece by piece: the header's sizes are written when it is closed. */
export class PcmWriter {
  private bytes = 0;

  private constructor(
    private readonly handle: FileHandle,
    readonly sampleRate: number,
  ) {}

  static async create(file: string, sampleRate: number): Promise<PcmWriter> {
    const handle = await open(file, 'w');
    await handle.write(waveHeader(sampleRate, 0), 0, HEADER_BYTES, 0);
    return new PcmWriter(handle, sampleRate);
  }

  /** Samples written so far. */
  get length(): number {
    return this.bytes / 2;
  }

  async append(samples: Int16Array): Promise<void> {
    const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
    await this.handle.write(data, 0, data.length, HEADER_BYTES + this.bytes);
    this.bytes += data.length;
  }

  async silence(count: number): Promise<void> {
    if (count > 0) await this.append(new Int16Array(count));
  }

  /** Completes the header and closes the file. */
  async close(): Promise<void> {
    try {
      await this.handle.write(waveHeader(this.sampleRate, this.bytes), 0, HEADER_BYTES, 0);
    } finally {
      await this.handle.close();
    }
  }

  /** Closes the file as it is (a failed synthesis, whose file the caller removes). */
  async abandon(): Promise<void> {
    await this.handle.close();
  }
}

/** Writes one whole WAV file of `samples`. */
export async function writePcm(file: string, pcm: Pcm): Promise<void> {
  const writer = await PcmWriter.create(file, pcm.sampleRate);
  try {
    await writer.append(pcm.samples);
  } finally {
    await writer.close();
  }
}
