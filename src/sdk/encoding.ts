// From its home in the engine, not through sdk.ts: sdk.ts re-exports this module, so that would make a cycle.
import { Param } from '../engine/contract/plugin.js';
import type { MediaFacts } from '../engine/contract/media-facts.js';
import type { AudioContainer } from './audio-encoding.js';

/**
 * The one place that chooses encoders: which codecs each container takes, what to encode with
 * when a stream cannot be copied, and the container flags. Hardware encoders would be added here.
 */

export const VIDEO_CONTAINERS = ['mp4', 'mov', 'mkv', 'avi', 'webm'] as const;
export type VideoContainer = (typeof VIDEO_CONTAINERS)[number];

interface ContainerProfile {
  /** Video codecs that can be copied into this container as they are. */
  copyVideo: readonly string[];
  /** Audio codecs that can be copied into this container as they are. */
  copyAudio: readonly string[];
  video: 'h264' | 'mpeg4' | 'vp9';
  audio: 'aac' | 'mp3' | 'opus';
  /** Options of the muxer. */
  muxer: readonly string[];
}

const PROFILES: Record<VideoContainer, ContainerProfile> = {
  // +faststart moves the index to the front, so players and upload sites can start before the end arrives.
  mp4: {
    copyVideo: ['h264', 'hevc', 'mpeg4', 'av1'],
    copyAudio: ['aac', 'mp3'],
    video: 'h264',
    audio: 'aac',
    muxer: ['-movflags', '+faststart'],
  },
  mov: {
    copyVideo: ['h264', 'hevc', 'mpeg4', 'prores', 'mjpeg'],
    copyAudio: ['aac', 'mp3', 'pcm_s16le'],
    video: 'h264',
    audio: 'aac',
    muxer: ['-movflags', '+faststart'],
  },
  mkv: {
    copyVideo: ['h264', 'hevc', 'vp8', 'vp9', 'av1', 'mpeg4'],
    copyAudio: ['aac', 'mp3', 'opus', 'vorbis', 'flac', 'ac3'],
    video: 'h264',
    audio: 'aac',
    muxer: [],
  },
  // AVI players expect MPEG-4 Part 2 (Xvid) with MP3.
  avi: {
    copyVideo: ['mpeg4', 'mjpeg'],
    copyAudio: ['mp3', 'ac3', 'pcm_s16le'],
    video: 'mpeg4',
    audio: 'mp3',
    muxer: [],
  },
  webm: { copyVideo: ['vp8', 'vp9', 'av1'], copyAudio: ['opus', 'vorbis'], video: 'vp9', audio: 'opus', muxer: [] },
};

/** The trade-off users choose between encoding speed and file size; `balanced` by default. */
export const QUALITIES = ['fast', 'balanced', 'small'] as const;
export type Quality = (typeof QUALITIES)[number];

/** The `quality` parameter of every operation that encodes video. */
export const qualityParam = () =>
  Param.choice(QUALITIES, {
    default: 'balanced',
    description:
      'Speed against size when video is encoded: fast (quickest, largest), balanced, small (slowest, smallest)',
  });

export interface VideoEncodeOptions {
  /** Pictures that hold still for seconds (slideshows): x264 can reuse them almost for free. */
  still?: boolean;
  quality?: Quality;
  /** Pixels of one frame, when the plan knows them: a frame above LARGE_FRAME_PIXELS is encoded in less memory. */
  framePixels?: number;
}

/**
 * Above 4K UHD's pixels, the frames an encoder holds at once make most of a command's memory: x264's own choice (a
 * thread and a half a core, look-ahead, B-frames) took 3.2 GB for 7680x4320 frames, one thread without look-ahead
 * or B-frames 0.6 GB; MPEG-4 Part 2 0.7 GB against 0.2 GB with one thread. Such frames are encoded so, a little
 * larger and slower; VP9 holds about 2.4 GB at 8K whatever its settings.
 */
const LARGE_FRAME_PIXELS = 3840 * 2160;

