/**
 * Parameter values of a pipeline step: literals, `{{ reference }}`s and text with references in it.
 * A reference names a pipeline input (`inputs.text`), an earlier step's output
 * (`steps.slideshow.output`), a file a step writes beside it, by the field its operation answers it under
 * (`steps.speech.subtitle_file_url`), or, in a step with `each`, the current item (`item`). A whole value may give
 * alternatives, the first with a value counting (`{{ inputs.voice || steps.speech.output }}`).
 *
 * References are read only in the values the pipeline owns. A document parameter's mapping (render's `edit`) is the
 * operation's own document, passed as written: its `{{NAME}}` are its merge fields, not references. A values
 * parameter's mapping (render's `merge`) holds one pipeline value per name (docs/pipelines.md).
 */

/** What a `{{ ... }}` names: `field` is a file of the step other than its output. */
export type Ref = { input: string } | { step: string; field?: string } | { item: true };

/** A parsed parameter value. */
export type Expr =
  /** A plain value, passed to the operation as written. */
  | { kind: 'literal'; value: string | number | boolean }
  /** Exactly one reference: its value as it is (a list stays a list, a step's file stays a file). */
  | { kind: 'ref'; ref: Ref }
  /** Text with references in it, joined into one string. */
  | { kind: 'text'; parts: Array<string | Ref> }
  /** Alternatives (`{{ a || b }}`): the first that has a value (an input given, a step that ran). */
  | { kind: 'first'; refs: Ref[] }
  /** A YAML list; each item is a value, lists among them are flattened. */
  | { kind: 'list'; items: Expr[] }
  /** A document parameter's mapping, passed to the operation as written (no reference is read in it). */
  | { kind: 'document'; value: Record<string, unknown> }
  /** A values parameter's mapping: a value of its own for each name. */
  | { kind: 'values'; entries: Record<string, Expr> };

const NAME = '[A-Za-z_][A-Za-z0-9_-]*';
const FIELD = '[a-z][a-z0-9_]*';
const REF = new RegExp(`^(?:inputs\\.(${NAME})|steps\\.(${NAME})\\.(${FIELD})|(item))$`);
const PLACEHOLDER = /\{\{(.*?)\}\}/gs;

/** Thrown for a value that cannot be parsed; the caller adds where it is. */
export class ExprError extends Error {}

function parseRef(text: string): Ref {
  const match = REF.exec(text.trim());
  if (!match) {
    throw new ExprError(
      `unknown reference \`{{ ${text.trim()} }}\`: expected {{ inputs.<name> }}, {{ steps.<name>.output }}, ` +
        `{{ steps.<name>.<field of a file> }} or {{ item }}`,
    );
  }
  if (match[1] !== undefined) return { input: match[1] };
  if (match[2] !== undefined) return match[3] === 'output' ? { step: match[2] } : { step: match[2], field: match[3]! };
  return { item: true };
}

/** The references of one `{{ ... }}`: one, or alternatives separated by `||`. */
const parseRefs = (text: string): Ref[] => text.split('||').map(parseRef);

/** Parses a string that may hold `{{ ... }}` references. */
function parseText(text: string): Expr {
  const parts: Array<string | Ref[]> = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(parseRefs(match[1]!));
    last = match.index + match[0].length;
  }
  const rest = text.slice(last);
  if (
    rest.includes('{{') ||
    rest.includes('}}') ||
    parts.some((p) => typeof p === 'string' && (p.includes('{{') || p.includes('}}')))
  ) {
    throw new ExprError(`unbalanced \`{{\` or \`}}\` in \`${text}\``);
  }
  if (rest) parts.push(rest);
  if (parts.length === 0) return { kind: 'literal', value: text };
  if (parts.length === 1 && typeof parts[0] === 'string') return { kind: 'literal', value: parts[0] };
  // `{{ ref }}` with only spaces around it is the reference itself, not text.
  const refs = parts.filter((p) => typeof p !== 'string');
  if (refs.length === 1 && parts.every((p) => typeof p !== 'string' || p.trim() === ''))
    return refs[0]!.length === 1 ? { kind: 'ref', ref: refs[0]![0]! } : { kind: 'first', refs: refs[0]! };
  if (refs.some((alternatives) => alternatives.length > 1))
    throw new ExprError(`alternatives (\`||\`) must be the whole value, not part of text: \`${text}\``);
  return { kind: 'text', parts: parts.map((part) => (typeof part === 'string' ? part : part[0]!)) };
}

/** What a parameter takes besides strings, numbers, booleans and lists: a document, or named values. */
export type ParamForm = 'document' | 'values' | 'plain';

