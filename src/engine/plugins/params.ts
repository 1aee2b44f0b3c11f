import type { TObject, TSchema } from '@sinclair/typebox';
import { paramError, shortened, unsupportedFormat } from '../errors.js';
import { installedFont } from '../subtitles/fonts.js';
import {
  DOCUMENT_KEYWORD,
  FONT_KEYWORD,
  FORMAT_KEYWORD,
  inputSpecOf,
  TIME_KEYWORD,
  VALUES_KEYWORD,
  type TimeKind,
} from '../contract/plugin.js';
import { parseRanges, parseTime, parseTimes } from '../contract/times.js';

type Raw = Record<string, unknown>;
interface SchemaFields {
  type?: string;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  description?: string;
}

/** Splits a comma list: whitespace around items ignored, empty items dropped (docs/architecture.md, "Lists"). */
export const splitList = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/**
 * One raw value (form field, flag, CSV cell, JSON value) as the string a form would send, or undefined
 * when empty; repeated fields (of a list) are joined as a comma list.
 */
export function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value))
    return value
      .map(asText)
      .filter((v) => v !== undefined)
      .join(',');
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** A decimal number as text: digits with an optional sign and fraction (no exponent, no `Infinity`). */
export const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/**
 * A separator other than the comma inside one item of a list, named so the 400 can say so: a URL
 * parser would otherwise glue two URLs into one (it drops newlines and encodes spaces).
 */
function wrongSeparator(item: string): string | undefined {
  if (/[\r\n]/.test(item)) return 'newlines';
  if (/;(\s|[a-z][a-z\d+.-]*:\/\/)/i.test(item)) return 'semicolons';
  if (/\t|\s[a-z][a-z\d+.-]*:\/\//i.test(item)) return 'spaces';
  return undefined;
}

/** A time-valued field as its plugin reads it (times.ts). */
function coerceTime(key: string, kind: TimeKind, text: string): unknown {
  if (kind === 'times') return parseTimes(key, text);
  if (kind === 'ranges') return parseRanges(key, text);
  return parseTime(key, text);
}

function coerce(key: string, schema: SchemaFields & TSchema, text: string): unknown {
  const time = (schema as Record<string, unknown>)[TIME_KEYWORD] as TimeKind | undefined;
  if (time) return coerceTime(key, time, text);
  const spec = inputSpecOf(schema);
  if (spec?.list) {
    const items = splitList(text);
    const separator = items.map(wrongSeparator).find(Boolean);
    if (separator)
      throw paramError(
        `Expected \`${key}\` to be comma-separated, got items separated by ${separator}: put a comma between them`,
      );
    if (items.length < (spec.min ?? 1))
      throw paramError(spec.tooFew ?? `Expected \`${key}\` to list at least ${spec.min ?? 1} URL(s)`);
    return items;
  }
  if (schema.enum) {
    const value = text.trim().toLowerCase().replace(/^\./, '');
    if (schema.enum.includes(value)) return value;
    if ((schema as Record<string, unknown>)[FORMAT_KEYWORD]) throw unsupportedFormat(text, schema.enum);
    throw paramError(`Expected \`${key}\` to be one of ${schema.enum.join(', ')}, got \`${shortened(text)}\``);
  }
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const trimmed = text.trim();
      const pattern = schema.type === 'integer' ? /^[+-]?\d+$/ : NUMBER;
      const value = Number(trimmed);
      const range = `from ${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`;
      const expected =
        `Expected \`${key}\` to be ${schema.type === 'integer' ? 'an integer' : 'a number'} ${range}, got ` +
        `\`${shortened(text)}\``;
      if (!pattern.test(trimmed) || !Number.isFinite(value)) throw paramError(expected);
      if (
        (schema.minimum !== undefined && value < schema.minimum) ||
        (schema.maximum !== undefined && value > schema.maximum)
      ) {
        throw paramError(expected);
      }
      return value;
    }
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
      if (['0', 'false', 'no', 'off'].includes(lower)) return false;
      throw paramError(`Expected \`${key}\` to be true or false, got \`${shortened(text)}\``);
    }
    default: {
      const value = spec ? text.trim() : text;
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        throw paramError(`Expected \`${key}\` to be at least ${schema.minLength} characters, got ${value.length}`);
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        throw paramError(`Expected \`${key}\` to be at most ${schema.maxLength} characters, got ${value.length}`);
      }
      if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
        // The description says the form in words; the pattern is for machines.
        const form =
          typeof schema.description === 'string'
            ? schema.description.replace(/^[A-Z](?=[a-z ])/, (c) => c.toLowerCase())
            : `text matching ${schema.pattern}`;
        throw paramError(`Expected \`${key}\` to be ${form.replace(/\.$/, '')}, got \`${shortened(text)}\``);
      }
      // The family as fontconfig spells it: only installed names reach an ASS style.
      return (schema as Record<string, unknown>)[FONT_KEYWORD] ? installedFont(key, value.trim()) : value;
    }
  }
}

