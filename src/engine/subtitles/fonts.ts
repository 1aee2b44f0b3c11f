import { execFileSync } from 'node:child_process';
import { distance } from '../edit-distance.js';
import { paramError, shortened } from '../errors.js';

/**
 * The font families installed on this machine, as fontconfig (which libass asks for fonts) knows
 * them, for the `font` of caption styles: a family is accepted only when it is one of these.
 */

/**
 * Characters a family name may not hold: it is written into an ASS style line, whose fields are
 * separated by commas, and `{`, `}` and `\` begin override tags. No installed family has them in
 * practice; one that did is left out of the list rather than escaped.
 */
const UNSAFE = /[,{}\\\p{Cc}]/u;

/**
 * The families in `fc-list --format '%{family}\n'` output: one font a line, its names (English
 * first, then localised or style-specific ones) separated by commas, a comma inside a name escaped
 * with a backslash. Sorted, without duplicates.
 */
export function parseFamilies(output: string): string[] {
  const names = output
    .split('\n')
    .flatMap((line) => line.split(/(?<!\\),/).map((name) => name.replace(/\\(.)/g, '$1').trim()));
  return [...new Set(names.filter((name) => name !== '' && !UNSAFE.test(name)))].sort((a, b) =>
    a.localeCompare(b, 'en'),
  );
}

let cached: string[] | undefined;

/**
 * The installed families, read once per process (fonts installed later need a restart). Read
 * synchronously because parameters are checked synchronously, before anything is queued; fc-list
 * answers from fontconfig's cache in milliseconds. Runs without a shell; none when fc-list is missing.
 */
export function installedFonts(): string[] {
  if (!cached) {
    // node's own child_process, not execa: every operation's parameter check reaches this module, and execa's
    // hundred modules would load with it.
    try {
      const stdout = execFileSync('fc-list', ['--format', '%{family}\n'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 30_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      cached = parseFamilies(stdout);
    } catch (error) {
      // Out of descriptors or processes for now (a flood): asked again next time, not kept empty.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EMFILE' || code === 'ENFILE' || code === 'EAGAIN') return [];
      // fc-list missing, failed or timed out.
      cached = [];
    }
  }
  return cached;
}

/**
 * Families close to a name that is not installed: same letters in another case or spacing,
 * containing it, or a few edits away.
 */
export function closeFonts(name: string, families: readonly string[], limit = 5): string[] {
  const key = (text: string) => text.toLowerCase().replace(/[\s_-]+/g, '');
  const wanted = key(name);
  return families
    .map((family) => {
      const candidate = key(family);
      const d =
        candidate.includes(wanted) || wanted.includes(candidate)
          ? 0.5 + Math.abs(candidate.length - wanted.length) / 100
          : distance(wanted, candidate);
      return { family, d };
    })
    .filter(({ d }) => d <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.d - b.d || a.family.localeCompare(b.family, 'en'))
    .slice(0, limit)
    .map(({ family }) => family);
}

/**
 * The installed family a `font` parameter names (case and spacing as fontconfig ignores them), or a
 * 400 naming close matches.
 */
export function installedFont(key: string, name: string, families: readonly string[] = installedFonts()): string {
  const exact =
    families.find((family) => family === name) ??
    families.find((family) => family.toLowerCase() === name.toLowerCase());
  if (exact !== undefined) return exact;
  const shown = shortened(name);
  const close = closeFonts(name, families);
  const hint = close.length > 0 ? `close matches: ${close.join(', ')}` : 'GET /fonts or `mediaflow fonts` lists them';
  throw paramError(`Expected \`${key}\` to be a font family installed on the server, got \`${shown}\` (${hint})`);
}
