/**
 * Reading and writing the parts of ASS scripts (the format libass draws) that caption styles
 * touch: the layout resolution, the style lines and events, colours, times and event text. Every value
 * written here is generated from validated parameters; user text only enters as escaped event text.
 */

/** The fields of a `[V4+ Styles]` line, in the order of the `Format:` line mediaflow writes. */
export const STYLE_FORMAT = [
  'Name',
  'Fontname',
  'Fontsize',
  'PrimaryColour',
  'SecondaryColour',
  'OutlineColour',
  'BackColour',
  'Bold',
  'Italic',
  'Underline',
  'StrikeOut',
  'ScaleX',
  'ScaleY',
  'Spacing',
  'Angle',
  'BorderStyle',
  'Outline',
  'Shadow',
  'Alignment',
  'MarginL',
  'MarginR',
  'MarginV',
  'Encoding',
] as const;

/** The coordinate space of a script: sizes and margins are in its units, which libass scales to the frame. */
export interface ScriptGeometry {
  playResX: number;
  playResY: number;
  /** `ScaledBorderAndShadow: yes`: outlines scale with the script like text; otherwise they are in frame pixels. */
  scaledBorders: boolean;
}

/** A `Key: value` of the `[Script Info]` section, case-insensitive, or undefined. */
function infoValue(ass: string, key: string): string | undefined {
  const info = /^\s*\[Script Info\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/im.exec(ass)?.[1] ?? '';
  return new RegExp(`^\\s*${key}\\s*:\\s*(.*?)\\s*$`, 'im').exec(info)?.[1];
}

/** The script's PlayResX/PlayResY, completed as libass completes missing ones (384x288 when both are). */
export function scriptGeometry(ass: string): ScriptGeometry {
  const read = (key: string) => {
    const value = Number.parseInt(infoValue(ass, key) ?? '', 10);
    return Number.isFinite(value) && value > 0 ? value : 0;
  };
  let x = read('PlayResX');
  let y = read('PlayResY');
  if (!x && !y) [x, y] = [384, 288];
  else if (!x) x = y === 1024 ? 1280 : Math.round((y * 4) / 3);
  else if (!y) y = x === 1280 ? 1024 : Math.round((x * 3) / 4);
  return { playResX: x, playResY: y, scaledBorders: /^yes$/i.test(infoValue(ass, 'ScaledBorderAndShadow') ?? '') };
}

/**
 * Reads and sets a style line's fields by their `Format:` name (case-insensitive); names the line lacks are ignored.
 */
export interface StyleFields {
  get(name: string): string | undefined;
  set(name: string, value: string | number): void;
  /** An SSA (`[V4 Styles]`) style: other alignment numbers, `TertiaryColour` for the outline. */
  ssa: boolean;
}

/** The script with every style line of its styles section rewritten by `edit`; everything else kept byte for byte. */
export function mapStyles(ass: string, edit: (style: StyleFields) => void): string {
  let section = '';
  let format: string[] = [];
  return ass
    .split(/(?<=\n)/)
    .map((line) => {
      const body = line.replace(/\r?\n$/, '');
      const heading = /^\s*\[(.+)\]\s*$/.exec(body);
      if (heading) section = heading[1]!.toLowerCase();
      if (!/^v4\+? styles\+?$/.test(section)) return line;
      const entry = /^(\s*)(Format|Style)(\s*:\s*)(.*)$/i.exec(body);
      if (!entry) return line;
      const [, indent, kind, colon, rest] = entry as unknown as [string, string, string, string, string];
      if (kind.toLowerCase() === 'format') {
        format = rest.split(',').map((name) => name.trim().toLowerCase());
        return line;
      }
      // The last field takes the rest of the line, commas included, as libass reads it.
      const parts = rest.split(',');
      const values = [...parts.slice(0, format.length - 1), parts.slice(format.length - 1).join(',')];
      const index = (name: string) => format.indexOf(name.toLowerCase());
      edit({
        get: (name) => values[index(name)]?.trim(),
        set: (name, value) => {
          const i = index(name);
          if (i >= 0 && i < values.length) values[i] = typeof value === 'number' ? formatNumber(value) : value;
        },
        ssa: !section.includes('+'),
      });
      return `${indent}${kind}${colon}${values.join(',')}${line.slice(body.length)}`;
    })
    .join('');
}

/** A number as ASS writes it: at most two decimals. */
export const formatNumber = (value: number): string => String(Math.round(value * 100) / 100);

/**
 * `#RRGGBB` or `#RRGGBBAA` (AA the opacity, FF opaque; already validated) as ASS's `&HAABBGGRR` (AA the transparency).
 */
export function assColour(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => hex.slice(i, i + 2).toUpperCase());
  const opacity = hex.length === 9 ? Number.parseInt(hex.slice(7, 9), 16) : 255;
  return `&H${(255 - opacity).toString(16).toUpperCase().padStart(2, '0')}${b}${g}${r}`;
}

