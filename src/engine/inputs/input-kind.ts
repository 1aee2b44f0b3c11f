import { mediaError } from '../errors.js';
import type { InputKind } from '../contract/plugin.js';
import type { MediaFacts } from '../contract/media-facts.js';
import { DEMUXERS, demuxerOf } from '../exec/input-policy.js';

/**
 * Whether a probed input is what its parameter needs: its kind's streams, read by one of its kind's demuxers
 * (exec/input-policy.ts), within the limits on pixels and length.
 */

const describe = (facts: MediaFacts): string => {
  if (facts.isImage) return `an image (${demuxerOf(facts)})`;
  const streams = [
    facts.video && `video ${facts.video.codec}`,
    facts.audio && `audio ${facts.audio.codec}`,
    facts.subtitle && 'subtitles',
  ]
    .filter(Boolean)
    .join(' and ');
  return streams ? `${demuxerOf(facts)} with ${streams}` : `${demuxerOf(facts)} with no usable stream`;
};

/** Whether probed facts are what an input of `kind` needs: its streams, read by one of its demuxers. */
function fits(facts: MediaFacts, kind: InputKind): boolean {
  const streams: Record<InputKind, boolean> = {
    audio: Boolean(facts.audio),
    video: Boolean(facts.video) && !facts.isImage,
    image: facts.isImage,
    subtitle: Boolean(facts.subtitle),
    media: Boolean(facts.audio || facts.video),
  };
  return streams[kind] && DEMUXERS[kind].includes(demuxerOf(facts));
}

/** Throws a 422 when probed facts do not fit what an input parameter needs. */
export function checkKind(
  source: string,
  facts: MediaFacts,
  kind: InputKind,
  limits: { maxPixels: number; maxDurationMs: number },
): void {
  const { maxPixels, maxDurationMs } = limits;
  if (!fits(facts, kind)) {
    throw mediaError(
      `Input ${source} is not ${kind === 'image' || kind === 'audio' ? `an ${kind}` : `a ${kind}`} file: ` +
        `found ${describe(facts)}`,
    );
  }
  const pixels = (facts.video?.width ?? 0) * (facts.video?.height ?? 0);
  if (pixels > maxPixels) {
    throw mediaError(
      `Input ${source} is ${facts.video!.width}x${facts.video!.height}, more than the limit of ${maxPixels} ` +
        `pixels (MEDIAFLOW_MAX_PIXELS)`,
    );
  }
  if (facts.duration !== undefined && facts.duration * 1000 > maxDurationMs) {
    throw mediaError(
      `Input ${source} lasts ${Math.round(facts.duration)} s, more than the limit of ${maxDurationMs / 1000} ` +
        `s (MEDIAFLOW_MAX_DURATION)`,
    );
  }
}

/**
 * Throws a 422 unless probed facts fit some input: media (audio, video or a picture) or subtitles,
 * within the same limits. For a file whose use is not known yet (an upload); its use checks its kind.
 */
export function checkAnyKind(
  source: string,
  facts: MediaFacts,
  limits: { maxPixels: number; maxDurationMs: number },
): void {
  checkKind(source, facts, fits(facts, 'subtitle') ? 'subtitle' : 'media', limits);
}
