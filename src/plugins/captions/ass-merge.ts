import type { TimeRange } from '../../sdk.js';
import {
  assSeconds,
  assTime,
  dialogues,
  formatNumber,
  mapStyles,
  scriptGeometry,
  STYLE_FORMAT,
  type ScriptGeometry,
} from './ass-script.js';
import { EVENTS_HEAD, scriptHead } from './ass-captions.js';

/**
 * Several ASS scripts made one, so one `ass` filter draws all the text of a render's picture: each clip's script (a
 * subtitle file restyled as add-subtitles restyles it, or one written for a text or captions clip) keeps its styles,
 * renamed apart, and its events, put on the span's clock, cut to the clip's time and layered by track. The combined
 * script takes the layout (PlayResX/PlayResY) of the first part that asks to keep it (a subtitle file, whose events
 * may place text by coordinates of its own); the styles of every other part are scaled to it, which is exact for the
 * scripts mediaflow writes (their events hold no coordinates).
 */

/** One clip's script, and where it goes. */
export interface ScriptPart {
  ass: string;
  /** A generated prefix for its style names (no comma): its styles and the others' never share a name. */
  prefix: string;
  /** Seconds added to its events' times to put them on the timeline's clock (a subtitle file's: its clip's start). */
  shift: number;
  /** When the clip shows, on the timeline's clock: its events are cut to it. */
  window: TimeRange;
  /** The clip's track: events of a later track are drawn above an earlier one's. */
  track: number;
  /** The combined script takes this part's layout, when no earlier part asked for it. */
  keepLayout: boolean;
  /** Rewrites an event's text (word highlighting), given the event's length in seconds. */
  text?: (text: string, seconds: number) => string;
}

/** ASS layers a track's events take: track × LAYERS_PER_TRACK + the event's own layer (0 to 99). */
const LAYERS_PER_TRACK = 100;

/** The values of a style field an SSA (v4) script lacks, or any script leaves out of its `Format:` line. */
const STYLE_DEFAULTS: Record<string, string> = {
  Fontname: 'Arial',
  Fontsize: '18',
  PrimaryColour: '&H00FFFFFF',
  SecondaryColour: '&H00FFFFFF',
  OutlineColour: '&H00000000',
  BackColour: '&H00000000',
  Bold: '0',
  Italic: '0',
  Underline: '0',
  StrikeOut: '0',
  ScaleX: '100',
  ScaleY: '100',
  Spacing: '0',
  Angle: '0',
  BorderStyle: '1',
  Outline: '2',
  Shadow: '0',
  Alignment: '2',
  MarginL: '10',
  MarginR: '10',
  MarginV: '10',
  Encoding: '1',
};

interface Style {
  name: string;
  /** Values in STYLE_FORMAT's order. */
  values: string[];
}

interface Event {
  layer: number;
  start: number;
  end: number;
  style: string;
  /** Name, MarginL, MarginR, MarginV, Effect, as they are. */
  fields: string[];
  text: string;
}

/** SSA's alignment (1-3 bottom, 5-7 top, 9-11 middle) as ASS's numpad. */
function ssaAlignment(value: number): number {
  const column = (value - 1) % 4;
  const row = value >= 9 ? 3 : value >= 5 ? 6 : 0;
  return Math.min(Math.max(column, 0), 2) + 1 + row;
}

/**
 * The script's styles in STYLE_FORMAT's order, whatever its own `Format:` line (SSA's too); a script without any has
 * the one libass would draw it in, `Default`.
 */
function stylesOf(ass: string): Style[] {
  const styles: Style[] = [];
  mapStyles(ass, (fields) => {
    const values = STYLE_FORMAT.map((name) => {
      const own = fields.get(name) ?? (name === 'OutlineColour' ? fields.get('TertiaryColour') : undefined);
      if (name === 'Alignment' && fields.ssa && own !== undefined) return String(ssaAlignment(Number(own)));
      return own ?? STYLE_DEFAULTS[name] ?? '';
    });
    styles.push({ name: values[0]!, values });
  });
  if (styles.length > 0) return styles;
  return [{ name: 'Default', values: STYLE_FORMAT.map((name) => STYLE_DEFAULTS[name] ?? 'Default') }];
}

