import { paramError, shortened } from '../errors.js';
import type { MediaFacts } from './media-facts.js';

/**
 * Times and ranges of times as users write them in fields, parsed in this one place for every
 * operation: seconds as a decimal number (`12.5`) or `[HH:]MM:SS[.mmm]` (`01:02:03.5`); a range is
 * `<time>-<time>`; a list of times or ranges is comma-separated.
 */

/** A span of the input, in seconds from its start; `end` is after `start`. */
export interface TimeRange {
  start: number;
  end: number;
}

/** The form of a time, in words, for descriptions and 400s. */
export const TIME_FORM = 'seconds (12.5) or [HH:]MM:SS[.mmm] (01:02:03.5)';

const SECONDS = /^(\d+\.?\d*|\.\d+)$/;
/** Minutes unbounded without hours (`75:30`), below 60 with them; seconds always below 60. */
const CLOCK = /^(?:(\d+):([0-5]?\d)|(\d+)):([0-5]?\d(?:\.\d+)?)$/;

/** A time as a schema's `pattern` (JSON Schema, for documents): what `parseTime` reads, spaces around it allowed. */
export const TIME_PATTERN = `^\\s*(?:${SECONDS.source.slice(1, -1)}|${CLOCK.source.slice(1, -1)})\\s*$`;

/** A time as seconds, or undefined when `text` is not one. */
function secondsOf(text: string): number | undefined {
  const trimmed = text.trim();
  let value: number | undefined;
  if (SECONDS.test(trimmed)) value = Number(trimmed);
  else {
    const clock = CLOCK.exec(trimmed);
    if (clock) {
      const [, hours, minutes, bareMinutes, seconds] = clock;
      value = Number(hours ?? 0) * 3600 + Number(minutes ?? bareMinutes) * 60 + Number(seconds);
    }
  }
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

/** One time of field `key`, in seconds; a 400 naming the field and the form otherwise. */
export function parseTime(key: string, text: string): number {
  const value = secondsOf(text);
  if (value === undefined)
    throw paramError(`Expected \`${key}\` to be a time, ${TIME_FORM}, got \`${shortened(text)}\``);
  return value;
}

/** Splits a comma list of field `key`, refusing one with no item. */
function items(key: string, text: string, what: string): string[] {
  const list = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (list.length === 0) throw paramError(`Expected \`${key}\` to list at least one ${what}, got none`);
  return list;
}

/** A comma-separated list of times, in seconds, in the order given. */
export function parseTimes(key: string, text: string): number[] {
  return items(key, text, 'time').map((item) => {
    const value = secondsOf(item);
    if (value === undefined)
      throw paramError(`Expected each item of \`${key}\` to be a time, ${TIME_FORM}, got \`${shortened(item)}\``);
    return value;
  });
}

/** A comma-separated list of ranges `<time>-<time>`, in the order given; each must end after it starts. */
export function parseRanges(key: string, text: string): TimeRange[] {
  return items(key, text, 'range').map((item) => {
    const [from, to, ...rest] = item.split('-');
    const start = from === undefined ? undefined : secondsOf(from);
    const end = to === undefined ? undefined : secondsOf(to);
    if (rest.length > 0 || start === undefined || end === undefined) {
      throw paramError(
        `Expected each item of \`${key}\` to be a range <start>-<end> of times, ${TIME_FORM}, such as ` +
          `10-20.5 or 00:01:00-00:01:30, got \`${shortened(item)}\``,
      );
    }
    if (end <= start)
      throw paramError(`Expected the range \`${shortened(item)}\` of \`${key}\` to end after it starts`);
    return { start, end };
  });
}

/** Seconds as a user reads them: `12.5`, `90`, at most three decimals. */
const shown = (seconds: number): string => String(Math.round(seconds * 1000) / 1000);

/**
 * Refuses a time of field `key` past the input's end with a 400 naming the field and the input's
 * duration (`facts` from the builder's inputs); nothing is refused when the duration is unknown.
 * Returns the time, so a builder can check as it reads.
 */
export function timeWithin(key: string, seconds: number, facts: MediaFacts): number {
  if (facts.duration !== undefined && seconds > facts.duration) {
    throw paramError(
      `\`${key}\` is ${shown(seconds)} s, past the end of the input, which lasts ${shown(facts.duration)} s`,
    );
  }
  return seconds;
}
