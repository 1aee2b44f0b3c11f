/** `#RRGGBB` or `#RRGGBBAA` (AA the opacity), the only colours a timeline holds. */
const HEX = /^#([0-9A-Fa-f]{6})([0-9A-Fa-f]{2})?$/;

/**
 * A timeline's colour as ffmpeg's colour option reads it (`0xRRGGBB`, `0xRRGGBBAA`), rebuilt from its digits: the
 * resolver has checked it, and nothing else of the document's text reaches the filter graph.
 */
export function filterColour(hex: string, { opaque = false } = {}): string {
  const match = HEX.exec(hex);
  if (!match) throw new Error(`Not a #RRGGBB colour: ${JSON.stringify(hex)}`);
  const alpha = opaque ? '' : (match[2] ?? '');
  return `0x${match[1]!.toUpperCase()}${alpha.toUpperCase()}`;
}
