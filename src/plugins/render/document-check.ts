import type { Problem } from '../../sdk.js';
import { childPath } from './json-path.js';

/**
 * Checks a JSON value against the JSON Schema the edit document is written in (schema.ts), and tells every problem at
 * once, each at its path, in words a user reads ("unknown field", "expected a time"). Only the keywords that schema
 * uses are read: `type`, `enum`, `const`, `anyOf` (with a `discriminator`), `properties`, `required`,
 * `additionalProperties`, `items`, `minItems`, `maxItems`, `minimum`, `maximum`, `multipleOf`, `minLength`,
 * `maxLength`, `pattern`; `title` names a schema in messages.
 */

/** The JSON Schema keywords the edit document's schema uses (and its reference in docs/render.md reads). */
export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  discriminator?: { propertyName: string };
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** A value as a message quotes it: short, and what kind of value it is when not a string. */
function show(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 37)}...` : value}'`;
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a schema expects, in words: its title, else its type with its bounds. */
function expected(schema: JsonSchema): string {
  if (schema.title) return schema.title;
  if (schema.enum) return `one of ${schema.enum.join(', ')}`;
  if (schema.const !== undefined) return `'${String(schema.const)}'`;
  const bounds =
    schema.minimum !== undefined && schema.maximum !== undefined
      ? ` from ${schema.minimum} to ${schema.maximum}`
      : schema.minimum !== undefined
        ? ` of at least ${schema.minimum}`
        : schema.maximum !== undefined
          ? ` of at most ${schema.maximum}`
          : '';
  switch (schema.type) {
    case 'integer':
      return `${schema.multipleOf === 2 ? 'an even' : 'a'} whole number${bounds}`;
    case 'number':
      return `a number${bounds}`;
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'an object';
    case 'array':
      return 'a list';
    case 'string':
      // A pattern is said in words by the description (a colour as #RRGGBB...), as parameters say it.
      return schema.pattern && schema.description
        ? schema.description.replace(/^[A-Z](?=[a-z ])/, (c) => c.toLowerCase()).replace(/\.$/, '')
        : 'text';
    default:
      return 'a value';
  }
}

/** Whether a value is of a JSON Schema type. */
function isType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    default:
      return true;
  }
}

/** The scalars a schema takes, for reading a merged string as one (`"{{VOLUME}}"` as -6). */
function scalarTypes(schema: JsonSchema): string[] {
  return [schema.type, ...(schema.anyOf ?? []).map((branch) => branch.type)].filter(
    (type): type is string => type === 'number' || type === 'integer' || type === 'boolean',
  );
}

/** A merged string read as the number or boolean its schema takes, else as it is. */
function coerced(schema: JsonSchema, value: string): unknown {
  const types = scalarTypes(schema);
  const text = value.trim();
  if ((types.includes('number') || types.includes('integer')) && /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text))
    return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return value;
}

/** What `checkDocument` found: the value (merged strings read as their schema's scalars) and every problem. */
export interface Checked {
  value: unknown;
  problems: Problem[];
}

/**
 * Checks `value` against `schema`. `merged` holds the paths of strings that were one merge field whole: those are
 * read as the number or boolean their schema takes, as a form sends every value as text.
 */
export function checkDocument(schema: object, value: unknown, merged: ReadonlySet<string> = new Set()): Checked {
  const problems: Problem[] = [];
  const walk = (s: JsonSchema, given: unknown, path: string): unknown => {
    const v = typeof given === 'string' && merged.has(path) ? coerced(s, given) : given;
    const fail = (error: string) => {
      problems.push({ path, error });
      return v;
    };
    if (s.anyOf) return walkUnion(s, v, path, fail);
    if (s.const !== undefined) return v === s.const ? v : fail(`expected ${expected(s)}, got ${show(v)}`);
    if (s.type && !isType(v, s.type)) return fail(`expected ${expected(s)}, got ${show(v)}`);
    if (s.enum && !s.enum.includes(v)) return fail(`expected one of ${s.enum.join(', ')}, got ${show(v)}`);
    if (typeof v === 'number') {
      if (
        (s.minimum !== undefined && v < s.minimum) ||
        (s.maximum !== undefined && v > s.maximum) ||
        (s.multipleOf !== undefined && v % s.multipleOf !== 0)
      )
        return fail(`expected ${expected(s)}, got ${v}`);
    }
    if (typeof v === 'string') {
      if (s.minLength !== undefined && v.length < s.minLength)
        return fail(s.minLength === 1 ? 'expected text, got none' : `expected at least ${s.minLength} characters`);
      if (s.maxLength !== undefined && v.length > s.maxLength)
        return fail(`expected at most ${s.maxLength} characters, got ${v.length}`);
      if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v))
        return fail(`expected ${expected(s)}, got ${show(v)}`);
    }
    if (Array.isArray(v)) {
      if (s.minItems !== undefined && v.length < s.minItems)
        return fail(`expected at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}, got ${v.length}`);
      if (s.maxItems !== undefined && v.length > s.maxItems)
        return fail(`expected at most ${s.maxItems} items, got ${v.length}`);
      return s.items ? v.map((item, index) => walk(s.items!, item, childPath(path, index))) : v;
    }
    if (isObject(v)) return walkObject(s, v, path);
    return v;
  };
  const walkObject = (s: JsonSchema, v: Record<string, unknown>, path: string): unknown => {
    const properties = s.properties ?? {};
    const what = s.title ?? 'this object';
    const out: Record<string, unknown> = {};
    for (const key of s.required ?? [])
      if (v[key] === undefined) problems.push({ path: childPath(path, key), error: `missing: ${what} needs it` });
    for (const [key, item] of Object.entries(v)) {
      const property = properties[key];
      if (property) out[key] = walk(property, item, childPath(path, key));
      else if (typeof s.additionalProperties === 'object')
        out[key] = walk(s.additionalProperties, item, childPath(path, key));
      else if (s.additionalProperties === false)
        problems.push({
          path: childPath(path, key),
          error: `unknown field: ${what} has ${Object.keys(properties).join(', ')}`,
        });
      else out[key] = item;
    }
    return out;
  };
  const walkUnion = (s: JsonSchema, v: unknown, path: string, fail: (error: string) => unknown): unknown => {
    const key = s.discriminator?.propertyName;
    if (key !== undefined && isObject(v)) {
      // One branch by its tag (a clip by its `type`), so that its own problems are told, not "matches none".
      const tags = s.anyOf!.map((branch) => branch.properties?.[key]?.const);
      const branch = s.anyOf![tags.indexOf(v[key])];
      if (branch) return walk(branch, v, path);
      problems.push({
        path: childPath(path, key),
        error:
          v[key] === undefined
            ? `missing: ${s.title ?? 'this object'} needs it (one of ${tags.join(', ')})`
            : `unknown ${key} ${show(v[key])}: one of ${tags.join(', ')}`,
      });
      return v;
    }
    // The first branch that takes the value without a problem.
    for (const branch of s.anyOf!) {
      const found = checkDocument(branch, v, merged.has(path) ? new Set(['']) : new Set());
      if (found.problems.length === 0) return found.value;
    }
    return fail(`expected ${expected(s)}, got ${show(v)}`);
  };
  return { value: walk(schema as JsonSchema, value, ''), problems };
}
