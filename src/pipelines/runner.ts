import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile } from 'node:fs/promises';
import path from 'node:path';
import type { Engine } from '../engine/run/engine.js';
import type { JobProgress, LocalFilePolicy } from '../engine/run/job-run.js';
import { outputPaths, type OutputSpec } from '../engine/contract/plugin.js';
import { isAbort, MediaflowError, paramError } from '../engine/errors.js';
import { LocalOutputStore, publishAll, type OutputStore } from '../engine/storage/storage.js';
import type { PipelineDefinition, PipelineStep } from './definition.js';
import type { PipelineResult } from './definition/types.js';
import { readInputs, type InputValue } from './inputs.js';
import { showExpr, showRef, type Expr, type Ref } from './template.js';

/** What a run tells its progress display. */
export type StepEvent =
  | { type: 'start'; step: string; op: string; items?: number }
  | { type: 'progress'; step: string; item?: number; progress: JobProgress }
  | { type: 'done'; step: string; ms: number };

export interface PipelineRunOptions {
  /** Raw input values: flags, form fields, CSV cells or JSON values, by input name. */
  inputs: Record<string, unknown>;
  /** Refuse input names the pipeline does not declare (the CLI's `--input`), instead of ignoring them. */
  refuseUnknownInputs?: boolean;
  /**
   * Which user-given inputs are local files (the CLI's `anyLocalPath`). The server gives none.
   * Whatever it says, steps also accept exactly the files earlier steps of the same run produced.
   */
  localFiles?: LocalFilePolicy;
  /** Where the results are published, and the folder inside it they go to (`''` for its top). */
  store: OutputStore;
  resultDir: string;
  /** The job the run is (JobOptions.owner), when it runs as one. */
  owner?: string;
  signal?: AbortSignal;
  onEvent?: (event: StepEvent) => void;
}

/** A finished run: each result's published path(s), relative to the store, the steps' answers, and timings. */
export interface PipelineRun {
  id: string;
  outputs: Record<string, string | string[]>;
  /**
   * The answer fields of each step that gave some (a measured loudness, metadata), by step name: a
   * list, one per item, for a step with `each`. Absent when no step answered anything.
   */
  answers?: Record<string, StepAnswers | StepAnswers[]>;
  timings: { totalMs: number; steps: Record<string, number> };
}

/** The answer fields of one operation (JobResult.answers). */
type StepAnswers = Record<string, unknown>;

/** The values references resolve to during a run. */
interface Scope {
  inputs: Record<string, InputValue>;
  /**
   * Each finished step's output: an absolute path, or a list of them for a step with `each` or an
   * operation that writes several files (none: an empty list).
   */
  outputs: Map<string, string | string[]>;
  /**
   * Each finished step's files by the fields its operation answers them under (its output's, and those of files
   * alongside it: `subtitle_file_url`), as paths, or lists of them for a step with `each`.
   */
  files: Map<string, Record<string, string | string[]>>;
  /** The steps that do not run in this run (`when`, `unless`), with why. */
  skipped: Map<string, string>;
  item?: string;
}

/** Why a step does not run with these inputs (its `when` input is not given, its `unless` input is), if it does not. */
function skipReason(step: PipelineStep, inputs: Record<string, InputValue>): string | undefined {
  const given = (name: string) => [inputs[name] ?? ''].flat().some((value) => String(value).trim() !== '');
  if (step.when !== undefined && !given(step.when)) return `its \`when\` input \`${step.when}\` is not given`;
  if (step.unless !== undefined && given(step.unless)) return `its \`unless\` input \`${step.unless}\` is given`;
  return undefined;
}

/** The steps of a definition that do not run with these inputs, with why. */
const skippedSteps = (definition: PipelineDefinition, inputs: Record<string, InputValue>): Map<string, string> =>
  new Map(
    definition.steps.flatMap((step) => {
      const reason = skipReason(step, inputs);
      return reason === undefined ? [] : [[step.name, reason] as const];
    }),
  );