/** `H:MM:SS.cc`, the time of an ASS event (centiseconds). */
export function assTime(totalSeconds: number): string {
  const cs = Math.round(totalSeconds * 100);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${Math.floor(cs / 360_000)}:${pad(Math.floor(cs / 6000) % 60)}:` +
    `${pad(Math.floor(cs / 100) % 60)}.${pad(cs % 100)}`
  );
}

/** `H:MM:SS.cc` as seconds, as libass reads an event's time; NaN when it is not one. */
export function assSeconds(time: string): number {
  const match = /^\s*(\d+):(\d+):(\d+(?:\.\d*)?)\s*$/.exec(time);
  return match ? Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]) : Number.NaN;
}

/** The fields of an event in libass's order, for an `[Events]` section that has no `Format:` line. */
const EVENT_FORMAT = ['layer', 'start', 'end', 'style', 'name', 'marginl', 'marginr', 'marginv', 'effect', 'text'];

/** A `Dialogue:` event of a script. */
export interface Dialogue {
  /** A field by its lower-case name in the section's `Format:` line; '' when the line has no such field. */
  field: (name: string) => string;
  /** The last field, the text: it takes the rest of the line, commas included. */
  text: string;
}

/**
 * The `Dialogue:` events of a script's `[Events]` section (comments and the rest dropped), their fields found by the
 * section's `Format:` line as libass finds them, and in libass's own order before any.
 */
export function dialogues(ass: string): Dialogue[] {
  let inEvents = false;
  let format = EVENT_FORMAT;
  const events: Dialogue[] = [];
  for (const line of ass.split(/\r?\n/)) {
    const heading = /^\s*\[(.+)\]\s*$/.exec(line);
    if (heading) inEvents = heading[1]!.toLowerCase() === 'events';
    const entry = inEvents ? /^\s*(format|dialogue)\s*:\s*(.*)$/i.exec(line) : null;
    if (!entry) continue;
    if (entry[1]!.toLowerCase() === 'format') {
      format = entry[2]!.split(',').map((name) => name.trim().toLowerCase());
      continue;
    }
    const parts = entry[2]!.split(',');
    const names = format;
    const values = [...parts.slice(0, names.length - 1), parts.slice(names.length - 1).join(',')];
    events.push({ field: (name) => values[names.indexOf(name)] ?? '', text: values.at(-1)! });
  }
  return events;
}

/**
 * Text as an ASS event draws it literally: `{` and `}` escaped (they would open and close override
 * tags), and a word joiner after each backslash, which would otherwise start `\N`, `\h` or `\{`.
 */
export const assText = (text: string): string => text.replace(/\\/g, '\\\u2060').replace(/[{}]/g, (c) => `\\${c}`);

/**
 * Text of one or more lines as an ASS event draws it literally: each line escaped (`assText`), the
 * lines joined by `\N`, ASS's line break (a newline would end the event's line in the script).
 */
export const assLines = (text: string): string =>
  text
    .split(/\r\n|\r|\n/)
    .map(assText)
    .join('\\N');
