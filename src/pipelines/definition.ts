import type { TObject, TSchema } from '@sinclair/typebox';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { MediaflowError } from '../engine/errors.js';
import { NUMBER, parseParams } from '../engine/plugins/params.js';
import { inputSpecOf, type InputSpec, type PluginDefinition } from '../engine/plugins/plugin.js';
import type { Registry } from '../engine/plugins/registry.js';
import { dashed } from '../engine/plugins/reserved.js';
import { ExprError, parseExpr, refsOf, showRef, type Expr, type Ref } from './template.js';

/** The types a pipeline input may declare. */
export const INPUT_TYPES = ['string', 'integer', 'number', 'url', 'urls'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/** One declared input: its values come from `--input`, a form field or a batch row's column. */
export interface PipelineInput {
  name: string;
  type: InputType;
  description?: string;
  /** Used when the input is not given; an input without one is required. */
  default?: string | number | string[];
}

/** One step: an operation and its parameters, run once, or once per item of `each`. */
export interface PipelineStep {
  name: string;
  /** The operation's registered name. */
  op: string;
  description?: string;
  with: Record<string, Expr>;
  each?: Expr;
  /** Steps whose outputs this one uses. */
  after: string[];
}

/** A step output the pipeline hands back (published), under a name of its own. */
export interface PipelineResult {
  name: string;
  step: string;
}

/** A pipeline checked as a whole: every operation, parameter and reference exists and fits, no cycles. */
export interface PipelineDefinition {
  name: string;
  description: string;
  /** The file it came from, as errors name it. */
  file: string;
  inputs: PipelineInput[];
  /** In an order where each step comes after the steps it uses. */
  steps: PipelineStep[];
  /** Steps grouped by what may run at the same time: each stage uses only earlier stages. */
  stages: string[][];
  results: PipelineResult[];
}

/** One problem in a definition, with where it is. */
export interface DefinitionIssue {
  file: string;
  line?: number;
  step?: string;
  field?: string;
  message: string;
}

export const formatIssue = (issue: DefinitionIssue): string =>
  `${issue.file}${issue.line ? `:${issue.line}` : ''}: ${issue.step ? `step '${issue.step}', ` : ''}${issue.field ? `field '${issue.field}': ` : ''}${issue.message}`;

/** A definition that cannot run: a 400 (CLI exit 2) listing every problem found, one a line. */
export class PipelineDefinitionError extends MediaflowError {
  constructor(readonly issues: DefinitionIssue[]) {
    super('MF_ERR_PARAM', issues.map(formatIssue).join('\n'));
    this.name = 'PipelineDefinitionError';
  }
}

/** The kind of value a parameter takes, as far as references are concerned. */
type ParamKind = 'url' | 'urls' | 'integer' | 'number' | 'boolean' | 'string';
/** The kind of value an expression gives, before the run: a step's output is a local file (or a list of them). */
type Shape = 'string' | 'integer' | 'number' | 'url' | 'urls' | 'file' | 'files' | 'text' | 'list' | 'literal';

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const INPUT_NAME = /^[a-z][a-z0-9_]*$/;
const RESULT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const PIPELINE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

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
      return `${what} is a list of output files (the step has \`each\`)`;
    case 'urls':
      return `${what} is a list of URLs (type urls)`;
    default:
      return `${what} is of type ${shape}`;
  }
};

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
    parseParams({ type: 'object', properties: { [key]: schema }, required: [] } as unknown as TObject, { [key]: value });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Finds an operation by its name or its CLI spelling (`crop-image-to-short` for `crop_image_to_short`). */
export function findOperation(registry: Registry, op: string): PluginDefinition | undefined {
  return registry.get(op) ?? registry.list().find((plugin) => dashed(plugin.name) === dashed(op));
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parses and checks a definition's text (YAML, or JSON, which YAML reads too). `file` is how errors name it. */
export function parsePipeline(text: string, file: string, registry: Registry): PipelineDefinition {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new PipelineDefinitionError(
      doc.errors.map((error) => ({ file, line: lineCounter.linePos(error.pos[0]).line, message: error.message.split('\n')[0]! })),
    );
  }
  return new Checker(doc, lineCounter, file, registry).check();
}