/** A reference's value, or why it has none (a step that does not run, a file its step did not write). */
function valueOf(ref: Ref, scope: Scope): { value: unknown } | { none: string } {
  if ('input' in ref) {
    const value = scope.inputs[ref.input];
    const empty = value === undefined || (Array.isArray(value) ? value.length === 0 : String(value).trim() === '');
    return empty ? { none: `input \`${ref.input}\` is not given` } : { value };
  }
  if ('item' in ref) return { value: scope.item };
  const reason = scope.skipped.get(ref.step);
  if (reason !== undefined) return { none: `step '${ref.step}' does not run (${reason})` };
  const value = ref.field === undefined ? scope.outputs.get(ref.step) : scope.files.get(ref.step)?.[ref.field];
  return value === undefined
    ? { none: `step '${ref.step}' writes no file as \`${ref.field}\` with its parameters` }
    : { value };
}

function resolve(expr: Expr, scope: Scope): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'ref': {
      const { ref } = expr;
      if ('input' in ref) return scope.inputs[ref.input];
      const found = valueOf(ref, scope);
      if ('none' in found) throw paramError(`{{ ${showRef(ref)} }} has no value: ${found.none}`);
      return found.value;
    }
    case 'first': {
      const found = expr.refs.map((ref) => valueOf(ref, scope));
      const first = found.find((one) => 'value' in one);
      if (first && 'value' in first) return first.value;
      const why = found.map((one) => ('none' in one ? one.none : '')).join(', and ');
      throw paramError(`${showExpr(expr)} has no value: ${why}`);
    }
    case 'text':
      return expr.parts
        .map((part) => {
          if (typeof part === 'string') return part;
          const value = resolve({ kind: 'ref', ref: part }, scope);
          return Array.isArray(value) ? value.join(',') : String(value ?? '');
        })
        .join('');
    case 'list':
      return expr.items.flatMap((item) => {
        const value = resolve(item, scope);
        return Array.isArray(value) ? value.map(String) : [String(value)];
      });
    case 'document':
      return expr.value;
    case 'values':
      return Object.fromEntries(Object.entries(expr.entries).map(([name, value]) => [name, resolve(value, scope)]));
  }
}

