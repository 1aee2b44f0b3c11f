import { mediaError } from './errors.js';
import { runFfprobe, type RunOptions } from './ffmpeg.js';
import { ALL_DEMUXERS, lockedInputOptions } from './input-policy.js';

/** What a plugin may know about an input before it builds its command. */
export interface MediaFacts {
  /** ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2` or `png_pipe`. */
  formatName: string;
  /** Seconds, when the container says. */
  duration?: number;
  video?: VideoFacts;
  audio?: AudioFacts;
  subtitle?: { codec: string };
  /** An image is a single picture (png, jpeg, webp, ...), not a video stream. */
  isImage: boolean;
}

export interface VideoFacts {
  codec: string;
  width: number;
  height: number;
  /** Frames per second, from the stream's average (or real) frame rate. */
  fps: number;
  pixFmt: string;
  profile?: string;
}

export interface AudioFacts {
  codec: string;
  sampleRate: number;
  channels: number;
  channelLayout?: string;
  profile?: string;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  pix_fmt?: string;
  profile?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  disposition?: { attached_pic?: number };
}

interface ProbeOutput {
  format?: { format_name?: string; duration?: string };
  streams?: ProbeStream[];
}

/** `30000/1001` → 29.97; `0/0` → 0. */
function rate(text: string | undefined): number {
  const [num, den] = (text ?? '0/0').split('/').map(Number);
  return num && den ? num / den : 0;
}

/** Formats ffprobe names for single pictures. */
const IMAGE_FORMAT = /(^|,)(image2|[a-z0-9]+_pipe|gif|webp)(,|$)/;

/** Turns ffprobe's JSON into facts. Cover art in audio files (attached pictures) is not a video stream. */
export function factsFromProbe(output: ProbeOutput): MediaFacts {
  const streams = output.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const subtitle = streams.find((s) => s.codec_type === 'subtitle');
  const formatName = output.format?.format_name ?? 'unknown';
  const duration = Number(output.format?.duration);
  const facts: MediaFacts = { formatName, isImage: Boolean(video) && !audio && IMAGE_FORMAT.test(formatName) };
  if (Number.isFinite(duration) && duration > 0) facts.duration = duration;
  if (video) {
    facts.video = {
      codec: video.codec_name ?? 'unknown',
      width: video.width ?? 0,
      height: video.height ?? 0,
      fps: rate(video.avg_frame_rate) || rate(video.r_frame_rate),
      pixFmt: video.pix_fmt ?? 'unknown',
      ...(video.profile ? { profile: video.profile } : {}),
    };
  }
  if (audio) {
    facts.audio = {
      codec: audio.codec_name ?? 'unknown',
      sampleRate: Number(audio.sample_rate ?? 0),
      channels: audio.channels ?? 0,
      ...(audio.channel_layout ? { channelLayout: audio.channel_layout } : {}),
      ...(audio.profile ? { profile: audio.profile } : {}),
    };
  }
  if (subtitle) facts.subtitle = { codec: subtitle.codec_name ?? 'unknown' };
  return facts;
}

/** Probes one local file (named relative to `options.cwd`). Unreadable media is a 422. */
export async function probeFile(ffprobe: string, file: string, options: RunOptions): Promise<MediaFacts> {
  let stdout: string;
  try {
    const args = ['-show_format', '-show_streams', '-of', 'json', ...lockedInputOptions(ALL_DEMUXERS), file];
    stdout = await runFfprobe(ffprobe, args, options);
  } catch (error) {
    if (error instanceof Error && 'stderrTail' in error) {
      throw mediaError(`Input is not readable media (${(error as { stderrTail: string }).stderrTail || 'unknown format'})`, error);
    }
    throw error;
  }
  return factsFromProbe(JSON.parse(stdout) as ProbeOutput);
}
