import type { TSchema } from '@sinclair/typebox';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { NUMBER, parseParams } from '../engine/plugins/params.js';
import { DOCUMENT_KEYWORD, inputSpecOf, VALUES_KEYWORD, type PluginDefinition } from '../engine/contract/plugin.js';
import type { Registry } from '../engine/plugins/registry.js';
import { fileFieldsOf, sampleFiles, sampleParams } from '../engine/plugins/plugin-check.js';
import { dashed } from '../engine/plugins/reserved.js';
import { Issues, PipelineDefinitionError } from './definition/issues.js';
import { checkEach, checkParam, noFileIssue, parseValue, type Shape } from './definition/references.js';
import { orderSteps } from './definition/stages.js';
import {
  INPUT_TYPES,
  type InputType,
  type PipelineDefinition,
  type PipelineInput,
  type PipelineResult,
  type PipelineStep,
} from './definition/types.js';
import { parseExpr, refsOf, type Expr, type ParamForm } from './template.js';

/**
 * A pipeline definition, read and checked as a whole: its keys, inputs, steps and results here, the
 * references and values of each step in definition/references.ts, the order of the steps in
 * definition/stages.ts. A definition that cannot run throws every problem found, with its line.
 */

export { PipelineDefinitionError };
export type { PipelineDefinition, PipelineInput, PipelineStep } from './definition/types.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const INPUT_NAME = /^[a-z][a-z0-9_]*$/;
const RESULT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const PIPELINE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Finds an operation by its name or its CLI spelling (`crop-image-to-short` for `crop_image_to_short`). */
export function findOperation(registry: Registry, op: string): PluginDefinition | undefined {
  return registry.get(op) ?? registry.list().find((plugin) => dashed(plugin.name) === dashed(op));
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a parameter takes a document (render's `edit`) or named values (render's `merge`) besides plain values. */
function formOf(schema: TSchema | undefined): ParamForm {
  const marked = (schema ?? {}) as Record<string, unknown>;
  return marked[DOCUMENT_KEYWORD] ? 'document' : marked[VALUES_KEYWORD] ? 'values' : 'plain';
}

/**
 * The files a step's operation writes, as far as its literal values tell (`render` with `dry_run: true` writes
 * none); what references give is known at the run, which checks it again (runner.ts).
 */
function stepFiles(plugin: PluginDefinition, given: Record<string, unknown>): string[] | undefined {
  const literal = Object.fromEntries(
    Object.entries(given).filter(
      ([key, value]) =>
        typeof value === 'number' ||
        typeof value === 'boolean' ||
        (typeof value === 'string' && !value.includes('{{')) ||
        (isRecord(value) && formOf(plugin.params.properties[key] as TSchema | undefined) === 'document'),
    ),
  );
  try {
    const spec = plugin.output(parseParams(plugin.params, { ...sampleParams(plugin.params), ...literal }) as never);
    return 'files' in spec ? spec.files : undefined;
  } catch {
    // A literal the operation refuses: reported with its field; the operation's sample output stands meanwhile.
    return sampleFiles(plugin);
  }
}

/** Parses and checks a definition's text (YAML, or JSON, which YAML reads too). `file` is how errors name it. */
export function parsePipeline(text: string, file: string, registry: Registry): PipelineDefinition {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new PipelineDefinitionError(
      doc.errors.map((error) => ({
        file,
        line: lineCounter.linePos(error.pos[0]).line,
        message: error.message.split('\n')[0]!,
      })),
    );
  }
  return new Checker(doc, lineCounter, file, registry).check();
}

/** Walks a parsed document, collecting every problem before giving up. */
class Checker {
  private readonly issues: Issues;
  /** Steps whose operation writes no file (media-metadata), with its name: their output names nothing. */
  private readonly filelessSteps = new Map<string, string>();
  /** The fields each step's operation may answer a file under (its output's, and those of files beside it). */
  private readonly fileFields = new Map<string, ReadonlySet<string>>();

  constructor(
    private readonly doc: Document,
    lines: LineCounter,
    private readonly file: string,
    private readonly registry: Registry,
  ) {
    this.issues = new Issues(doc, lines, file);
  }