/** Walks a parsed document, collecting every problem before giving up. */
class Checker {
  private readonly issues: DefinitionIssue[] = [];

  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly file: string,
    private readonly registry: Registry,
  ) {}

  /** The line of the node at `path`, or of its nearest ancestor that has one. */
  private lineOf(path: Array<string | number>): number | undefined {
    for (let length = path.length; length >= 0; length--) {
      const node = this.doc.getIn(path.slice(0, length), true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) return this.lines.linePos(node.range[0]).line;
    }
    return undefined;
  }

  private issue(path: Array<string | number>, message: string, where: { step?: string; field?: string } = {}): void {
    const line = this.lineOf(path);
    const field = where.field ?? (where.step ? path.slice(2) : path).join('.');
    this.issues.push({ file: this.file, ...(line ? { line } : {}), ...(where.step ? { step: where.step } : {}), ...(field ? { field } : {}), message });
  }

  private unknownKeys(value: Record<string, unknown>, allowed: string[], path: string[], step?: string): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.issue([...path, key], `unknown key '${key}' (expected ${allowed.join(', ')})`, step ? { step } : {});
    }
  }

  check(): PipelineDefinition {
    const root: unknown = this.doc.toJS();
    if (!isRecord(root)) {
      this.issue([], 'a pipeline must be a mapping with name, description, inputs, steps and results');
      throw new PipelineDefinitionError(this.issues);
    }
    this.unknownKeys(root, ['name', 'description', 'inputs', 'steps', 'results'], []);
    const name = typeof root.name === 'string' ? root.name : '';
    if (!PIPELINE_NAME.test(name)) this.issue(['name'], 'expected a name of letters, digits, - and _');
    if (root.description !== undefined && typeof root.description !== 'string') this.issue(['description'], 'expected text');
    const inputs = this.checkInputs(root.inputs);
    const steps = this.checkSteps(root.steps, inputs);
    const stages = this.order(steps);
    const results = this.checkResults(root.results, steps);
    if (this.issues.length > 0) {
      this.issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
      throw new PipelineDefinitionError(this.issues);
    }
    const byName = new Map(steps.map((step) => [step.name, step]));
    return {
      name,
      description: typeof root.description === 'string' ? root.description : '',
      file: this.file,
      inputs: [...inputs.values()],
      steps: stages.flat().map((step) => byName.get(step)!),
      stages,
      results,
    };
  }

  private checkInputs(raw: unknown): Map<string, PipelineInput> {
    const inputs = new Map<string, PipelineInput>();
    if (raw === undefined || raw === null) return inputs;
    if (!isRecord(raw)) {
      this.issue(['inputs'], 'expected a mapping of input names to their declarations');
      return inputs;
    }
    for (const [name, declaration] of Object.entries(raw)) {
      const path = ['inputs', name];
      if (!INPUT_NAME.test(name)) this.issue(path, `input name '${name}' must be snake_case (lower-case letters, digits and _)`);
      // `name: url` is short for `name: { type: url }`.
      const spec = typeof declaration === 'string' ? { type: declaration } : declaration;
      if (!isRecord(spec)) {
        this.issue(path, `expected a type (${INPUT_TYPES.join(', ')}) or a mapping with type, default and description`);
        continue;
      }
      this.unknownKeys(spec, ['type', 'default', 'description'], path);
      const type = spec.type as InputType;
      if (!INPUT_TYPES.includes(type)) {
        this.issue([...path, 'type'], `unknown type '${String(spec.type)}' (expected ${INPUT_TYPES.join(', ')})`);
        continue;
      }
      const input: PipelineInput = { name, type };
      if (spec.description !== undefined) {
        if (typeof spec.description === 'string') input.description = spec.description;
        else this.issue([...path, 'description'], 'expected text');
      }
      if (spec.default !== undefined && spec.default !== null) {
        const value = spec.default;
        const fits =
          type === 'integer'
            ? Number.isInteger(value) || (typeof value === 'string' && /^[+-]?\d+$/.test(value.trim()))
            : type === 'number'
              ? (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && NUMBER.test(value.trim()))
              : type === 'urls'
              ? typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))
              : typeof value === 'string' || typeof value === 'number';
        if (!fits) this.issue([...path, 'default'], `default does not fit type ${type}`);
        else input.default = type === 'integer' || type === 'number' ? Number(value) : type === 'string' || type === 'url' ? String(value) : (value as string | string[]);
      }
      inputs.set(name, input);
    }
    return inputs;
  }

  private checkSteps(raw: unknown, inputs: Map<string, PipelineInput>): PipelineStep[] {
    if (!isRecord(raw) || Object.keys(raw).length === 0) {
      this.issue(['steps'], 'expected a mapping of step names to steps, with at least one step');
      return [];
    }
    const names = new Set(Object.keys(raw));
    const plugins = new Map<string, PluginDefinition>();
    const eachSteps = new Set<string>();
    // First pass: operations, and which steps have `each` (their output is a list).
    for (const [name, step] of Object.entries(raw)) {
      if (!isRecord(step)) continue;
      const plugin = typeof step.op === 'string' ? findOperation(this.registry, step.op) : undefined;
      if (plugin) plugins.set(name, plugin);
      if (step.each !== undefined) eachSteps.add(name);
    }
    const steps: PipelineStep[] = [];
    for (const [name, step] of Object.entries(raw)) {
      const path = ['steps', name];
      if (!NAME.test(name)) this.issue(path, `step name '${name}' must be letters, digits, - and _`, { step: name, field: 'name' });
      if (!isRecord(step)) {
        this.issue(path, 'expected a mapping with op and with', { step: name, field: 'op' });
        continue;
      }
      this.unknownKeys(step, ['op', 'with', 'each', 'description'], path, name);
      const plugin = plugins.get(name);
      if (typeof step.op !== 'string') this.issue([...path, 'op'], 'expected the name of an operation', { step: name });
      else if (!plugin) {
        const known = this.registry.list().map((p) => p.name).join(', ');
        this.issue([...path, 'op'], `unknown operation '${step.op}' (known: ${known})`, { step: name });
      }
      const context = { step: name, names, inputs, eachSteps };
      const after = new Set<string>();
      let each: Expr | undefined;
      let itemShape: Shape | undefined;
      if (step.each !== undefined) {
        each = this.parse(step.each, [...path, 'each'], name);
        if (each) {
          itemShape = this.checkEach(each, [...path, 'each'], context);
          for (const ref of refsOf(each)) if ('step' in ref) after.add(ref.step);
        }
      }
      const withExprs: Record<string, Expr> = {};
      if (step.with !== undefined && step.with !== null && !isRecord(step.with)) {
        this.issue([...path, 'with'], 'expected a mapping of parameter names to values', { step: name });
      }
      const given = isRecord(step.with) ? step.with : {};
      let usesItem = false;
      for (const [key, value] of Object.entries(given)) {
        const fieldPath = [...path, 'with', key];
        const expr = this.parse(value, fieldPath, name);
        if (!expr) continue;
        for (const ref of refsOf(expr)) {
          if ('step' in ref) after.add(ref.step);
          if ('item' in ref) usesItem = true;
        }
        withExprs[key] = expr;
        if (!plugin) continue;
        const schema = plugin.params.properties[key] as TSchema | undefined;
        if (!schema) {
          this.issue(fieldPath, `unknown parameter '${key}' of operation '${plugin.name}' (parameters: ${Object.keys(plugin.params.properties).join(', ')})`, { step: name });
          continue;
        }
        this.checkParam(key, schema, expr, fieldPath, { ...context, itemShape });
      }
      if (each && !usesItem) this.issue([...path, 'each'], 'the step has `each` but no parameter uses {{ item }}', { step: name });
      if (plugin) {
        const required = new Set(plugin.params.required ?? []);
        for (const [key, schema] of Object.entries(plugin.params.properties) as Array<[string, TSchema & { default?: unknown }]>) {
          const spec = inputSpecOf(schema);
          if (key in withExprs || schema.default !== undefined) continue;
          if (required.has(key) || (spec?.list && spec.tooFew)) {
            this.issue([...path, 'with'], `missing required parameter '${key}' of operation '${plugin.name}'`, { step: name, field: `with.${key}` });
          }
        }
      }
      steps.push({
        name,
        op: plugin?.name ?? String(step.op),
        ...(typeof step.description === 'string' ? { description: step.description } : {}),
        with: withExprs,
        ...(each ? { each } : {}),
        after: [...after].filter((dep) => names.has(dep)),
      });
    }
    return steps;
  }

  private parse(raw: unknown, path: Array<string | number>, step: string): Expr | undefined {
    try {
      return parseExpr(raw);
    } catch (error) {
      if (!(error instanceof ExprError)) throw error;
      this.issue(path, error.message, { step });
      return undefined;
    }
  }

  /** The shape of a reference, or undefined (with an issue) when it names nothing. */
  private shapeOfRef(
    ref: Ref,
    path: Array<string | number>,
    context: { step: string; names: Set<string>; inputs: Map<string, PipelineInput>; eachSteps: Set<string>; itemShape?: Shape | undefined },
  ): Shape | undefined {
    if ('input' in ref) {
      const input = context.inputs.get(ref.input);
      if (!input) {
        const declared = [...context.inputs.keys()];
        this.issue(path, `{{ inputs.${ref.input} }} names no input (declared: ${declared.length ? declared.join(', ') : 'none'})`, { step: context.step });
        return undefined;
      }
      return input.type;
    }
    if ('step' in ref) {
      if (!context.names.has(ref.step)) {
        this.issue(path, `{{ steps.${ref.step}.output }} names no step (steps: ${[...context.names].join(', ')})`, { step: context.step });
        return undefined;
      }
      return context.eachSteps.has(ref.step) ? 'files' : 'file';
    }
    if (!context.itemShape) {
      this.issue(path, '{{ item }} is only defined in a step with `each`', { step: context.step });
      return undefined;
    }
    return context.itemShape;
  }

  /** Checks `each` and returns the shape of its items. */
  private checkEach(
    each: Expr,
    path: Array<string | number>,
    context: { step: string; names: Set<string>; inputs: Map<string, PipelineInput>; eachSteps: Set<string> },
  ): Shape | undefined {
    const usage = 'expected a list: {{ inputs.<an input of type urls> }}, {{ steps.<a step with each>.output }} or a YAML list';
    if (refsOf(each).some((ref) => 'item' in ref)) {
      this.issue(path, '{{ item }} cannot be used in `each` itself', { step: context.step });
      return undefined;
    }
    if (each.kind === 'ref') {
      const shape = this.shapeOfRef(each.ref, path, context);
      if (shape === 'urls') return 'url';
      if (shape === 'files') return 'file';
      if (shape) this.issue(path, `${describeShape(shape, each.ref)}, not a list; ${usage}`, { step: context.step });
      return undefined;
    }
    if (each.kind === 'list') {
      const shapes = each.items.map((item) => this.shapeOfItem(item, path, context));
      return shapes.every((shape) => shape === 'file' || shape === 'files') ? 'file' : 'url';
    }
    this.issue(path, usage, { step: context.step });
    return undefined;
  }

  private shapeOfItem(
    expr: Expr,
    path: Array<string | number>,
    context: { step: string; names: Set<string>; inputs: Map<string, PipelineInput>; eachSteps: Set<string>; itemShape?: Shape | undefined },
  ): Shape | undefined {
    if (expr.kind === 'literal') return 'literal';
    if (expr.kind === 'ref') return this.shapeOfRef(expr.ref, path, context);
    if (expr.kind === 'text') {
      for (const ref of refsOf(expr)) {
        const shape = this.shapeOfRef(ref, path, context);
        // A file path or a list pasted into text would not be a usable value.
        if (shape && !['string', 'integer', 'number', 'url'].includes(shape)) {
          this.issue(path, `${describeShape(shape, ref)} and cannot be part of text; use it as the whole value`, { step: context.step });
        }
      }
      return 'text';
    }
    return 'list';
  }

  /** Checks one parameter value against the parameter's schema. */
  private checkParam(
    key: string,
    schema: TSchema,
    expr: Expr,
    path: Array<string | number>,
    context: { step: string; names: Set<string>; inputs: Map<string, PipelineInput>; eachSteps: Set<string>; itemShape?: Shape | undefined },
  ): void {
    const kind = paramKind(schema);
    const where = { step: context.step };
    if (expr.kind === 'literal') {
      const problem = checkValue(key, schema, expr.value);
      if (problem) this.issue(path, problem, where);
      return;
    }
    if (expr.kind === 'list') {
      if (kind !== 'urls') {
        this.issue(path, `parameter '${key}' takes ${describeKind[kind]}, not a list`, where);
        return;
      }
      let count = 0;
      let known = true;
      for (const item of expr.items) {
        const shape = this.shapeOfItem(item, path, context);
        if (shape === 'list') continue;
        if (shape && !['url', 'urls', 'file', 'files', 'text', 'literal'].includes(shape)) {
          this.issue(path, `parameter '${key}' takes URLs or files; ${describeShape(shape)}`, where);
        }
        if (shape === 'urls' || shape === 'files') known = false;
        count++;
      }
      const spec = inputSpecOf(schema) as InputSpec;
      if (known && count < (spec.min ?? 1)) this.issue(path, spec.tooFew ?? `parameter '${key}' needs at least ${spec.min ?? 1} items`, where);
      return;
    }
    const shape = this.shapeOfItem(expr, path, context);
    if (!shape) return;
    if (!accepts(kind, shape)) {
      const ref = expr.kind === 'ref' ? expr.ref : undefined;
      const hint = ref && 'input' in ref && shape === 'string' && (kind === 'url' || kind === 'urls') ? '; declare the input with type url' : ref && 'input' in ref && shape === 'string' && (kind === 'integer' || kind === 'number') ? `; declare the input with type ${kind}` : '';
      this.issue(path, `parameter '${key}' takes ${describeKind[kind]}, but ${describeShape(shape, ref)}${hint}`, where);
      return;
    }
    // An input's default must suit every parameter it reaches (an enum, a range).
    if (expr.kind === 'ref' && 'input' in expr.ref) {
      const input = context.inputs.get(expr.ref.input);
      if (input?.default !== undefined && kind !== 'url' && kind !== 'urls') {
        const problem = checkValue(key, schema, input.default);
        if (problem) this.issue(path, `the default of input '${input.name}' does not suit parameter '${key}': ${problem}`, where);
      }
    }
  }

  /** Orders the steps in stages and reports cycles. */
  private order(steps: PipelineStep[]): string[][] {
    const pending = new Map(steps.map((step) => [step.name, new Set(step.after)]));
    const stages: string[][] = [];
    while (pending.size > 0) {
      const ready = [...pending.entries()].filter(([, after]) => [...after].every((dep) => !pending.has(dep))).map(([name]) => name);
      if (ready.length === 0) break;
      for (const name of ready) pending.delete(name);
      stages.push(ready);
    }
    if (pending.size > 0) {
      const cycle = findCycle(pending);
      this.issue(['steps', cycle[0]!], `steps form a cycle: ${cycle.join(' -> ')}`, { step: cycle[0]!, field: 'with' });
    }
    return stages;
  }

  private checkResults(raw: unknown, steps: PipelineStep[]): PipelineResult[] {
    const results: PipelineResult[] = [];
    if (!isRecord(raw) || Object.keys(raw).length === 0) {
      this.issue(['results'], 'expected a mapping of result names to step outputs, e.g. `video: "{{ steps.<name>.output }}"`');
      return results;
    }
    const names = new Set(steps.map((step) => step.name));
    for (const [name, value] of Object.entries(raw)) {
      const path = ['results', name];
      if (!RESULT_NAME.test(name)) this.issue(path, `result name '${name}' must be letters, digits, - and _ (it names the output file)`);
      let expr: Expr | undefined;
      try {
        expr = parseExpr(value);
      } catch (error) {
        this.issue(path, (error as Error).message);
        continue;
      }
      if (expr.kind !== 'ref' || !('step' in expr.ref)) {
        this.issue(path, 'expected a step output: "{{ steps.<name>.output }}"');
        continue;
      }
      if (!names.has(expr.ref.step)) {
        this.issue(path, `{{ steps.${expr.ref.step}.output }} names no step (steps: ${[...names].join(', ')})`);
        continue;
      }
      results.push({ name, step: expr.ref.step });
    }
    return results;
  }
}

/** One cycle among steps that could not be ordered, as a path that ends where it starts. */
function findCycle(pending: Map<string, Set<string>>): string[] {
  const start = [...pending.keys()][0]!;
  const pathIndex = new Map<string, number>();
  const path: string[] = [];
  let current = start;
  // Every pending step waits on another pending step, so walking those edges must loop.
  while (!pathIndex.has(current)) {
    pathIndex.set(current, path.length);
    path.push(current);
    current = [...pending.get(current)!].find((dep) => pending.has(dep))!;
  }
  return [...path.slice(pathIndex.get(current)!), current];
}
