/**
 * What a probe learns about one input, in a file of its own: the probe, the header readers it asks
 * first, the plugin contract and the input policy all speak of these facts, and none of them needs
 * the probe itself to do so.
 */

/** What a plugin may know about an input before it builds its command. */
export interface MediaFacts {
  /** ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2` or `png_pipe`. */
  formatName: string;
  /**
   * Seconds, when the container says; for MP4/MOV (its sample tables) and Matroska/WebM (its last
   * packets), how far the streams really reach when that is clearly longer than the header claims.
   */
  duration?: number;
  video?: VideoFacts;
  audio?: AudioFacts;
  subtitle?: { codec: string };
  /** An image is a single picture (png, jpeg, webp, ...), not a video stream. */
  isImage: boolean;
  /** Streams in the container, of every kind (cover art and data tracks too), when ffprobe read it. */
  streamCount?: number;
  /** Bytes of the whole file. */
  size?: number;
  /**
   * Bits per second of the whole file, as ffprobe reports it (ffmpeg divides the size by the duration);
   * absent when there is no duration.
   */
  bitRate?: number;
  /** The video, audio and subtitle streams, numbered as ffprobe numbers them (data streams are left out). */
  streams?: StreamFacts[];
  /**
   * The container's tags (title, artist, encoder, ...) under the names ffmpeg gives them, within the
   * probe's limits (tag-limits.ts).
   */
  tags?: Record<string, string>;
  /** True when a tag was cut to the limits or left out. */
  tagsTruncated?: boolean;
}

/** One stream of the container, as `/media-metadata/` reports it. */
export type StreamFacts =
  | { index: number; type: 'video'; codec: string; width: number; height: number; fps: number; rotation: number }
  | { index: number; type: 'audio'; codec: string; sampleRate: number; channels: number }
  | { index: number; type: 'subtitle'; codec: string };

/** A video stream's entry, from its facts: the readers and ffprobe's reading make it the same way. */
export const videoStream = (index: number, video: VideoFacts): StreamFacts => ({
  index,
  type: 'video',
  codec: video.codec,
  width: video.width,
  height: video.height,
  fps: video.fps,
  rotation: video.rotation ?? 0,
});

/** An audio stream's entry, from its facts. */
export const audioStream = (index: number, audio: AudioFacts): StreamFacts => ({
  index,
  type: 'audio',
  codec: audio.codec,
  sampleRate: audio.sampleRate,
  channels: audio.channels,
});

export interface VideoFacts {
  codec: string;
  width: number;
  height: number;
  /** Frames per second, from the stream's average (or real) frame rate. */
  fps: number;
  /** The pictures of an animated GIF, counted without decoding them (each is a whole canvas of width x height). */
  frames?: number;
  pixFmt: string;
  profile?: string;
  /** The stream's time base as ffprobe gives it (`1/12800`), when ffprobe read it. */
  timeBase?: string;
  /**
   * MD5 of the codec's setup data (H.264's SPS and PPS), when the stream has some: equal hashes,
   * interchangeable streams.
   */
  extradataHash?: string;
  /**
   * Degrees the container's display matrix turns the picture, as ffprobe reports it (counter-clockwise:
   * a phone's portrait video is -90); absent when upright.
   */
  rotation?: number;
}

export interface AudioFacts {
  codec: string;
  sampleRate: number;
  channels: number;
  channelLayout?: string;
  profile?: string;
  /** The stream's time base (`1/48000`). */
  timeBase?: string;
}