const isMapping = (raw: unknown): raw is Record<string, unknown> =>
  typeof raw === 'object' && raw !== null && !Array.isArray(raw);

/** The first pipeline reference written in a string of a document, which is not read there. */
function referenceIn(value: unknown): string | undefined {
  if (typeof value === 'string') return /\{\{\s*(?:inputs|steps)\.[^{}]*\}\}/.exec(value)?.[0];
  const items = Array.isArray(value) ? value : isMapping(value) ? Object.values(value) : [];
  for (const item of items) {
    const found = referenceIn(item);
    if (found) return found;
  }
  return undefined;
}

/** A value of a values mapping: one string, number or boolean, or references to one. */
function parseNamedValue(name: string, raw: unknown): Expr {
  if (Array.isArray(raw) || isMapping(raw))
    throw new ExprError(`the value of ${name} is ${Array.isArray(raw) ? 'a list' : 'a mapping'}: give one value`);
  try {
    return parseExpr(raw);
  } catch (error) {
    if (error instanceof ExprError) throw new ExprError(`${name}: ${error.message}`);
    throw error;
  }
}

/**
 * Parses a value as YAML or JSON gave it, for a parameter of the given form; throws ExprError for one that the
 * parameter cannot take. A document parameter's text other than one whole reference is passed as written too.
 */
export function parseExpr(raw: unknown, nested = false, form: ParamForm = 'plain'): Expr {
  if (form === 'document' && isMapping(raw)) {
    const reference = referenceIn(raw);
    if (reference)
      throw new ExprError(
        `${reference} is not read inside a document, which is passed as written (its {{NAME}} are its merge ` +
          `fields): give the value as a merge value, \`merge: {NAME: "${reference}"}\`, and write {{NAME}} in the ` +
          'document',
      );
    return { kind: 'document', value: raw };
  }
  if (form === 'document' && typeof raw === 'string') {
    // JSON text never starts with `{{`: a value that does is one reference (an input holding the document).
    const whole = /^\s*\{\{([^{}]*)\}\}\s*$/.exec(raw);
    if (!whole) return { kind: 'literal', value: raw };
    const refs = parseRefs(whole[1]!);
    return refs.length === 1 ? { kind: 'ref', ref: refs[0]! } : { kind: 'first', refs };
  }
  if (form === 'values' && isMapping(raw))
    return {
      kind: 'values',
      entries: Object.fromEntries(Object.entries(raw).map(([name, value]) => [name, parseNamedValue(name, value)])),
    };
  if (typeof raw === 'string') return parseText(raw);
  if (typeof raw === 'number' || typeof raw === 'boolean') return { kind: 'literal', value: raw };
  if (Array.isArray(raw)) {
    if (nested) throw new ExprError('a list inside a list is not allowed');
    return { kind: 'list', items: raw.map((item) => parseExpr(item, true)) };
  }
  if (raw === null || raw === undefined) throw new ExprError('the value is empty');
  throw new ExprError(
    'expected a string, a number, a boolean or a list, not a mapping (a mapping is taken by a document parameter, ' +
      "such as render's `edit`, and by named values, such as render's `merge`)",
  );
}

/** Every reference in a value. */
export function refsOf(expr: Expr): Ref[] {
  switch (expr.kind) {
    case 'literal':
      return [];
    case 'ref':
      return [expr.ref];
    case 'first':
      return expr.refs;
    case 'text':
      return expr.parts.filter((p): p is Ref => typeof p !== 'string');
    case 'list':
      return expr.items.flatMap(refsOf);
    case 'document':
      return [];
    case 'values':
      return Object.values(expr.entries).flatMap(refsOf);
  }
}

/** A reference as written, for messages and `--dry-run`. */
export function showRef(ref: Ref): string {
  if ('input' in ref) return `inputs.${ref.input}`;
  if ('step' in ref) return `steps.${ref.step}.${ref.field ?? 'output'}`;
  return 'item';
}

/** A value as it would be written in the definition, for `--dry-run`. */
export function showExpr(expr: Expr): string {
  switch (expr.kind) {
    case 'literal':
      return String(expr.value);
    case 'ref':
      return `{{ ${showRef(expr.ref)} }}`;
    case 'first':
      return `{{ ${expr.refs.map(showRef).join(' || ')} }}`;
    case 'text':
      return expr.parts.map((p) => (typeof p === 'string' ? p : `{{ ${showRef(p)} }}`)).join('');
    case 'list':
      return `[${expr.items.map(showExpr).join(', ')}]`;
    case 'document':
      return JSON.stringify(expr.value);
    case 'values':
      return `{${Object.entries(expr.entries)
        .map(([name, value]) => `${name}: ${showExpr(value)}`)
        .join(', ')}}`;
  }
}
