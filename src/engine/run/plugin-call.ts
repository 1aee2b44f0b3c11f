import { isErrorCode, MediaflowError, type Problem } from '../errors.js';
import { outputProblem } from '../plugins/plugin-check.js';
import {
  inputSpecOf,
  type NamedInput,
  type OutputSpec,
  type Plan,
  type PluginDefinition,
  type SpeechInput,
} from '../contract/plugin.js';
import { shortMessage } from '../exec/short-message.js';

/**
 * Calls into a plugin's code (`output`, `checkParams`, `inputs`, `outputSeconds`, `outputSize`, `check`, `build`,
 * `message`) so that whatever it throws fails only the job it runs for, named after the plugin (Rollup-style context:
 * docs/architecture.md, "Code style"): a MediaflowError keeps its status (a `mediaError` stays a 422), anything else
 * becomes a 500 `Plugin '<name>' failed: <short message>` whose cause (with the stack) reaches the log.
 */

/** The hooks the engine calls, and the in-process steps of a plan (`step`). */
export type PluginHook =
  | 'output'
  | 'checkParams'
  | 'inputs'
  | 'outputSeconds'
  | 'outputSize'
  | 'check'
  | 'build'
  | 'next'
  | 'message'
  | 'step';

/** A value thrown by a plugin or returned wrongly: what went wrong, for the 500's cause. */
export class PluginHookError extends Error {
  constructor(
    readonly plugin: string,
    readonly hook: PluginHook,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PluginHookError';
  }
}

/**
 * A MediaflowError made by another copy of mediaflow (a plugin that installed its own) is not an
 * instance of this copy's class: recognise it by its name and code, so its status survives.
 */
function asMediaflowError(error: unknown): MediaflowError | undefined {
  if (error instanceof MediaflowError) return error;
  const candidate = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    retryAfter?: unknown;
    errors?: unknown;
  } | null;
  if (typeof candidate !== 'object' || candidate === null || candidate.name !== 'MediaflowError') return undefined;
  if (!isErrorCode(candidate.code) || typeof candidate.message !== 'string') return undefined;
  return new MediaflowError(candidate.code, candidate.message, {
    cause: error,
    ...(typeof candidate.retryAfter === 'number' ? { retryAfter: candidate.retryAfter } : {}),
    ...(Array.isArray(candidate.errors) ? { errors: candidate.errors as Problem[] } : {}),
  });
}

/** The error a plugin's failure becomes: its own MediaflowError, or a 500 naming the plugin. */
export function pluginFailure(plugin: string, hook: PluginHook, error: unknown): MediaflowError {
  const known = asMediaflowError(error);
  if (known) return known;
  const cause =
    error instanceof PluginHookError
      ? error
      : new PluginHookError(plugin, hook, `${hook}() threw: ${shortMessage(error)}`, { cause: error });
  return new MediaflowError('MF_ERR_INTERNAL', `Plugin '${plugin}' failed: ${shortMessage(error)}`, { cause });
}

/** Runs one hook of a plugin; see the module's comment for what a throw becomes. */
export function callPlugin<T>(plugin: PluginDefinition, hook: PluginHook, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw pluginFailure(plugin.name, hook, error);
  }
}

/**
 * What `build()` (or a plan's `next()`) returned, checked: an argv (string[]) or a plan ({ commands, files?,
 * steps?, expectedSeconds?, answers?, next? }).
 */