/** Whether frames of `pixels` are large enough for their encoder to be held to less memory (LARGE_FRAME_PIXELS). */
export const isLargeFrame = (pixels: number): boolean => pixels > LARGE_FRAME_PIXELS;

/** x264 preset and CRF per quality (docs/performance.md has their measured speed and size). */
const X264: Record<Quality, { preset: string; crf: number }> = {
  fast: { preset: 'superfast', crf: 23 },
  balanced: { preset: 'veryfast', crf: 23 },
  small: { preset: 'medium', crf: 26 },
};
/** For still pictures x264 spends little per repeated frame; CRF 26 keeps SSIM above 0.99 against CRF 23 at medium. */
const X264_STILL: Record<Quality, { preset: string; crf: number }> = {
  fast: { preset: 'ultrafast', crf: 23 },
  balanced: { preset: 'superfast', crf: 26 },
  small: { preset: 'veryfast', crf: 28 },
};
/** libvpx-vp9 speed (cpu-used; realtime deadline below 5) and CRF per quality. */
const VP9: Record<Quality, { cpuUsed: number; crf: number }> = {
  fast: { cpuUsed: 8, crf: 36 },
  balanced: { cpuUsed: 7, crf: 34 },
  small: { cpuUsed: 4, crf: 36 },
};
const MPEG4_QSCALE: Record<Quality, number> = { fast: 5, balanced: 4, small: 6 };

/** Encoder options for a container's video codec. */
export function videoEncoder(container: VideoContainer, options: VideoEncodeOptions = {}): string[] {
  const quality = options.quality ?? 'balanced';
  const large = isLargeFrame(options.framePixels ?? 0);
  switch (PROFILES[container].video) {
    case 'h264': {
      const lean = large ? ['threads=1', 'bframes=0', 'rc-lookahead=0', 'sync-lookahead=0'] : [];
      if (options.still) {
        const { preset, crf } = X264_STILL[quality];
        // Still pictures: no B-frames, one reference and no look-ahead cost little and lose nothing here.
        const still = ['bframes=0', 'ref=1', 'rc-lookahead=0'];
        return [
          '-c:v',
          'libx264',
          '-preset',
          preset,
          '-tune',
          'stillimage',
          '-crf',
          String(crf),
          '-x264-params',
          [...new Set([...still, ...lean])].join(':'),
          '-pix_fmt',
          'yuv420p',
        ];
      }
      const { preset, crf } = X264[quality];
      return [
        ...['-c:v', 'libx264', '-preset', preset, '-crf', String(crf)],
        ...(large ? ['-x264-params', lean.join(':')] : []),
        ...['-pix_fmt', 'yuv420p'],
      ];
    }
    case 'mpeg4':
      return [
        ...['-c:v', 'mpeg4', '-q:v', String(MPEG4_QSCALE[quality]), '-vtag', 'XVID'],
        ...(large ? ['-threads', '1'] : []),
        ...['-pix_fmt', 'yuv420p'],
      ];
    case 'vp9': {
      const { cpuUsed, crf } = VP9[quality];
      // The realtime deadline with a high cpu-used keeps VP9 within a few times x264's speed; row-mt uses every core.
      const deadline = cpuUsed >= 5 ? 'realtime' : 'good';
      return [
        '-c:v',
        'libvpx-vp9',
        '-crf',
        String(crf),
        '-b:v',
        '0',
        '-deadline',
        deadline,
        '-cpu-used',
        String(cpuUsed),
        '-row-mt',
        '1',
        '-pix_fmt',
        'yuv420p',
      ];
    }
  }
}

/** Encoder options for a container's audio codec. */
export function audioEncoder(container: VideoContainer): string[] {
  switch (PROFILES[container].audio) {
    case 'aac':
      return ['-c:a', 'aac', '-b:a', '160k'];
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-q:a', '4'];
    case 'opus':
      return ['-c:a', 'libopus', '-b:a', '128k'];
  }
}