/** The script's `Dialogue:` events (dialogues), their layer, times and style read. */
const eventsOf = (ass: string): Event[] =>
  dialogues(ass).map((event) => {
    // SSA's first field is `Marked=0`, not a layer.
    const layer = Number.parseInt(event.field('layer'), 10);
    return {
      layer: Number.isFinite(layer) ? Math.min(Math.max(layer, 0), LAYERS_PER_TRACK - 1) : 0,
      start: assSeconds(event.field('start')),
      end: assSeconds(event.field('end')),
      style: event.field('style').trim(),
      fields: ['name', 'marginl', 'marginr', 'marginv', 'effect'].map(event.field),
      text: event.text,
    };
  });

/**
 * The name of the style an event of the part uses, as libass looks it up: leading `*` ignored, `Default` in any case,
 * the last style of that name; else the part's `Default`, else its first style.
 */
function styleLookup(styles: readonly Style[]): (name: string) => string | undefined {
  const normal = (name: string) => {
    const bare = name.replace(/^\*+/, '');
    return bare.toLowerCase() === 'default' ? 'Default' : bare;
  };
  const fallback = styles.find((style) => style.name === 'Default') ?? styles[0];
  return (name) => [...styles].reverse().find((style) => style.name === normal(name))?.name ?? fallback?.name;
}

/** Scales a number field by `ratio`, as ASS writes numbers. */
const scaled = (value: string, ratio: number) => {
  const number = Number(value);
  return Number.isFinite(number) ? formatNumber(number * ratio) : value;
};

/**
 * The style's sizes moved from the part's layout to the combined one: text, spacing and borders with the height
 * (borders in frame pixels when the part does not scale them), side margins with the width.
 */
function rescale(style: Style, from: ScriptGeometry, to: ScriptGeometry, frameHeight: number): Style {
  const y = to.playResY / from.playResY;
  const x = to.playResX / from.playResX;
  const border = from.scaledBorders ? y : to.playResY / frameHeight;
  const ratios: Record<string, number> = {
    Fontsize: y,
    Spacing: y,
    Outline: border,
    Shadow: border,
    MarginL: x,
    MarginR: x,
    MarginV: y,
  };
  const values = style.values.map((value, i) => scaled(value, ratios[STYLE_FORMAT[i]!] ?? 1));
  return { name: style.name, values };
}

/** The combined script of `parts`, its events on the span's clock (0 at `span.start`); see the module comment. */
export function mergeScripts(parts: readonly ScriptPart[], span: TimeRange, frameHeight: number): string {
  const layout = scriptGeometry((parts.find((part) => part.keepLayout) ?? parts[0])?.ass ?? '');
  const styleLines: string[] = [];
  const eventLines: string[] = [];
  for (const part of parts) {
    const geometry = scriptGeometry(part.ass);
    const styles = stylesOf(part.ass);
    const lookup = styleLookup(styles);
    for (const style of styles) {
      const { values } = rescale(style, geometry, layout, frameHeight);
      styleLines.push(`Style: ${[part.prefix + style.name, ...values.slice(1)].join(',')}`);
    }
    const from = Math.max(part.window.start, span.start);
    const until = Math.min(part.window.end, span.end);
    for (const event of eventsOf(part.ass)) {
      const style = lookup(event.style);
      const start = Math.max(event.start + part.shift, from);
      const end = Math.min(event.end + part.shift, until);
      if (style === undefined || !(end > start)) continue;
      const text = part.text ? part.text(event.text, event.end - event.start) : event.text;
      const [name, left, right, vertical, effect] = event.fields as [string, string, string, string, string];
      const margins = [
        scaled(left, layout.playResX / geometry.playResX),
        scaled(right, layout.playResX / geometry.playResX),
        scaled(vertical, layout.playResY / geometry.playResY),
      ];
      const fields = [
        part.track * LAYERS_PER_TRACK + event.layer,
        assTime(start - span.start),
        assTime(end - span.start),
        part.prefix + style,
        name,
        ...margins,
        effect,
        text,
      ];
      eventLines.push(`Dialogue: ${fields.join(',')}`);
    }
  }
  return [...scriptHead(layout.playResX, layout.playResY), ...styleLines, '', ...EVENTS_HEAD, ...eventLines, ''].join(
    '\n',
  );
}

/** When each event of a script is shown, in seconds on its clock: for a script `mergeScripts` wrote, the span's. */
export const eventSpans = (ass: string): TimeRange[] => eventsOf(ass).map(({ start, end }) => ({ start, end }));
