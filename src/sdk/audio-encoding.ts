// From its home in the engine, not through sdk.ts: sdk.ts re-exports this module, so that would make a cycle.
import type { MediaFacts } from '../engine/contract/media-facts.js';

/**
 * The one place that chooses how audio-only files are written (mp3, wav, m4a, ...): the encoder,
 * the muxer, and whether an input already is what the container holds, so it can be copied.
 * Audio inside video containers is chosen by `audioCodecFor`/`audioEncoder` (encoding.ts).
 */

export const AUDIO_CONTAINERS = ['mp3', 'wav', 'aac', 'm4a', 'ogg', 'flac', 'opus'] as const;
export type AudioContainer = (typeof AUDIO_CONTAINERS)[number];

interface AudioProfile {
  /** ffmpeg's muxer (the output file's extension is not trusted to choose it). */
  muxer: string;
  /** Options of the muxer. */
  muxerOptions: readonly string[];
  /** The codec ffprobe reports for this container's audio. */
  codec: string;
  /** The demuxer ffprobe names when it reads such a file back. */
  demuxer: string;
  encode: readonly string[];
  /** Codecs the muxer takes as they are, whatever container they come from: their packets can be copied. */
  copies: readonly string[];
}

const PROFILES: Record<AudioContainer, AudioProfile> = {
  // VBR quality 2 (about 190 kbit/s): transparent for speech and music.
  mp3: {
    muxer: 'mp3',
    muxerOptions: [],
    codec: 'mp3',
    demuxer: 'mp3',
    encode: ['-c:a', 'libmp3lame', '-q:a', '2'],
    copies: ['mp3'],
  },
  // WAV holds little-endian PCM of any width (big-endian PCM, as QuickTime may carry, is re-encoded).
  wav: {
    muxer: 'wav',
    muxerOptions: [],
    codec: 'pcm_s16le',
    demuxer: 'wav',
    encode: ['-c:a', 'pcm_s16le'],
    copies: ['pcm_u8', 'pcm_s16le', 'pcm_s24le', 'pcm_s32le', 'pcm_f32le', 'pcm_f64le'],
  },
  // A bare AAC stream is ADTS.
  aac: {
    muxer: 'adts',
    muxerOptions: [],
    codec: 'aac',
    demuxer: 'aac',
    encode: ['-c:a', 'aac', '-b:a', '192k'],
    copies: ['aac'],
  },
  // The ipod muxer writes the .m4a flavour of MP4; +faststart lets players start before the end arrives.
  m4a: {
    muxer: 'ipod',
    muxerOptions: ['-movflags', '+faststart'],
    codec: 'aac',
    demuxer: 'mov',
    encode: ['-c:a', 'aac', '-b:a', '192k'],
    copies: ['aac'],
  },
  // Ogg carries Opus as well as Vorbis; an .ogg of Opus plays wherever Ogg Opus does.
  ogg: {
    muxer: 'ogg',
    muxerOptions: [],
    codec: 'vorbis',
    demuxer: 'ogg',
    encode: ['-c:a', 'libvorbis', '-q:a', '5'],
    copies: ['vorbis', 'opus'],
  },
  flac: { muxer: 'flac', muxerOptions: [], codec: 'flac', demuxer: 'flac', encode: ['-c:a', 'flac'], copies: ['flac'] },
  opus: {
    muxer: 'ogg',
    muxerOptions: [],
    codec: 'opus',
    demuxer: 'ogg',
    encode: ['-c:a', 'libopus', '-b:a', '128k'],
    copies: ['opus'],
  },
};

/** Encoder options for an audio-only container, e.g. `['-c:a', 'libmp3lame', '-q:a', '2']` for mp3. */
export function audioFileEncoder(container: AudioContainer): string[] {
  return [...PROFILES[container].encode];
}

/** Muxer options and the explicit muxer name, e.g. `['-movflags', '+faststart', '-f', 'ipod']` for m4a. */
export function audioMuxerFor(container: AudioContainer): string[] {
  return [...PROFILES[container].muxerOptions, '-f', PROFILES[container].muxer];
}

/**
 * Whether an input already is this container's audio, in its own container and without video: its
 * packets can be copied.
 */
export function isAudioFileOf(container: AudioContainer, facts: MediaFacts): boolean {
  const profile = PROFILES[container];
  return !facts.video && facts.audio?.codec === profile.codec && facts.formatName.split(',')[0] === profile.demuxer;
}

/**
 * The audio arguments that put an input's first audio stream into this container, from any container (a
 * video's too): `['-c:a', 'copy']` when the container takes its codec as it is (AAC into m4a or aac, MP3
 * into mp3, Opus into opus or ogg, Vorbis into ogg, FLAC into flac, little-endian PCM into wav), else
 * `audioFileEncoder(container)`.
 */
export function audioFileCodecFor(container: AudioContainer, facts: MediaFacts | undefined): string[] {
  const codec = facts?.audio?.codec;
  return codec && PROFILES[container].copies.includes(codec) ? ['-c:a', 'copy'] : audioFileEncoder(container);
}

/** Sample rates an encoder takes: Opus encodes at 48 kHz only. */
export const audioFileSampleRate = (container: AudioContainer, inputRate: number | undefined): number =>
  container === 'opus' ? 48000 : inputRate || 44100;