export function checkedPlan(
  plugin: PluginDefinition,
  value: unknown,
  hook: 'build' | 'next' = 'build',
): Plan | string[] {
  const isArgv = (v: unknown): v is string[] => Array.isArray(v) && v.every((a) => typeof a === 'string');
  const fail = (what: string): never => {
    throw pluginFailure(plugin.name, hook, new PluginHookError(plugin.name, hook, `${hook}() returned ${what}`));
  };
  if (isArgv(value)) return value;
  if (typeof value !== 'object' || value === null)
    return fail(`${value === null ? 'null' : typeof value}, not an argv (string[]) or a plan ({ commands })`);
  if (typeof (value as { then?: unknown }).then === 'function')
    return fail(`a promise; ${hook}() must return its plan synchronously`);
  const plan = value as Partial<Plan>;
  if (!Array.isArray(plan.commands) || !plan.commands.every(isArgv))
    return fail('a plan whose commands are not lists of strings');
  if (
    plan.files !== undefined &&
    (typeof plan.files !== 'object' ||
      plan.files === null ||
      !Object.values(plan.files).every((c) => typeof c === 'string'))
  ) {
    return fail('a plan whose files are not { name: text }');
  }
  if (
    plan.steps !== undefined &&
    (!Array.isArray(plan.steps) ||
      !plan.steps.every((step) => typeof step?.label === 'string' && typeof step.run === 'function'))
  ) {
    return fail('a plan whose steps are not { label, run }');
  }
  if (
    plan.expectedSeconds !== undefined &&
    (typeof plan.expectedSeconds !== 'number' || !Number.isFinite(plan.expectedSeconds))
  ) {
    return fail('a plan whose expectedSeconds is not a number');
  }
  if (
    plan.frameSize !== undefined &&
    !(
      typeof plan.frameSize === 'object' &&
      plan.frameSize !== null &&
      [plan.frameSize.width, plan.frameSize.height].every((side) => Number.isInteger(side) && side > 0)
    )
  ) {
    return fail('a plan whose frameSize is not { width, height } in whole pixels');
  }
  if (
    plan.parts !== undefined &&
    (!Array.isArray(plan.parts) ||
      plan.parts.length !== plan.commands.length ||
      !plan.parts.every((seconds) => typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0))
  ) {
    return fail('a plan whose parts are not one number of seconds (0 or more) per command');
  }
  if (plan.next !== undefined && typeof plan.next !== 'function') return fail('a plan whose next is not a function');
  if (plan.share !== undefined && !(typeof plan.share === 'number' && plan.share >= 0 && plan.share <= 1))
    return fail('a plan whose share is not a number from 0 to 1');
  if (plan.answers !== undefined) {
    if (typeof plan.answers !== 'object' || plan.answers === null || Array.isArray(plan.answers))
      return fail('a plan whose answers are not { name: value }');
    const declared = Object.keys(plugin.answers?.properties ?? {});
    const undeclared = Object.keys(plan.answers).find((name) => !declared.includes(name));
    if (undeclared !== undefined)
      return fail(`a plan answering '${undeclared}', which the plugin's answers do not declare`);
  }
  return plan as Plan;
}

/** What `output()` returned, checked: a safe path under uploads with the job's `{id}`. */
export function checkedOutput(plugin: PluginDefinition, value: unknown): OutputSpec {
  const problem = outputProblem(value);
  if (problem) throw pluginFailure(plugin.name, 'output', new PluginHookError(plugin.name, 'output', problem));
  return value as OutputSpec;
}

const INPUT_KINDS = ['audio', 'video', 'image', 'subtitle', 'media'];

/**
 * What `inputs()` returned, checked: a list of `{ name, source, kind }` (and `speak` for speech), each name its own and
 * no URL parameter's (the builder finds the inputs by these names).
 */
export function checkedInputs(plugin: PluginDefinition, value: unknown): NamedInput[] {
  const fail = (what: string): never => {
    throw new PluginHookError(plugin.name, 'inputs', `inputs() returned ${what}`);
  };
  if (!Array.isArray(value)) return fail('something other than a list of { name, source, kind }');
  const names = new Set(
    Object.keys(plugin.params.properties).filter((key) => inputSpecOf(plugin.params.properties[key]!)),
  );
  for (const input of value as Array<Partial<NamedInput> | null>) {
    if (
      typeof input?.name !== 'string' ||
      typeof input.source !== 'string' ||
      !INPUT_KINDS.includes(String(input.kind))
    )
      return fail('an input that is not { name, source, kind } (kind: audio, video, image, subtitle or media)');
    const speak = input.speak as Partial<SpeechInput> | null | undefined;
    if (
      speak !== undefined &&
      (typeof speak?.text !== 'string' ||
        typeof speak.at !== 'string' ||
        !['string', 'undefined'].includes(typeof speak.voice) ||
        !['number', 'undefined'].includes(typeof speak.speed) ||
        input.kind !== 'audio')
    )
      return fail(`a speech input '${input.name}' that is not { text, at, voice?, speed? } of kind audio`);
    if (names.has(input.name)) return fail(`the name '${input.name}' twice, or the name of a URL parameter`);
    names.add(input.name);
  }
  return value as NamedInput[];
}

/** What `message()` returned, checked: text. */
export function checkedMessage(plugin: PluginDefinition, value: unknown): string {
  if (typeof value !== 'string') {
    throw pluginFailure(
      plugin.name,
      'message',
      new PluginHookError(plugin.name, 'message', `message() returned ${typeof value}, not a string`),
    );
  }
  return value;
}