/** Copy the video stream when the container takes its codec, else encode it. */
export function videoCodecFor(
  container: VideoContainer,
  facts: MediaFacts | undefined,
  quality: Quality = 'balanced',
): string[] {
  const codec = facts?.video?.codec;
  return codec && PROFILES[container].copyVideo.includes(codec)
    ? ['-c:v', 'copy']
    : videoEncoder(container, { quality });
}

/** Copy the audio stream when the container takes its codec, else encode it. */
export function audioCodecFor(container: VideoContainer, facts: MediaFacts | undefined): string[] {
  const codec = facts?.audio?.codec;
  return codec && PROFILES[container].copyAudio.includes(codec) ? ['-c:a', 'copy'] : audioEncoder(container);
}

/** Muxer options and the explicit muxer name (the output file's extension is not trusted to choose it). */
export function muxerFor(container: VideoContainer): string[] {
  const name = container === 'mkv' ? 'matroska' : container;
  return [...PROFILES[container].muxer, '-f', name];
}

/** The smallest even number at or above `n` (yuv420p needs even sizes). */
export const even = (n: number) => Math.max(2, Math.ceil(n / 2) * 2);

/**
 * The filter that pads a picture of odd width or height with one black column or row, for a
 * `videoArgs` (from `videoCodecFor` or `videoEncoder`) that encodes H.264: x264 refuses odd sizes
 * in 4:2:0. The empty string when the stream is copied, the encoder takes odd sizes, or the size is even.
 * For a filter graph that keeps the picture's size (plans that scale do so to `even()` sizes).
 */
export function evenPadFilter(videoArgs: readonly string[], video: MediaFacts['video']): string {
  if (!video || !videoArgs.includes('libx264')) return '';
  if (video.width % 2 === 0 && video.height % 2 === 0) return '';
  return `pad=${even(video.width)}:${even(video.height)}:0:0:color=black`;
}

/** `evenPadFilter` as `-vf` options, for plans that do not filter the picture otherwise. */
export function evenSizeArgs(videoArgs: readonly string[], video: MediaFacts['video']): string[] {
  const pad = evenPadFilter(videoArgs, video);
  return pad ? ['-vf', pad] : [];
}

/** Codecs WebM holds: Matroska with only these is told as `webm`, which ffprobe's format name cannot tell apart. */
const WEBM_CODECS = ['vp8', 'vp9', 'av1', 'opus', 'vorbis'];

/**
 * The input's own container, as the extension of an output that keeps it (`<ext>` when no `format` is
 * given): MP4 and MOV are `mp4` (`m4a` without video), Matroska `webm` when its codecs are WebM's and
 * `mkv` otherwise, AVI `avi`; audio files their own (`mp3`, `wav`, `flac`, `aac`, `ogg`, or `opus` for
 * Ogg Opus). Anything else, or an audio container holding video, is `mp4` (`m4a` without video): the
 * output is then encoded for that container.
 */
export function containerOf(facts: MediaFacts): VideoContainer | AudioContainer {
  const demuxer = facts.formatName.split(',')[0];
  const codecs = [facts.video?.codec, facts.audio?.codec].filter((codec) => codec !== undefined);
  if (demuxer === 'matroska') return codecs.every((codec) => WEBM_CODECS.includes(codec)) ? 'webm' : 'mkv';
  if (demuxer === 'avi') return 'avi';
  if (!facts.video) {
    if (demuxer === 'ogg') return facts.audio?.codec === 'opus' ? 'opus' : 'ogg';
    if (demuxer === 'mp3' || demuxer === 'wav' || demuxer === 'flac' || demuxer === 'aac') return demuxer;
  }
  return facts.video ? 'mp4' : 'm4a';
}

/** Whether a container is one of the video containers (`mp4`, `mov`, `mkv`, `avi`, `webm`). */
export const isVideoContainer = (container: string): container is VideoContainer =>
  (VIDEO_CONTAINERS as readonly string[]).includes(container);