  check(): PipelineDefinition {
    const root: unknown = this.doc.toJS();
    if (!isRecord(root)) {
      this.issues.add([], 'a pipeline must be a mapping with name, description, inputs, steps and results');
      throw this.issues.error();
    }
    this.issues.unknownKeys(root, ['name', 'description', 'inputs', 'steps', 'results'], []);
    const name = typeof root.name === 'string' ? root.name : '';
    if (!PIPELINE_NAME.test(name)) this.issues.add(['name'], 'expected a name of letters, digits, - and _');
    if (root.description !== undefined && typeof root.description !== 'string')
      this.issues.add(['description'], 'expected text');
    const inputs = this.checkInputs(root.inputs);
    const steps = this.checkSteps(root.steps, inputs);
    const stages = this.order(steps);
    const results = this.checkResults(root.results, steps);
    if (this.issues.count > 0) throw this.issues.error();
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
      this.issues.add(['inputs'], 'expected a mapping of input names to their declarations');
      return inputs;
    }
    for (const [name, declaration] of Object.entries(raw)) {
      const path = ['inputs', name];
      if (!INPUT_NAME.test(name))
        this.issues.add(path, `input name '${name}' must be snake_case (lower-case letters, digits and _)`);
      // `name: url` is short for `name: { type: url }`.
      const spec = typeof declaration === 'string' ? { type: declaration } : declaration;
      if (!isRecord(spec)) {
        this.issues.add(
          path,
          `expected a type (${INPUT_TYPES.join(', ')}) or a mapping with type, default and description`,
        );
        continue;
      }
      this.issues.unknownKeys(spec, ['type', 'default', 'description'], path);
      const type = spec.type as InputType;
      if (!INPUT_TYPES.includes(type)) {
        this.issues.add([...path, 'type'], `unknown type '${String(spec.type)}' (expected ${INPUT_TYPES.join(', ')})`);
        continue;
      }
      const input: PipelineInput = { name, type };
      if (spec.description !== undefined) {
        if (typeof spec.description === 'string') input.description = spec.description;
        else this.issues.add([...path, 'description'], 'expected text');
      }
      if (spec.default !== undefined && spec.default !== null) {
        const value = spec.default;
        const fits =
          type === 'integer'
            ? Number.isInteger(value) || (typeof value === 'string' && /^[+-]?\d+$/.test(value.trim()))
            : type === 'number'
              ? (typeof value === 'number' && Number.isFinite(value)) ||
                (typeof value === 'string' && NUMBER.test(value.trim()))
              : type === 'urls'
                ? typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))
                : typeof value === 'string' || typeof value === 'number';
        if (!fits) this.issues.add([...path, 'default'], `default does not fit type ${type}`);
        else
          input.default =
            type === 'integer' || type === 'number'
              ? Number(value)
              : type === 'string' || type === 'url'
                ? String(value)
                : (value as string | string[]);
      }
      inputs.set(name, input);
    }
    return inputs;
  }

  private checkSteps(raw: unknown, inputs: Map<string, PipelineInput>): PipelineStep[] {
    if (!isRecord(raw) || Object.keys(raw).length === 0) {
      this.issues.add(['steps'], 'expected a mapping of step names to steps, with at least one step');
      return [];
    }
    const names = new Set(Object.keys(raw));
    const plugins = new Map<string, PluginDefinition>();
    const listSteps = new Set<string>();
    const fileFields = this.fileFields;
    // First pass: operations, and which steps give a list of files (with `each`, or writing several) or none.
    for (const [name, step] of Object.entries(raw)) {
      if (!isRecord(step)) continue;
      const plugin = typeof step.op === 'string' ? findOperation(this.registry, step.op) : undefined;
      if (plugin) plugins.set(name, plugin);
      if (plugin) fileFields.set(name, fileFieldsOf(plugin));
      const files = plugin && stepFiles(plugin, isRecord(step.with) ? step.with : {});
      if (step.each !== undefined || files) listSteps.add(name);
      if (plugin && files?.length === 0) this.filelessSteps.set(name, plugin.name);
    }
    const steps: PipelineStep[] = [];
    for (const [name, step] of Object.entries(raw)) {
      const path = ['steps', name];
      if (!NAME.test(name))
        this.issues.add(path, `step name '${name}' must be letters, digits, - and _`, { step: name, field: 'name' });
      if (!isRecord(step)) {
        this.issues.add(path, 'expected a mapping with op and with', { step: name, field: 'op' });
        continue;
      }
      this.issues.unknownKeys(step, ['op', 'with', 'each', 'when', 'unless', 'description'], path, name);
      const plugin = plugins.get(name);
      if (typeof step.op !== 'string')
        this.issues.add([...path, 'op'], 'expected the name of an operation', { step: name });
      else if (!plugin) {
        const known = this.registry
          .list()
          .map((p) => p.name)
          .join(', ');
        this.issues.add([...path, 'op'], `unknown operation '${step.op}' (known: ${known})`, { step: name });
      }
      const context = { step: name, names, inputs, listSteps, filelessSteps: this.filelessSteps, fileFields };
      const when = this.condition(step.when, [...path, 'when'], name, inputs);
      const unless = this.condition(step.unless, [...path, 'unless'], name, inputs);
      const after = new Set<string>();
      let each: Expr | undefined;
      let itemShape: Shape | undefined;
      if (step.each !== undefined) {
        each = parseValue(this.issues, step.each, [...path, 'each'], name);
        if (each) {
          itemShape = checkEach(this.issues, each, [...path, 'each'], context);
          for (const ref of refsOf(each)) if ('step' in ref) after.add(ref.step);
        }
      }
      const withExprs: Record<string, Expr> = {};
      if (step.with !== undefined && step.with !== null && !isRecord(step.with)) {
        this.issues.add([...path, 'with'], 'expected a mapping of parameter names to values', { step: name });
      }
      const given = isRecord(step.with) ? step.with : {};
      let usesItem = false;
      for (const [key, value] of Object.entries(given)) {
        const fieldPath = [...path, 'with', key];
        const schema = plugin?.params.properties[key] as TSchema | undefined;
        const expr = parseValue(this.issues, value, fieldPath, name, formOf(schema));
        if (!expr) continue;
        for (const ref of refsOf(expr)) {
          if ('step' in ref) after.add(ref.step);
          if ('item' in ref) usesItem = true;
        }
        withExprs[key] = expr;
        if (!plugin) continue;
        if (!schema) {
          this.issues.add(
            fieldPath,
            `unknown parameter '${key}' of operation '${plugin.name}' ` +
              `(parameters: ${Object.keys(plugin.params.properties).join(', ')})`,
            { step: name },
          );
          continue;
        }
        checkParam(this.issues, key, schema, expr, fieldPath, { ...context, itemShape });
      }
      if (each && !usesItem)
        this.issues.add([...path, 'each'], 'the step has `each` but no parameter uses {{ item }}', { step: name });
      if (plugin) {
        const required = new Set(plugin.params.required ?? []);
        for (const [key, schema] of Object.entries(plugin.params.properties) as Array<
          [string, TSchema & { default?: unknown }]
        >) {
          const spec = inputSpecOf(schema);
          if (key in withExprs || schema.default !== undefined) continue;
          if (required.has(key) || (spec?.list && spec.tooFew)) {
            this.issues.add([...path, 'with'], `missing required parameter '${key}' of operation '${plugin.name}'`, {
              step: name,
              field: `with.${key}`,
            });
          }
        }
      }
      steps.push({
        name,
        op: plugin?.name ?? String(step.op),
        ...(typeof step.description === 'string' ? { description: step.description } : {}),
        with: withExprs,
        ...(each ? { each } : {}),
        ...(when ? { when } : {}),
        ...(unless ? { unless } : {}),
        after: [...after].filter((dep) => names.has(dep)),
      });
    }
    return steps;
  }

  /** The input a step's `when` or `unless` names (`{{ inputs.<name> }}`), if it is given and names one. */
  private condition(
    raw: unknown,
    path: Array<string | number>,
    step: string,
    inputs: Map<string, PipelineInput>,
  ): string | undefined {
    if (raw === undefined) return undefined;
    const expr = parseValue(this.issues, raw, path, step);
    if (!expr) return undefined;
    if (expr.kind !== 'ref' || !('input' in expr.ref)) {
      this.issues.add(path, 'expected an input: "{{ inputs.<name> }}" (the step runs when it is given)', { step });
      return undefined;
    }
    if (!inputs.has(expr.ref.input)) {
      this.issues.add(
        path,
        `{{ inputs.${expr.ref.input} }} names no input (declared: ${[...inputs.keys()].join(', ')})`,
        {
          step,
        },
      );
      return undefined;
    }
    return expr.ref.input;
  }

  /** Orders the steps in stages and reports cycles. */
  private order(steps: PipelineStep[]): string[][] {
    const { stages, cycle } = orderSteps(steps);
    if (cycle) {
      this.issues.add(['steps', cycle[0]!], `steps form a cycle: ${cycle.join(' -> ')}`, {
        step: cycle[0]!,
        field: 'with',
      });
    }
    return stages;
  }

  private checkResults(raw: unknown, steps: PipelineStep[]): PipelineResult[] {
    const results: PipelineResult[] = [];
    if (!isRecord(raw) || Object.keys(raw).length === 0) {
      this.issues.add(
        ['results'],
        'expected a mapping of result names to step outputs, e.g. `video: "{{ steps.<name>.output }}"`',
      );
      return results;
    }
    const names = new Set(steps.map((step) => step.name));
    for (const [name, value] of Object.entries(raw)) {
      const path = ['results', name];
      if (!RESULT_NAME.test(name))
        this.issues.add(path, `result name '${name}' must be letters, digits, - and _ (it names the output file)`);
      let expr: Expr | undefined;
      try {
        expr = parseExpr(value);
      } catch (error) {
        this.issues.add(path, (error as Error).message);
        continue;
      }
      if (expr.kind !== 'ref' || !('step' in expr.ref)) {
        this.issues.add(path, 'expected a step output: "{{ steps.<name>.output }}"');
        continue;
      }
      if (!names.has(expr.ref.step)) {
        this.issues.add(path, `{{ steps.${expr.ref.step}.output }} names no step (steps: ${[...names].join(', ')})`);
        continue;
      }
      const operation = this.filelessSteps.get(expr.ref.step);
      if (operation !== undefined) {
        this.issues.add(path, noFileIssue(expr.ref.step, operation));
        continue;
      }
      const fields = this.fileFields.get(expr.ref.step);
      if (expr.ref.field !== undefined && fields && !fields.has(expr.ref.field)) {
        this.issues.add(
          path,
          `{{ steps.${expr.ref.step}.${expr.ref.field} }} names no file of step '${expr.ref.step}' (its files: ` +
            `${[...fields].join(', ')})`,
        );
        continue;
      }
      results.push({ name, step: expr.ref.step, ...(expr.ref.field !== undefined ? { field: expr.ref.field } : {}) });
    }
    return results;
  }
}
