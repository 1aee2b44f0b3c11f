/** Edit distance (Levenshtein) of two short words: how a misspelt name is matched to the one meant. */
export function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The candidate nearest to `word` (case ignored) within `most` edits, the first of equals; undefined when none is.
 * Words whose lengths differ by more than `most` are never compared: a name of a megabyte costs what a short one
 * does, where the distance's time grows with the product of the lengths.
 */
export function closest(word: string, candidates: readonly string[], most = 2): string | undefined {
  const longest = Math.max(0, ...candidates.map((candidate) => candidate.length));
  if (word.length > longest + most) return undefined;
  const wanted = word.toLowerCase();
  let best: { candidate: string; d: number } | undefined;
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    if (Math.abs(lower.length - wanted.length) > most) continue;
    const d = distance(wanted, lower);
    if (d <= most && (best === undefined || d < best.d)) best = { candidate, d };
  }
  return best?.candidate;
}
