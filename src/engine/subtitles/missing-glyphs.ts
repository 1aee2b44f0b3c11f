/**
 * Characters drawn as empty boxes: libass (behind ffmpeg's `ass` and `subtitles` filters) logs, at
 * warning level, each code point for which no installed font has a glyph. ffmpeg still succeeds,
 * so without this a user gets a 200 and a video of boxes; with it the answer says which characters
 * and which font package draws them.
 */

/**
 * libass's two reports of a glyph no font has: fontconfig found no fallback font for it, or the
 * font chosen for it lacks it after all. ("Glyph 0x... not found, broken font? Trying all
 * charmaps" is not one: libass goes on to find the glyph under another character map.)
 */
const MISSING = /failed to find any fallback with glyph 0x([0-9A-F]+)|Glyph 0x([0-9A-F]+) not found in font/gi;

/** The code points no font drew, in the order ffmpeg first reported them. */
export function missingGlyphs(stderr: string): number[] {
  const found = new Set<number>();
  for (const match of stderr.matchAll(MISSING)) found.add(Number.parseInt((match[1] ?? match[2])!, 16));
  return [...found];
}

/** Which of Debian's font packages draws a code point (docs/deploy.md, Fonts, installs them). */
function fontPackageFor(codePoint: number): string | undefined {
  const within = (ranges: Array<[number, number]>) => ranges.some(([from, to]) => codePoint >= from && codePoint <= to);
  // Private use: no standard font has them; only a font made for them (or an icon font) does.
  if (
    within([
      [0xe000, 0xf8ff],
      [0xf0000, 0x10ffff],
    ])
  )
    return undefined;
  // Han, kana, Hangul, CJK punctuation and full-width forms.
  if (
    within([
      [0x1100, 0x11ff],
      [0x2e80, 0x9fff],
      [0xa960, 0xa97f],
      [0xac00, 0xd7ff],
      [0xf900, 0xfaff],
      [0xfe30, 0xfe4f],
      [0xff00, 0xffef],
      [0x20000, 0x3ffff],
    ])
  ) {
    return 'fonts-noto-cjk';
  }
  // Emoji and pictographs (monochrome: libass does not draw colour emoji fonts).
  if (
    within([
      [0x2600, 0x27bf],
      [0x1f000, 0x1faff],
    ])
  )
    return 'fonts-symbola';
  return 'fonts-noto-core';
}

/** A code point as Unicode writes it: `U+65E5`. */
export const codePointName = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;

/** Code points named in one warning at most; the rest are counted. */
const MAX_LISTED = 12;

/**
 * Human-readable warnings for missing glyphs, one per font package that would draw them, e.g.
 * "No font has glyphs for U+65E5, U+672C: they render as empty boxes; install fonts-noto-cjk".
 */
export function glyphWarnings(codePoints: readonly number[]): string[] {
  const byPackage = new Map<string | undefined, number[]>();
  for (const codePoint of codePoints) {
    const fontPackage = fontPackageFor(codePoint);
    byPackage.set(fontPackage, [...(byPackage.get(fontPackage) ?? []), codePoint]);
  }
  return [...byPackage].map(([fontPackage, points]) => {
    const listed = points.slice(0, MAX_LISTED).map(codePointName).join(', ');
    const more = points.length > MAX_LISTED ? ` and ${points.length - MAX_LISTED} more` : '';
    const remedy = fontPackage
      ? `install ${fontPackage}`
      : 'they are private-use characters, which only a font made for them draws';
    return `No font has glyphs for ${listed}${more}: they render as empty boxes; ${remedy}`;
  });
}
