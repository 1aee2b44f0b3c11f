/**
 * ASS and SSA scripts may carry files: fonts (`[Fonts]`) and pictures (`[Graphics]`), uuencoded.
 * libass hands embedded fonts to FreeType, so a user's script could feed it any font file it
 * likes. Both sections are removed from subtitle inputs before ffmpeg or libass sees them; the
 * installed fonts draw the text instead.
 */

/** A section that carries files. */
const EMBEDDED = /^\s*\[(?:fonts|graphics)\]/i;
/**
 * The headings libass switches sections at (it compares the line's start, case-insensitively).
 * A section with files ends only at one of them: any other line, `[...]` or not, may be file data.
 */
const SECTION = /^\s*\[(?:script info|v4\+? styles|events|fonts|graphics)\]/i;

/** The script without its `[Fonts]` and `[Graphics]` sections; everything else kept as it was. */
export function stripEmbeddedFiles(script: string): string {
  let skipping = false;
  const kept: string[] = [];
  for (const line of script.split(/(?<=\n)/)) {
    if (SECTION.test(line)) skipping = EMBEDDED.test(line);
    if (!skipping) kept.push(line);
  }
  return kept.join('');
}