/** The items a step with `each` runs over. */
function itemsOf(step: PipelineStep, scope: Scope): string[] | undefined {
  if (!step.each) return undefined;
  const value = resolve(step.each, scope);
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

function fieldsOf(step: PipelineStep, scope: Scope): Record<string, unknown> {
  return Object.fromEntries(Object.entries(step.with).map(([key, expr]) => [key, resolve(expr, scope)]));
}

/** A step's failure, with the step named and the underlying status kept (a 502 stays a 502). */
export function stepError(step: PipelineStep, error: unknown, item?: { index: number; count: number }): unknown {
  if (isAbort(error)) return error;
  const where = `Step '${step.name}' (${step.op}) failed: ${item ? `item ${item.index + 1} of ${item.count}: ` : ''}`;
  if (error instanceof MediaflowError) {
    return new MediaflowError(error.code, `${where}${error.message}`, {
      cause: error,
      ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
      // Every problem of a document (render's edit), each with its path in the document.
      ...(error.errors !== undefined ? { errors: error.errors } : {}),
    });
  }
  // An unexpected error's text may hold paths or internals: it goes to the cause, for the log.
  return new MediaflowError('MF_ERR_INTERNAL', `${where}internal error`, { cause: error });
}

/**
 * The files of an output spec, each placed by `place`: the step's output (one file, or every one of several), and
 * its files by the fields they are answered under.
 */
function filesOf(spec: OutputSpec, place: (file: string, index: number) => string) {
  const files = outputPaths(spec).map(place);
  if ('files' in spec) return { output: files, named: {} };
  const named: Record<string, string> = {};
  for (const field of [spec.field, ...(spec.alsoAs ?? [])]) named[field] = files[0]!;
  (spec.alongside ?? []).forEach((file, index) => (named[file.field] = files[index + 1]!));
  return { output: files.slice(0, 1), named };
}

/** Files by field, gathered over a step's items: a list for a step with `each`, else the one file. */
function namedFiles(items: Array<Record<string, string>>, each: boolean): Record<string, string | string[]> {
  const fields = [...new Set(items.flatMap((item) => Object.keys(item)))];
  return Object.fromEntries(
    fields.map((field) => [field, each ? items.flatMap((item) => item[field] ?? []) : items[0]![field]!]),
  );
}

/** The value a result publishes: its step's output, or the file it names by field. */
const resultValue = (result: PipelineResult, scope: Scope): string | string[] =>
  result.field === undefined ? scope.outputs.get(result.step)! : scope.files.get(result.step)![result.field]!;

/** A local file a step's input names, as `preflight` found it. */
interface NamedFile {
  step: PipelineStep;
  item?: { index: number; count: number };
  source: string;
  path: string;
}

/**
 * Checks every step with the values it will get, before anything runs: parameters are coerced
 * and input URLs checked exactly as the engine will. Step outputs stand in as placeholder files
 * with the extension the producing step will give them. Returns the fields of each step (one
 * entry per item) as the placeholders left them, the placeholders of each step's output, and the
 * user's local files the steps name.
 */
function preflight(
  definition: PipelineDefinition,
  engine: Engine,
  inputs: Record<string, InputValue>,
  localFiles: LocalFilePolicy | undefined,
  workDir: string,
) {
  const placeholders = new Set<string>();
  const policy: LocalFilePolicy = (source) => (placeholders.has(source) ? source : localFiles?.(source));
  const scope: Scope = { inputs, outputs: new Map(), files: new Map(), skipped: skippedSteps(definition, inputs) };
  const fields = new Map<string, Array<Record<string, unknown>>>();
  const files: NamedFile[] = [];
  const used = new Set([...definition.steps.flatMap((step) => step.after), ...definition.results.map((r) => r.step)]);
  for (const step of definition.steps) {
    if (scope.skipped.has(step.name)) {
      fields.set(step.name, []);
      continue;
    }
    let items: string[] | undefined;
    try {
      items = itemsOf(step, scope);
    } catch (error) {
      throw stepError(step, error);
    }
    if (items?.length === 0) throw stepError(step, new MediaflowError('MF_ERR_PARAM', '`each` gave no items'));
    const outputs: string[] = [];
    const named: Array<Record<string, string>> = [];
    let several = false;
    const stepFields: Array<Record<string, unknown>> = [];
    for (const [index, item] of (items ?? [undefined]).entries()) {
      const where = items ? { index, count: items.length } : undefined;
      let raw;
      let prepared;
      try {
        raw = fieldsOf(step, item === undefined ? scope : { ...scope, item });
        prepared = engine.prepare(step.op, raw, policy);
      } catch (error) {
        throw stepError(step, error, where);
      }
      for (const input of prepared.inputs) {
        if (input.localPath !== undefined && !placeholders.has(input.localPath))
          files.push({ step, ...(where ? { item: where } : {}), source: input.source, path: input.localPath });
      }
      const likely = engine.outputOf(prepared.plugin, prepared.params);
      const placed = filesOf(likely, (file, n) => {
        const placeholder = path.join(workDir, 'pending', step.name, `${index}-${n}${path.extname(file)}`);
        placeholders.add(placeholder);
        return placeholder;
      });
      outputs.push(...placed.output);
      named.push(placed.named);
      several ||= 'files' in likely;
      stepFields.push(raw);
    }
    // A step that writes no file with the values this run gives it (render with `dry_run` from an input) has no
    // output to hand on: refused before anything runs, as the definition's check refuses a literal one.
    if (outputs.length === 0 && used.has(step.name)) {
      const user = definition.results.some((result) => result.step === step.name) ? 'a result' : 'a later step';
      const why = `it writes no file with these values, but ${user} uses its output`;
      throw stepError(step, paramError(`${why} (what it answers is in the run's \`answers\`)`));
    }
    scope.outputs.set(step.name, items || several ? outputs : outputs[0]!);
    scope.files.set(step.name, namedFiles(named, items !== undefined));
    fields.set(step.name, stepFields);
  }
  for (const result of definition.results) {
    const reason = scope.skipped.get(result.step);
    if (reason !== undefined)
      throw paramError(`Result '${result.name}' has no value: step '${result.step}' does not run (${reason})`);
    if (result.field !== undefined && scope.files.get(result.step)?.[result.field] === undefined)
      throw paramError(
        `Result '${result.name}' has no value: step '${result.step}' writes no file as \`${result.field}\` with its ` +
          'parameters',
      );
  }
  return { fields, scope, files };
}

/**
 * Reads a run's inputs and checks every step with them, as `runPipeline` does before it starts:
 * a request can be refused (400) before it is queued. Returns the inputs as read.
 */
export function checkPipeline(
  definition: PipelineDefinition,
  engine: Engine,
  options: Pick<PipelineRunOptions, 'inputs' | 'refuseUnknownInputs' | 'localFiles'>,
  workDir = engine.workspaces.pipelineDir(),
): Record<string, InputValue> {
  const inputs = readInputs(definition, options.inputs, { refuseUnknown: options.refuseUnknownInputs ?? false });
  preflight(definition, engine, inputs, options.localFiles, workDir);
  return inputs;
}

/**
 * What a batch's dry run checks of a row, fetching nothing: `checkPipeline`'s checks, and that
 * every local file the inputs name can be read. Returns the inputs as read and the names of the
 * files the run would publish (`<result>.<ext>`).
 */
export async function checkRun(
  definition: PipelineDefinition,
  engine: Engine,
  options: Pick<PipelineRunOptions, 'inputs' | 'localFiles'>,
): Promise<{ inputs: Record<string, InputValue>; results: string[] }> {
  const inputs = readInputs(definition, options.inputs);
  const { scope, files } = preflight(definition, engine, inputs, options.localFiles, engine.workspaces.pipelineDir());
  for (const file of files) {
    const readable = await access(path.resolve(file.path), constants.R_OK).then(
      () => true,
      () => false,
    );
    if (!readable)
      throw stepError(file.step, paramError(`Input file not found or not readable: ${file.source}`), file.item);
  }
  return {
    inputs,
    results: definition.results.flatMap((result) => resultNames(result.name, resultValue(result, scope))),
  };
}

/** The names a result is published under: `<name>.<ext>`, or `<name>-<n>.<ext>` for a step with `each`. */
function resultNames(name: string, value: string | string[]): string[] {
  return Array.isArray(value)
    ? value.map((file, index) => `${name}-${index + 1}${path.extname(file)}`)
    : [`${name}${path.extname(value)}`];
}

/**
 * Runs a pipeline: inputs read and every step checked first, then steps run as their inputs
 * become ready (independent ones at once, all through the engine's one queue). A step's output
 * reaches the next step as the local file it is, in a folder of the run's own that is removed at
 * the end; only the named results are published to `options.store`.
 */
export async function runPipeline(
  definition: PipelineDefinition,
  engine: Engine,
  options: PipelineRunOptions,
): Promise<PipelineRun> {
  const started = performance.now();
  const id = randomUUID();
  const workDir = engine.workspaces.pipelineDir(id);
  // Step outputs travel in comma-separated list parameters: a comma in their folder would split them.
  if (workDir.includes(','))
    throw new MediaflowError('MF_ERR_INTERNAL', 'The work folder path must not contain a comma');
  const inputs = checkPipeline(definition, engine, options, workDir);

  const workStore = new LocalOutputStore(workDir);
  const produced = new Set<string>();
  // Steps take user inputs by the caller's policy, and the run's own intermediate files, nothing else.
  const policy: LocalFilePolicy = (source) => (produced.has(source) ? source : options.localFiles?.(source));
  const scope: Scope = { inputs, outputs: new Map(), files: new Map(), skipped: skippedSteps(definition, inputs) };
  const stepMs: Record<string, number> = {};
  const answers: Record<string, StepAnswers | StepAnswers[]> = {};
  const failFast = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, failFast.signal]) : failFast.signal;
  let failure: unknown;

  const runStep = async (step: PipelineStep, after: Array<Promise<void>>): Promise<void> => {
    await Promise.allSettled(after);
    // A failed step (or the caller) has stopped the run: steps not yet started never start. A step whose `when` or
    // `unless` says no does not start either.
    if (signal.aborted || scope.skipped.has(step.name)) return;
    const stepStarted = performance.now();
    const items = itemsOf(step, scope);
    options.onEvent?.({ type: 'start', step: step.name, op: step.op, ...(items ? { items: items.length } : {}) });
    const runOne = async (
      item: string | undefined,
      index: number,
    ): Promise<{
      files: string[];
      named: Record<string, string>;
      several: boolean;
      answers: StepAnswers | undefined;
    }> => {
      try {
        const raw = fieldsOf(step, item === undefined ? scope : { ...scope, item });
        const result = await engine.run(step.op, raw, {
          signal,
          ...(options.owner !== undefined ? { owner: options.owner } : {}),
          localFiles: policy,
          store: workStore,
          // Only with a listener: it makes ffmpeg report its position (`-progress`).
          ...(options.onEvent
            ? {
                onProgress: (progress: JobProgress) =>
                  options.onEvent?.({ type: 'progress', step: step.name, ...(items ? { item: index } : {}), progress }),
              }
            : {}),
        });
        const { output: files, named } = filesOf(result.output, (file) => workStore.locate(file));
        for (const file of outputPaths(result.output)) produced.add(workStore.locate(file));
        return { files, named, several: 'files' in result.output, answers: result.answers };
      } catch (error) {
        throw stepError(step, error, items ? { index, count: items.length } : undefined);
      }
    };
    const ran = await Promise.all((items ?? [undefined]).map((item, index) => runOne(item, index)));
    const files = ran.flatMap((one) => one.files);
    scope.outputs.set(step.name, items || ran[0]!.several ? files : files[0]!);
    scope.files.set(
      step.name,
      namedFiles(
        ran.map((one) => one.named),
        items !== undefined,
      ),
    );
    if (ran.some((one) => one.answers))
      answers[step.name] = items ? ran.map((one) => one.answers ?? {}) : ran[0]!.answers!;
    stepMs[step.name] = Math.round(performance.now() - stepStarted);
    options.onEvent?.({ type: 'done', step: step.name, ms: stepMs[step.name]! });
  };

  try {
    const running = new Map<string, Promise<void>>();
    for (const step of definition.steps) {
      const promise = runStep(
        step,
        step.after.map((dep) => running.get(dep)!),
      ).catch((error: unknown) => {
        if (failure === undefined && !isAbort(error)) {
          failure = error;
          failFast.abort(error);
        }
      });
      running.set(step.name, promise);
    }
    await Promise.all(running.values());
    options.signal?.throwIfAborted();
    if (failure !== undefined) throw failure;
    const outputs = await publishResults(definition, scope, options.store, options.resultDir, workDir);
    return {
      id,
      outputs,
      ...(Object.keys(answers).length > 0 ? { answers } : {}),
      timings: { totalMs: Math.round(performance.now() - started), steps: stepMs },
    };
  } finally {
    await engine.workspaces.remove(workDir);
  }
}

