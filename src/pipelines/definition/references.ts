import type { TObject, TSchema } from '@sinclair/typebox';
import { parseParams } from '../../engine/plugins/params.js';
import { inputSpecOf, type InputSpec } from '../../engine/contract/plugin.js';
import { ExprError, parseExpr, refsOf, showExpr, showRef, type Expr, type ParamForm, type Ref } from '../template.js';
import type { Issues } from './issues.js';
import type { PipelineInput } from './types.js';

/**
 * The checks of a step's values, before any run: each `{{ reference }}` names something that exists, and
 * what it gives (an input of its type, a step's output file or files, the item of `each`) suits the
 * parameter it fills; literals are coerced as the engine will.
 */

/** The kind of value a parameter takes, as far as references are concerned. */
type ParamKind = 'url' | 'urls' | 'integer' | 'number' | 'boolean' | 'string';
/** The kind of value an expression gives, before the run: a step's output is a local file (or a list of them). */
export type Shape = 'string' | 'integer' | 'number' | 'url' | 'urls' | 'file' | 'files' | 'text' | 'list' | 'literal';

/**
 * What the values of one step may refer to: the inputs, the steps (and which give a list of files: those
 * with `each`, and those whose operation writes several), the item's shape.
 */
export interface StepContext {
  step: string;
  names: Set<string>;
  inputs: Map<string, PipelineInput>;
  listSteps: Set<string>;
  /** Steps whose operation writes no file, with that operation's name. */
  filelessSteps: Map<string, string>;
  /** The fields each step's operation may answer a file under (`output_file`, `subtitle_file_url`), by step. */
  fileFields: Map<string, ReadonlySet<string>>;
  itemShape?: Shape | undefined;
}

function paramKind(schema: TSchema): ParamKind {
  const spec = inputSpecOf(schema);
  if (spec) return spec.list ? 'urls' : 'url';
  const type = (schema as { type?: string }).type;
  return type === 'integer' || type === 'number' || type === 'boolean' ? type : 'string';
}

const describeKind: Record<ParamKind, string> = {
  url: 'one URL or file',
  urls: 'a list of URLs or files',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  string: 'text',
};

const describeShape = (shape: Shape, ref?: Ref): string => {
  const what = ref ? `{{ ${showRef(ref)} }}` : 'the value';
  switch (shape) {
    case 'file':
      return `${what} is a step's output file`;
    case 'files':
      return `${what} is a list of output files (the step has \`each\`, or its operation writes several)`;
    case 'urls':
      return `${what} is a list of URLs (type urls)`;
    default:
      return `${what} is of type ${shape}`;
  }
};

/** A reference to the output of a step that writes none. */
export const noFileIssue = (step: string, operation: string): string =>
  `{{ steps.${step}.output }} is no file: operation '${operation}' writes none (what it answers is in the ` +
  "run's `answers`)";

/** Whether a parameter of `kind` takes a value of `shape` (literals are checked by coercing them instead). */
function accepts(kind: ParamKind, shape: Shape): boolean {
  switch (kind) {
    case 'url':
      return ['url', 'file', 'text', 'literal'].includes(shape);
    case 'urls':
      return ['url', 'urls', 'file', 'files', 'text', 'list', 'literal'].includes(shape);
    case 'string':
    case 'boolean':
      return ['string', 'integer', 'number', 'url', 'text', 'literal'].includes(shape);
    case 'integer':
      return ['integer', 'literal'].includes(shape);
    case 'number':
      return ['integer', 'number', 'literal'].includes(shape);
  }
}

