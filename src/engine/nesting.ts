import { paramError } from './errors.js';

/** Objects and arrays within one another a request's fields may hold; none of ours needs more than a few. */
export const MAX_NESTING_DEPTH = 32;

/**
 * Refuses (400) a value whose objects and arrays are nested deeper than MAX_NESTING_DEPTH: JSON.parse
 * reads 20,000 levels, but recursive code after it (a canonical form, a serializer) would overflow
 * the stack. The walk keeps its own stack, so no depth can overflow it.
 */
export function checkNesting(value: unknown): void {
  const pending: Array<{ item: unknown; depth: number }> = [{ item: value, depth: 1 }];
  while (pending.length > 0) {
    const { item, depth } = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > MAX_NESTING_DEPTH) {
      throw paramError(
        `Expected the request's fields to be nested at most ${MAX_NESTING_DEPTH} levels deep (objects and ` +
          `arrays within one another)`,
      );
    }
    for (const child of Object.values(item)) pending.push({ item: child, depth: depth + 1 });
  }
}