/** Publishes the named results: `<resultDir>/<name>.<ext>`, or `<name>-<n>.<ext>` for a list. */
async function publishResults(
  definition: PipelineDefinition,
  scope: Scope,
  store: OutputStore,
  resultDir: string,
  workDir: string,
): Promise<Record<string, string | string[]>> {
  // A file two results name is copied for all but the last, which takes the file itself.
  const remaining = new Map<string, number>();
  for (const result of definition.results)
    for (const file of [resultValue(result, scope)].flat()) remaining.set(file, (remaining.get(file) ?? 0) + 1);
  const outputs: Record<string, string | string[]> = {};
  const publishing: Array<readonly [string, string]> = [];
  for (const result of definition.results) {
    const value = resultValue(result, scope);
    const names = resultNames(result.name, value);
    const paths: string[] = [];
    for (const [index, file] of [value].flat().entries()) {
      const name = names[index]!;
      const relative = resultDir ? path.posix.join(resultDir, name) : name;
      const left = remaining.get(file)!;
      remaining.set(file, left - 1);
      let source = file;
      if (left > 1) {
        source = path.join(workDir, `copy-${randomUUID()}${path.extname(file)}`);
        await copyFile(file, source);
      }
      publishing.push([source, relative]);
      paths.push(relative);
    }
    outputs[result.name] = Array.isArray(value) ? paths : paths[0]!;
  }
  // All the results or none, as an operation's files: a failed run must not leave some behind.
  await publishAll(store, publishing);
  return outputs;
}

