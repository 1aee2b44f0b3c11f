import type { MediaFacts } from '../contract/media-facts.js';

/**
 * Facts of a subtitle file told by its first lines, as ffmpeg's own probes tell them (each gives
 * its format the highest score): `WEBVTT`, `[Script Info]`, or a cue number followed by a timing
 * line. Subtitle files have no duration to ffprobe, so the format is all there is to know. Text
 * that looks like none of them goes to ffprobe.
 */

/** Each as ffmpeg's probe reads it: WebVTT at the very start, the others after empty lines. */
const FORMATS: Array<{ test: RegExp; formatName: string; codec: string }> = [
  { test: /^WEBVTT(?:[ \t\r\n]|$)/, formatName: 'webvtt', codec: 'webvtt' },
  { test: /^[\r\n]*\[Script Info\]/, formatName: 'ass', codec: 'ass' },
  // SubRip: a cue number alone on its line, then `00:00:01,000 --> 00:00:02,500`.
  {
    test: /^[\r\n]*\d+[ \t]*\r?\n\d+:\d+:\d+[,.]\d+[ \t]*-->[ \t]*\d+:\d+:\d+[,.]\d+/,
    formatName: 'srt',
    codec: 'subrip',
  },
];

/** Facts of a subtitle file whose first bytes are `head` (UTF-8), or undefined. */
export function subtitleFacts(head: Buffer): MediaFacts | undefined {
  const text = head
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  const format = FORMATS.find(({ test }) => test.test(text));
  if (!format) return undefined;
  const { formatName, codec } = format;
  return {
    formatName,
    isImage: false,
    streamCount: 1,
    subtitle: { codec },
    streams: [{ index: 0, type: 'subtitle', codec }],
    tags: {},
  };
}
