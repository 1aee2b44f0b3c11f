import type { Problem } from '../../sdk.js';
import { childPath } from './json-path.js';

/**
 * Merge fields: `{{NAME}}` anywhere in a string of the edit document is replaced by the request's `merge` value of
 * NAME, else the document's own `merge` default, before the document is checked. The document's `merge` defaults are
 * not themselves merged. A value is put in as it is, once: a value holding `{{...}}` is not read again.
 */

/** A merge field's name, as `{{NAME}}` uses it. */
export const MERGE_NAME = '[A-Za-z_][A-Za-z0-9_]*';

/** A merge field in text; spaces inside the braces are allowed (`{{ TITLE }}`). */
const FIELD = new RegExp(`\\{\\{\\s*(${MERGE_NAME})\\s*\\}\\}`, 'g');

/** One use of a merge field: its name, the path of the string it is in, and whether it is that whole string. */
export interface MergeUse {
  name: string;
  path: string;
  whole: boolean;
}

/** What merging a document gives. */
export interface Merged {
  document: unknown;
  /** The value each field that is used took. */
  used: Record<string, string>;
  /** The paths of strings that were one merge field whole: their schema may read them as a number or a boolean. */
  whole: Set<string>;
  /** A name with no value, at each place it is used. */
  problems: Problem[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Visits every string of a document but its `merge` defaults, with its path. */
function eachString(value: unknown, path: string, visit: (text: string, path: string) => unknown): unknown {
  if (typeof value === 'string') return visit(value, path);
  if (Array.isArray(value)) return value.map((item, index) => eachString(item, childPath(path, index), visit));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      path === '' && key === 'merge' ? item : eachString(item, childPath(path, key), visit),
    ]),
  );
}

/** Every use of a merge field in a document, in the document's order. */
export function mergeUses(document: unknown): MergeUse[] {
  const uses: MergeUse[] = [];
  eachString(document, '', (text, path) => {
    for (const match of text.matchAll(FIELD))
      uses.push({ name: match[1]!, path, whole: match[0].length === text.length });
  });
  return uses;
}

/** The document's own defaults, as text (a number is written as it is). */
export function mergeDefaults(document: unknown): Record<string, string> {
  const merge = isObject(document) ? document.merge : undefined;
  if (!isObject(merge)) return {};
  return Object.fromEntries(
    Object.entries(merge).flatMap(([name, value]) =>
      typeof value === 'string' || typeof value === 'number' ? [[name, String(value)]] : [],
    ),
  );
}

/** Fills in the merge fields of `document` from `given` (the request's values), else from its defaults. */
export function mergeFields(document: unknown, given: Record<string, string>): Merged {
  const defaults = mergeDefaults(document);
  const used: Record<string, string> = {};
  const whole = new Set<string>();
  const problems: Problem[] = [];
  const filled = eachString(document, '', (text, path) =>
    text.replace(FIELD, (field, name: string) => {
      const value = Object.hasOwn(given, name)
        ? given[name]
        : Object.hasOwn(defaults, name)
          ? defaults[name]
          : undefined;
      if (value === undefined) {
        problems.push({
          path,
          error:
            `merge field {{${name}}} has no value: give it in the request's \`merge\` (a form field ${name} ` +
            "in a form), or a default in the document's `merge`",
        });
        return field;
      }
      used[name] = value;
      if (field.length === text.length) whole.add(path);
      return value;
    }),
  );
  return { document: filled, used, whole, problems };
}
