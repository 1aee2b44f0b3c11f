/**
 * Numbers as the render's filter graphs write them: only what these make (and generated labels) reaches a graph,
 * so a value that is not a finite number is a fault of the compiler, never text in the graph.
 */

/** A finite number in plain decimal notation, to the microsecond for times (never `1e-7`, `NaN` or `Infinity`). */
export function decimal(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`A filter graph was given ${value} where a number belongs`);
  const fixed = value.toFixed(6).replace(/\.?0+$/, '');
  return fixed === '-0' ? '0' : fixed;
}

/** A whole, non-negative count (of samples, of an input), checked as `decimal` checks. */
export function count(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`A filter graph was given ${value} where a count belongs`);
  return String(value);
}