/** Coerces one value with one parameter's schema, as the engine will: the plugin's own message when it does not fit. */
function checkValue(key: string, schema: TSchema, value: unknown): string | undefined {
  try {
    parseParams({ type: 'object', properties: { [key]: schema }, required: [] } as unknown as TObject, {
      [key]: value,
    });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Parses one value for a parameter of `form`, reporting (rather than throwing) one that cannot be parsed. */
export function parseValue(
  issues: Issues,
  raw: unknown,
  path: Array<string | number>,
  step: string,
  form: ParamForm = 'plain',
): Expr | undefined {
  try {
    return parseExpr(raw, false, form);
  } catch (error) {
    if (!(error instanceof ExprError)) throw error;
    issues.add(path, error.message, { step });
    return undefined;
  }
}

/** The shape of a reference, or undefined (with an issue) when it names nothing. */
function shapeOfRef(issues: Issues, ref: Ref, path: Array<string | number>, context: StepContext): Shape | undefined {
  if ('input' in ref) {
    const input = context.inputs.get(ref.input);
    if (!input) {
      const declared = [...context.inputs.keys()];
      issues.add(
        path,
        `{{ inputs.${ref.input} }} names no input (declared: ${declared.length ? declared.join(', ') : 'none'})`,
        { step: context.step },
      );
      return undefined;
    }
    return input.type;
  }
  if ('step' in ref) {
    if (!context.names.has(ref.step)) {
      issues.add(path, `{{ steps.${ref.step}.output }} names no step (steps: ${[...context.names].join(', ')})`, {
        step: context.step,
      });
      return undefined;
    }
    const operation = context.filelessSteps.get(ref.step);
    if (operation !== undefined) {
      issues.add(path, noFileIssue(ref.step, operation), { step: context.step });
      return undefined;
    }
    const fields = context.fileFields.get(ref.step);
    if (ref.field !== undefined && fields && !fields.has(ref.field)) {
      issues.add(
        path,
        `{{ ${showRef(ref)} }} names no file of step '${ref.step}': its operation answers files as ` +
          `${[...fields].join(', ') || 'nothing'} ({{ steps.${ref.step}.output }} is its output)`,
        { step: context.step },
      );
      return undefined;
    }
    return context.listSteps.has(ref.step) ? 'files' : 'file';
  }
  if (!context.itemShape) {
    issues.add(path, '{{ item }} is only defined in a step with `each`', { step: context.step });
    return undefined;
  }
  return context.itemShape;
}

/** Checks `each` and returns the shape of its items. */
export function checkEach(
  issues: Issues,
  each: Expr,
  path: Array<string | number>,
  context: StepContext,
): Shape | undefined {
  const usage =
    'expected a list: {{ inputs.<an input of type urls> }}, ' +
    '{{ steps.<a step with each, or of several files>.output }} or a YAML list';
  if (refsOf(each).some((ref) => 'item' in ref)) {
    issues.add(path, '{{ item }} cannot be used in `each` itself', { step: context.step });
    return undefined;
  }
  if (each.kind === 'ref') {
    const shape = shapeOfRef(issues, each.ref, path, context);
    if (shape === 'urls') return 'url';
    if (shape === 'files') return 'file';
    if (shape) issues.add(path, `${describeShape(shape, each.ref)}, not a list; ${usage}`, { step: context.step });
    return undefined;
  }
  if (each.kind === 'list') {
    const shapes = each.items.map((item) => shapeOfItem(issues, item, path, context));
    return shapes.every((shape) => shape === 'file' || shape === 'files') ? 'file' : 'url';
  }
  issues.add(path, usage, { step: context.step });
  return undefined;
}

function shapeOfItem(
  issues: Issues,
  expr: Expr,
  path: Array<string | number>,
  context: StepContext,
): Shape | undefined {
  if (expr.kind === 'literal') return 'literal';
  if (expr.kind === 'ref') return shapeOfRef(issues, expr.ref, path, context);
  if (expr.kind === 'first') {
    const shapes = expr.refs.map((ref) => shapeOfRef(issues, ref, path, context));
    if (shapes.some((shape) => shape === undefined)) return undefined;
    // Each alternative may be the value: they must be of one kind (a file and a URL, or lists of them).
    const several = (shape: Shape | undefined) => ['urls', 'files', 'list'].includes(shape!);
    if (new Set(shapes.map(several)).size > 1) {
      issues.add(path, `the alternatives of ${showExpr(expr)} must all be one value, or all lists`, {
        step: context.step,
      });
      return undefined;
    }
    return shapes.find((shape) => shape === 'file' || shape === 'files') ?? shapes[0];
  }
  if (expr.kind === 'text') {
    for (const ref of refsOf(expr)) {
      const shape = shapeOfRef(issues, ref, path, context);
      // A file path or a list pasted into text would not be a usable value.
      if (shape && !['string', 'integer', 'number', 'url'].includes(shape)) {
        issues.add(path, `${describeShape(shape, ref)} and cannot be part of text; use it as the whole value`, {
          step: context.step,
        });
      }
    }
    return 'text';
  }
  return 'list';
}

/** Checks one parameter value against the parameter's schema. */
export function checkParam(
  issues: Issues,
  key: string,
  schema: TSchema,
  expr: Expr,
  path: Array<string | number>,
  context: StepContext,
): void {
  const kind = paramKind(schema);
  const where = { step: context.step };
  // The operation's own document: it checks it when the step runs, with the values the run gives.
  if (expr.kind === 'document') return;
  if (expr.kind === 'values') {
    for (const [name, value] of Object.entries(expr.entries)) {
      const shape = shapeOfItem(issues, value, [...path, name], context);
      if (shape && !['string', 'integer', 'number', 'url', 'file', 'text', 'literal'].includes(shape)) {
        const ref = value.kind === 'ref' ? value.ref : undefined;
        issues.add([...path, name], `the value ${name} of '${key}' is one value, but ${describeShape(shape, ref)}`, {
          ...where,
          field: `with.${key}.${name}`,
        });
      }
    }
    return;
  }
  if (expr.kind === 'literal') {
    const problem = checkValue(key, schema, expr.value);
    if (problem) issues.add(path, problem, where);
    return;
  }
  if (expr.kind === 'list') {
    if (kind !== 'urls') {
      issues.add(path, `parameter '${key}' takes ${describeKind[kind]}, not a list`, where);
      return;
    }
    let count = 0;
    let known = true;
    for (const item of expr.items) {
      const shape = shapeOfItem(issues, item, path, context);
      if (shape === 'list') continue;
      if (shape && !['url', 'urls', 'file', 'files', 'text', 'literal'].includes(shape)) {
        issues.add(path, `parameter '${key}' takes URLs or files; ${describeShape(shape)}`, where);
      }
      if (shape === 'urls' || shape === 'files') known = false;
      count++;
    }
    const spec = inputSpecOf(schema) as InputSpec;
    if (known && count < (spec.min ?? 1))
      issues.add(path, spec.tooFew ?? `parameter '${key}' needs at least ${spec.min ?? 1} items`, where);
    return;
  }
  const shape = shapeOfItem(issues, expr, path, context);
  if (!shape) return;
  if (!accepts(kind, shape)) {
    const ref = expr.kind === 'ref' ? expr.ref : undefined;
    const hint =
      ref && 'input' in ref && shape === 'string' && (kind === 'url' || kind === 'urls')
        ? '; declare the input with type url'
        : ref && 'input' in ref && shape === 'string' && (kind === 'integer' || kind === 'number')
          ? `; declare the input with type ${kind}`
          : '';
    issues.add(path, `parameter '${key}' takes ${describeKind[kind]}, but ${describeShape(shape, ref)}${hint}`, where);
    return;
  }
  // An input's default must suit every parameter it reaches (an enum, a range); an empty default is no value (an
  // input one may leave out, for a step that runs only `when` it is given).
  if (expr.kind === 'ref' && 'input' in expr.ref) {
    const input = context.inputs.get(expr.ref.input);
    if (input?.default !== undefined && input.default !== '' && kind !== 'url' && kind !== 'urls') {
      const problem = checkValue(key, schema, input.default);
      if (problem)
        issues.add(path, `the default of input '${input.name}' does not suit parameter '${key}': ${problem}`, where);
    }
  }
}
