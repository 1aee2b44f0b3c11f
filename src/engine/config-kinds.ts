import path from 'node:path';

/**
 * The kinds of value a setting holds: how its text (an environment variable, a flag) is read, and how a value is
 * written back the way a user would write it (docs/configuration.md's defaults, the limits in error messages).
 */
export interface Kind<T> {
  /** Reads trimmed text; throws `Unreadable` when it cannot. */
  read(text: string): T;
  /** The value in Markdown, as a user would give it. */
  show(value: T): string;
  /** Makes the value in force, given or default, what the code uses (a folder made absolute at load). */
  settle?(value: T): T;
  /** Whether its flag takes no value: given, it turns the setting on. */
  switch?: boolean;
}

/**
 * What a kind throws for text it cannot read: what it expected, and the value as the message shows it when that is not
 * the text given (a duration out of range is shown in seconds).
 */
export class Unreadable extends Error {
  constructor(
    readonly expected: string,
    readonly got?: string,
  ) {
    super(`expected ${expected}`);
  }
}

const code = (text: string): string => `\`${text}\``;

/** The largest of `units` (largest first) that `value` is a whole number of. */
const largestUnit = (value: number, units: ReadonlyArray<readonly [string, number]>) =>
  units.find(([, size]) => value >= size && value % size === 0);

interface Range {
  min: number;
  max?: number;
}

/** Refuses a number outside the range, saying the range as `show` writes it and the value as `got`. */
function inRange(value: number, range: Range | undefined, show: (value: number) => string, got: string): number {
  if (!range || (value >= range.min && value <= (range.max ?? Infinity))) return value;
  const expected =
    range.max === undefined ? `at least ${show(range.min)}` : `from ${show(range.min)} to ${show(range.max)}`;
  throw new Unreadable(expected, got);
}

/** A whole number (a port, a count, milliseconds of event-loop delay). */
export const whole = (range?: Range): Kind<number> => ({
  read(text) {
    if (!/^\d+$/.test(text)) throw new Unreadable('a whole number');
    return inRange(Number(text), range, String, String(Number(text)));
  },
  show: (value) => code(String(value)),
});

const BINARY_UNITS = [
  ['TiB', 1024 ** 4],
  ['GiB', 1024 ** 3],
  ['MiB', 1024 ** 2],
  ['KiB', 1024],
] as const;

/** A number of bytes, written whole; the docs add its size in binary units. */
export const bytes = (): Kind<number> => ({
  ...whole(),
  show: (value) => {
    const unit = largestUnit(value, BINARY_UNITS);
    return unit ? `${code(String(value))} (${value / unit[1]} ${unit[0]})` : code(String(value));
  },
});

const UNIT_MS: Record<string, number> = { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_UNITS = [
  ['d', UNIT_MS.d!],
  ['h', UNIT_MS.h!],
  ['m', UNIT_MS.m!],
  ['s', UNIT_MS.s!],
] as const;
/** A duration in the largest unit it is a whole number of: `2m`, `1d` rather than `120`, `86400`. */
function showDuration(ms: number): string {
  const unit = largestUnit(ms, DURATION_UNITS);
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms / 1000}`;
}

/** A duration, in milliseconds: seconds, or a number with `s`, `m`, `h` or `d`. */
export const duration = (range?: Range): Kind<number> => ({
  read(text) {
    const match = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/i.exec(text);
    if (!match) throw new Unreadable('a duration such as 30, 30s, 5m, 24h or 7d');
    const ms = Math.round(Number(match[1]) * UNIT_MS[match[2]!.toLowerCase()]!);
    return inRange(ms, range, showDuration, `${ms / 1000}s`);
  },
  show: (value) => code(showDuration(value)),
});

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);

/** On or off. */
export const onOff = (): Kind<boolean> => ({
  read(text) {
    const lower = text.toLowerCase();
    if (TRUE.has(lower)) return true;
    if (FALSE.has(lower)) return false;
    throw new Unreadable('one of 1, true, yes, on, 0, false, no, off');
  },
  show: (value) => (value ? 'on' : 'off'),
  switch: true,
});

/** Text taken as given. */
export const text = (): Kind<string> => ({
  read: (value) => value,
  show: (value) => (value === '' ? 'empty' : code(value)),
});

/** A base URL: trailing slashes dropped, so that paths are appended to it with one. */
export const baseUrl = (): Kind<string> => ({ ...text(), read: (value) => value.replace(/\/+$/, '') });

/** A folder, made absolute against the working directory when the configuration is loaded. */
export const folder = (): Kind<string> => ({ ...text(), settle: (value) => path.resolve(value) });

/** One of `values`, as written. */
export const oneOf = <const T extends string>(values: readonly T[]): Kind<T> => ({
  read(value) {
    if (!values.includes(value as T)) throw new Unreadable(`one of ${values.join(', ')}`, value);
    return value as T;
  },
  show: (value) => code(value),
});

/** A comma list, empty items dropped, each item as `item` makes it (lower case for host names). */
export const list = (item: (text: string) => string): Kind<string[]> => ({
  read: (value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map(item),
  show: (value) => (value.length === 0 ? 'unset' : code(value.join(','))),
});

/** List items: kept as written (paths, package names, keys). */
export const asWritten = (item: string): string => item;
/** List items: host names, which are case-insensitive. */
export const lowerCase = (item: string): string => item.toLowerCase();
/** List items: browser origins, as a browser's `Origin` header has them (lower case, no trailing slash). */
export const origin = (item: string): string => item.toLowerCase().replace(/\/+$/, '');
