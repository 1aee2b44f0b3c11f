import { Optional, Param, type Static, type TObject } from '../../sdk.js';
import { assColour, mapStyles, scriptGeometry } from './ass-script.js';

/**
 * Caption styles: the optional fields add-subtitles and generate-subtitles (format ass) share,
 * and how they become ASS style fields. Values only ever reach libass through a style line
 * written here from validated values: colours by pattern, positions by enum, fonts from the
 * installed families.
 */

/** `#RRGGBB` or `#RRGGBBAA`: nothing else (no commas, braces or backslashes) reaches a style line. */
export const COLOUR_PATTERN = '^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$';

/** A colour parameter; the description is also the 400's wording ("Expected `color` to be a colour ..."). */
export const colourParam = (what: string) =>
  Optional(
    Param.text({
      description: `A colour as #RRGGBB or #RRGGBBAA (AA is the opacity: FF opaque, 00 invisible) for ${what}`,
      maxLength: 9,
      pattern: COLOUR_PATTERN,
    }),
  );

/** Sizes are in pixels of a frame 1080 pixels high and scale with the video, so one style fits every resolution. */
export const REFERENCE_HEIGHT = 1080;

/** Where captions sit, and the ASS alignment row each means. */
export const POSITIONS = ['bottom', 'middle', 'top'] as const;
type Position = (typeof POSITIONS)[number];

export const captionStyleFields = {
  font: Optional(
    Param.font(
      'A font family installed on the server (GET /fonts and `mediaflow fonts` list them); characters it ' +
        'lacks come from fallback fonts',
    ),
  ),
  font_size: Optional(
    Param.integer({
      minimum: 8,
      maximum: 400,
      description:
        'Text height in pixels of a 1080-pixel-high frame, scaled with the video (60 is 60 px at 1080p, 40 px at 720p)',
    }),
  ),
  bold: Optional(Param.boolean({ description: 'Bold text' })),
  color: colourParam('the text'),
  outline_color: colourParam('the outline around the text'),
  outline: Optional(
    Param.integer({
      minimum: 0,
      maximum: 50,
      description: 'Outline width (with a background: the padding of its box) in pixels of a 1080-pixel-high frame',
    }),
  ),
  background: colourParam('a box behind each line, drawn instead of the outline'),
  position: Optional(Param.choice(POSITIONS, { description: 'Where the captions sit' })),
  margin: Optional(
    Param.integer({
      minimum: 0,
      maximum: 1000,
      description: 'Distance from the bottom or top edge in pixels of a 1080-pixel-high frame',
    }),
  ),
  max_width: Optional(
    Param.number({
      minimum: 0.1,
      maximum: 1,
      description: 'Widest a line may be, as a share of the frame width (0.8: 80%); longer lines wrap',
    }),
  ),
};

export type CaptionStyle = Static<TObject<typeof captionStyleFields>>;

/** The style fields of an operation's params that were given. */
export function captionStyleOf(params: Record<string, unknown>): CaptionStyle {
  return Object.fromEntries(
    Object.keys(captionStyleFields).flatMap((key) => (params[key] === undefined ? [] : [[key, params[key]]])),
  ) as CaptionStyle;
}

/**
 * ASS alignment (numpad layout; SSA numbers rows 1-3 bottom, 5-7 top, 9-11 middle) for a position,
 * keeping the style's column.
 */
function alignment(current: string | undefined, position: Position, ssa: boolean): number {
  const value = Number.parseInt(current ?? '', 10);
  if (ssa) {
    const column = value >= 1 && value <= 11 ? (value - 1) % 4 : 1;
    return column + 1 + { bottom: 0, top: 4, middle: 8 }[position];
  }
  const column = value >= 1 && value <= 9 ? (value - 1) % 3 : 1;
  return column + 1 + { bottom: 0, middle: 3, top: 6 }[position];
}

/**
 * The script with the given style fields set on every style: SRT and WebVTT (one `Default` style)
 * take them on every cue; an ASS script keeps whatever of its styles no field overrides (and its
 * inline override tags). `frameHeight` is the video's, for outlines of scripts that do not scale
 * them. Without any field, the script is returned as it is.
 */
export function restyle(ass: string, style: CaptionStyle, frameHeight: number): string {
  if (Object.keys(style).length === 0) return ass;
  const { playResX, playResY, scaledBorders } = scriptGeometry(ass);
  const size = playResY / REFERENCE_HEIGHT;
  const border = scaledBorders ? size : frameHeight / REFERENCE_HEIGHT;
  return mapStyles(ass, (fields) => {
    const outlineColour = fields.ssa ? 'TertiaryColour' : 'OutlineColour';
    if (style.font !== undefined) fields.set('Fontname', style.font);
    if (style.font_size !== undefined) fields.set('Fontsize', style.font_size * size);
    if (style.bold !== undefined) fields.set('Bold', style.bold ? -1 : 0);
    // The secondary colour is what karaoke words show before their turn: the text's colour too.
    if (style.color !== undefined)
      for (const name of ['PrimaryColour', 'SecondaryColour']) fields.set(name, assColour(style.color));
    if (style.outline_color !== undefined) fields.set(outlineColour, assColour(style.outline_color));
    if (style.outline !== undefined) fields.set('Outline', style.outline * border);
    if (style.background !== undefined) {
      // Border style 3 draws an opaque box in the outline colour, padded by the outline width.
      fields.set('BorderStyle', 3);
      fields.set(outlineColour, assColour(style.background));
      fields.set('BackColour', assColour(style.background));
    }
    if (style.position !== undefined)
      fields.set('Alignment', alignment(fields.get('Alignment'), style.position, fields.ssa));
    if (style.margin !== undefined) fields.set('MarginV', style.margin * size);
    if (style.max_width !== undefined) {
      const side = Math.round((playResX * (1 - style.max_width)) / 2);
      fields.set('MarginL', side);
      fields.set('MarginR', side);
    }
  });
}