/** Whether a parameter takes a comma list, and so also repeated fields or a JSON list. */
const isList = (schema: TSchema): boolean => {
  const time = (schema as Record<string, unknown>)[TIME_KEYWORD];
  return Boolean(inputSpecOf(schema)?.list) || time === 'times' || time === 'ranges';
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a JSON value is, for a 400 that says what came instead of an object. */
const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'a list' : `a ${typeof value}`);

/** A document parameter's value (Param.document): an object as it is, or the JSON text of one. */
function documentOf(key: string, value: unknown): Record<string, unknown> {
  if (isObject(value)) return value;
  if (Array.isArray(value))
    throw paramError(`Expected \`${key}\` to be one JSON object, got a list of ${value.length}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch (error) {
    throw paramError(`Expected \`${key}\` to be a JSON object, but it is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw paramError(`Expected \`${key}\` to be a JSON object, got ${kindOf(parsed)}`);
  return parsed;
}

/** One named value as text: a string, number or boolean; a field sent twice or a structure is a 400. */
function valueText(key: string, name: string, value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  const what = Array.isArray(value) ? `${value.length} values (the field was sent more than once)` : kindOf(value);
  throw paramError(`Expected the value \`${shortened(name)}\` of \`${key}\` to be one text, got ${what}`);
}

/**
 * A values parameter's value (Param.values): an object of values, or its JSON text, or `NAME=value` items (the
 * CLI's repeated flag); `loose` (the fields that are no parameter) come first, and what the parameter names wins.
 */
function valuesOf(key: string, value: unknown, loose: Raw): Record<string, string> {
  const values: Record<string, string> = {};
  // A structure among the other fields of a JSON body is no value of a form: ignored, as unknown fields are.
  for (const [name, field] of Object.entries(loose))
    if (field !== undefined && field !== null && !isObject(field)) values[name] = valueText(key, name, field);
  const items = value === undefined || value === '' ? [] : Array.isArray(value) ? value : [value];
  for (const item of items) {
    let given = item;
    if (typeof item === 'string' && item.trim().startsWith('{')) given = documentOf(key, item);
    if (isObject(given)) {
      for (const [name, field] of Object.entries(given)) values[name] = valueText(key, name, field);
      continue;
    }
    const text = String(item);
    const eq = text.indexOf('=');
    if (typeof item !== 'string' || eq < 1)
      throw paramError(`Expected \`${key}\` to be an object of values, or NAME=value, got \`${shortened(text)}\``);
    values[text.slice(0, eq).trim()] = text.slice(eq + 1);
  }
  return values;
}

/**
 * Validates and coerces raw fields (form strings, JSON values, CLI flags, pipeline values) into
 * an operation's params with one schema. Unknown fields are ignored, or are values of a values
 * parameter (Param.values) when the schema has one; defaults fill the gaps.
 */
export function parseParams(schema: TObject, raw: Raw): Record<string, unknown> {
  const required = new Set(schema.required ?? []);
  const params: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties) as Array<[string, SchemaFields & TSchema]>) {
    const marked = property as Record<string, unknown>;
    if (marked[VALUES_KEYWORD]) {
      const loose = Object.fromEntries(Object.entries(raw).filter(([name]) => !(name in schema.properties)));
      params[key] = valuesOf(key, raw[key], loose);
      continue;
    }
    if (marked[DOCUMENT_KEYWORD]) {
      const value = raw[key];
      if (value !== undefined && value !== null && value !== '') params[key] = documentOf(key, value);
      else if (required.has(key)) throw paramError(`Missing required parameter \`${key}\``);
      continue;
    }
    const values = [raw[key]].flat().filter((value) => asText(value)?.trim());
    // A field sent twice (or a JSON list) is a list only where the schema says so (a URL list, a
    // list of times or ranges); elsewhere, joining the values would change the one meant.
    if (values.length > 1 && !isList(property)) {
      throw paramError(
        `Expected \`${key}\` to be one ${inputSpecOf(property) ? 'URL' : 'value'}, got ${values.length} (the ` +
          `field was sent more than once, or as a list)`,
      );
    }
    const text = asText(raw[key]);
    if (text === undefined || text.trim() === '') {
      const spec = inputSpecOf(property);
      // A time's default is written as text, the form it takes on the wire: read like any value.
      if (property.default !== undefined)
        params[key] = (property as Record<string, unknown>)[TIME_KEYWORD]
          ? coerce(key, property, String(property.default))
          : property.default;
      else if (spec?.list && spec.tooFew) throw paramError(spec.tooFew);
      else if (required.has(key)) throw paramError(`Missing required parameter \`${key}\``);
      continue;
    }
    params[key] = coerce(key, property, text);
  }
  return params;
}
