import type { Problem } from '../../sdk.js';
import { checkDocument } from './document-check.js';
import { mergeFields } from './merge.js';

/**
 * The check of an edit document that needs nothing but the document: its merge fields filled in, then the schema's
 * check. The server runs it before anything is queued (index.ts), the studio page as its document is typed
 * (studio/src/check.ts): both tell the same problems in the same words. Pure, with no import of Node's, so that the
 * page's bundle can hold it.
 */

export interface EditCheck {
  /** The merged document, its merged strings read as their schema's scalars. */
  document: unknown;
  /** The value each merge field that is used took. */
  used: Record<string, string>;
  /** Every problem, each at its path; a field without a value is told once, not again as what the schema finds. */
  problems: Problem[];
}

/** Merges `values` into `source` and checks the result against `schema` (the edit document's). */
export function checkEdit(schema: object, source: unknown, values: Record<string, string>): EditCheck {
  const merged = mergeFields(source, values);
  const checked = checkDocument(schema, merged.document, merged.whole);
  const told = new Set(merged.problems.map((problem) => problem.path));
  return {
    document: checked.value,
    used: merged.used,
    problems: [...merged.problems, ...checked.problems.filter((problem) => !told.has(problem.path))],
  };
}
