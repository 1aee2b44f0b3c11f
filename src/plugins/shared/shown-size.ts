import type { VideoFacts } from '../../sdk.js';

/**
 * A picture's size as it is shown and as the decoder hands it to the filters: ffmpeg turns a picture
 * whose container's display matrix rotates it a quarter turn (a phone's portrait video), so width and
 * height swap.
 */
export function shownSize(video: VideoFacts): { width: number; height: number } {
  const quarter = Math.abs(Math.round((video.rotation ?? 0) / 90)) % 2 === 1;
  return quarter ? { width: video.height, height: video.width } : { width: video.width, height: video.height };
}