/** One step of a `--dry-run`. */
export interface PlannedStep {
  name: string;
  op: string;
  /** Steps whose outputs it uses. */
  after: string[];
  /** The parameters as written. */
  with: Record<string, string>;
  each?: { over: string; items: number };
  /** Why the step does not run with these inputs (its `when` or `unless`), when it does not. */
  skipped?: string;
  /**
   * For steps that use only pipeline inputs: each run's in-process steps (their labels) and ffmpeg
   * commands (one entry per item), with the inputs fetched and probed.
   */
  runs?: Array<{ item?: number; steps: string[]; commands: string[][]; files: string[] }>;
}

export interface PipelinePlan {
  pipeline: string;
  description: string;
  inputs: Record<string, InputValue>;
  /** Steps in order, grouped by what runs at the same time. */
  stages: PlannedStep[][];
  results: Record<string, string>;
}

/**
 * What `runPipeline` would do, without running ffmpeg: inputs read and steps checked as for a
 * run; for each step that uses only pipeline inputs, its inputs fetched and probed and its argv
 * built. A step that uses another step's output gets its argv only once that output exists.
 */
export async function planPipeline(
  definition: PipelineDefinition,
  engine: Engine,
  options: Pick<PipelineRunOptions, 'inputs' | 'refuseUnknownInputs' | 'localFiles' | 'signal'>,
): Promise<PipelinePlan> {
  const inputs = readInputs(definition, options.inputs, { refuseUnknown: options.refuseUnknownInputs ?? false });
  const workDir = engine.workspaces.pipelineDir();
  const { fields, scope } = preflight(definition, engine, inputs, options.localFiles, workDir);
  const byName = new Map(definition.steps.map((step) => [step.name, step]));
  const stages: PlannedStep[][] = [];
  for (const stage of definition.stages) {
    const planned: PlannedStep[] = [];
    for (const name of stage) {
      const step = byName.get(name)!;
      const stepFields = fields.get(name)!;
      const entry: PlannedStep = {
        name,
        op: step.op,
        after: step.after,
        with: Object.fromEntries(Object.entries(step.with).map(([key, expr]) => [key, showExpr(expr)])),
        ...(step.each ? { each: { over: showExpr(step.each), items: stepFields.length } } : {}),
        ...(scope.skipped.has(name) ? { skipped: scope.skipped.get(name)! } : {}),
      };
      if (step.after.length === 0 && !entry.skipped) {
        entry.runs = [];
        for (const [index, raw] of stepFields.entries()) {
          let plan;
          try {
            plan = await engine.plan(step.op, raw, {
              ...(options.localFiles ? { localFiles: options.localFiles } : {}),
              ...(options.signal ? { signal: options.signal } : {}),
            });
          } catch (error) {
            throw stepError(step, error, step.each ? { index, count: stepFields.length } : undefined);
          }
          entry.runs.push({
            ...(step.each ? { item: index + 1 } : {}),
            steps: plan.steps,
            commands: plan.commands,
            files: plan.files,
          });
        }
      }
      planned.push(entry);
    }
    stages.push(planned);
  }
  return {
    pipeline: definition.name,
    description: definition.description,
    inputs,
    stages,
    results: Object.fromEntries(
      definition.results.map((result) => [result.name, `steps.${result.step}.${result.field ?? 'output'}`]),
    ),
  };
}
