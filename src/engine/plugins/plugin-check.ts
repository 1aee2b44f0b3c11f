import { closest } from '../edit-distance.js';
import {
  CONTRACT_VERSION,
  DOCUMENT_KEYWORD,
  FONT_KEYWORD,
  FORMAT_KEYWORD,
  INPUT_KEYWORD,
  inputSpecOf,
  TIME_KEYWORD,
  VALUES_KEYWORD,
  VOICE_KEYWORD,
  type AlongsideOutput,
  type OutputSpec,
  type PluginDefinition,
  type SingleOutput,
  type TObject,
} from '../contract/plugin.js';

/**
 * The checks a plugin passes when it is registered, beyond its shape: the contract it targets, a
 * parameter schema every front end can read (HTTP, CLI, pipelines, OpenAPI), and an output spec
 * that stays inside the output store. Each returns the first problem as a phrase, or undefined.
 */

/** Parameter types the front ends know how to read from a form field, a flag or a pipeline value. */
const PARAM_TYPES = ['string', 'integer', 'number', 'boolean'];
const INPUT_KINDS = ['audio', 'video', 'image', 'subtitle', 'media'];
const TIME_KINDS = ['time', 'times', 'ranges'];
/** Sample values of time parameters by kind, as a form would send them. */
const SAMPLE_TIMES: Record<string, string> = { time: '10', times: '10,20', ranges: '10-20.5' };

/**
 * The schema keywords mediaflow reads in a parameter. Any other is refused: a misspelt `defualt`
 * would otherwise be dropped in silence (the field turning required), and a keyword no front end
 * enforces (`format`, `multipleOf`) would promise a check that never happens.
 */
const KNOWN_KEYWORDS = [
  'type',
  'description',
  'enum',
  'default',
  'examples',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  INPUT_KEYWORD,
  FORMAT_KEYWORD,
  FONT_KEYWORD,
  TIME_KEYWORD,
  VOICE_KEYWORD,
];

const show = (value: unknown) => (typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value)));

/** Whether the contract a plugin targets is the one this mediaflow implements, and if not, what to do. */
export function contractProblem(contract: unknown): string | undefined {
  if (contract === CONTRACT_VERSION) return undefined;
  if (contract === undefined) {
    return (
      `it does not state the plugin contract it targets: add \`contract: CONTRACT_VERSION\` (imported from ` +
      `'mediaflow'), which is ${CONTRACT_VERSION} here`
    );
  }
  if (typeof contract !== 'number' || !Number.isInteger(contract) || contract < 1) {
    return `contract must be the whole number of the plugin contract it targets, got ${show(contract)}`;
  }
  const advice =
    contract > CONTRACT_VERSION
      ? 'upgrade mediaflow, or use a release of the plugin made for contract '
      : 'use a release of the plugin made for contract ';
  return (
    `it targets plugin contract ${contract}, but this mediaflow implements contract ${CONTRACT_VERSION} ` +
    `(incompatible): ${advice}${CONTRACT_VERSION}`
  );
}

interface PropertyFields {
  type?: unknown;
  description?: unknown;
  enum?: unknown;
  default?: unknown;
  examples?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  pattern?: unknown;
}

/** The first keyword of a parameter's schema that mediaflow does not read, as a phrase. */
function keywordProblem(key: string, property: object): string | undefined {
  const unknown = Object.keys(property).find((keyword) => !KNOWN_KEYWORDS.includes(keyword));
  if (unknown === undefined) return undefined;
  const near = closest(unknown, KNOWN_KEYWORDS);
  const hint = near ? `did you mean '${near}'?` : `mediaflow reads ${KNOWN_KEYWORDS.join(', ')}`;
  return `parameter '${key}' has unknown schema keyword '${unknown}' (${hint})`;
}

/** Whether a value (a default, or one of the examples) fits its own parameter: type, enum, range and length. */
function valueProblem(key: string, p: PropertyFields, value: unknown, role: 'default' | 'example'): string | undefined {
  const wrong = (what: string) => `parameter '${key}' has ${role} ${show(value)}, which is ${what}`;
  if (p.type === 'string' && typeof value !== 'string') return wrong('not a string');
  if ((p.type === 'integer' || p.type === 'number') && (typeof value !== 'number' || !Number.isFinite(value)))
    return wrong('not a number');
  if (p.type === 'integer' && !Number.isInteger(value)) return wrong('not an integer');
  if (p.type === 'boolean' && typeof value !== 'boolean') return wrong('not true or false');
  if (Array.isArray(p.enum) && !p.enum.includes(value)) return wrong(`not one of ${p.enum.join(', ')}`);
  if (typeof value === 'number' && typeof p.minimum === 'number' && value < p.minimum)
    return wrong(`below its minimum ${p.minimum}`);
  if (typeof value === 'number' && typeof p.maximum === 'number' && value > p.maximum)
    return wrong(`above its maximum ${p.maximum}`);
  if (typeof value === 'string' && typeof p.minLength === 'number' && value.length < p.minLength)
    return wrong(`shorter than its minLength ${p.minLength}`);
  if (typeof value === 'string' && typeof p.maxLength === 'number' && value.length > p.maxLength)
    return wrong(`longer than its maxLength ${p.maxLength}`);
  if (typeof value === 'string' && typeof p.pattern === 'string' && !new RegExp(p.pattern, 'u').test(value))
    return wrong(`not matched by its pattern ${p.pattern}`);
  return undefined;
}

/**
 * The first problem of an object parameter (Param.document, Param.values): its schema is the plugin's own to check
 * (JSON Schema, in full), so only its description and examples are mediaflow's business.
 */
function objectProblem(key: string, p: PropertyFields): string | undefined {
  if (typeof p.description !== 'string' || p.description.trim() === '')
    return `parameter '${key}' has no description (--help and the API docs show it)`;
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (p.default !== undefined) return `parameter '${key}' has a default; an object parameter has none`;
  if (p.examples !== undefined && (!Array.isArray(p.examples) || !p.examples.every(isObject)))
    return `parameter '${key}' has examples that are not a list of objects`;
  return undefined;
}

/** The first problem of one parameter's schema. */
function propertyProblem(key: string, property: unknown): string | undefined {
  if (!/^[a-z][a-z0-9_]*$/.test(key)) return `parameter '${key}' must be snake_case`;
  if (typeof property !== 'object' || property === null) return `parameter '${key}' is not a schema`;
  const p = property as PropertyFields;
  const marked = property as Record<string, unknown>;
  if (marked[DOCUMENT_KEYWORD] || marked[VALUES_KEYWORD]) {
    if (p.type !== 'object') return `parameter '${key}' is a document or values parameter but not of type object`;
    return objectProblem(key, p);
  }
  if (!PARAM_TYPES.includes(String(p.type)))
    return `parameter '${key}' has unsupported type ${show(p.type)} (use string, integer, number or boolean)`;
  const keyword = keywordProblem(key, property);
  if (keyword) return keyword;
  if (typeof p.description !== 'string' || p.description.trim() === '')
    return `parameter '${key}' has no description (--help and the API docs show it)`;
  if (p.enum !== undefined) {
    if (!Array.isArray(p.enum) || p.enum.length === 0 || !p.enum.every((v) => typeof v === 'string'))
      return `parameter '${key}' has an enum that is not a list of strings`;
    if (p.type !== 'string') return `parameter '${key}' has an enum but type ${show(p.type)}; an enum is of strings`;
    // Values are matched lower-cased (`PNG` and `.png` mean `png`), so an upper-case choice could never match.
    const unreachable = p.enum.find((v: string) => v !== v.toLowerCase() || v.trim() === '');
    if (unreachable !== undefined)
      return `parameter '${key}' has enum value ${show(unreachable)}; choices must be lower-case and not empty`;
  }
  for (const bound of ['minimum', 'maximum'] as const) {
    if (p[bound] !== undefined && (typeof p[bound] !== 'number' || !Number.isFinite(p[bound])))
      return `parameter '${key}' has a ${bound} that is not a number`;
  }
  if (typeof p.minimum === 'number' && typeof p.maximum === 'number' && p.minimum > p.maximum) {
    return `parameter '${key}' has minimum ${p.minimum} above its maximum ${p.maximum}`;
  }
  for (const bound of ['minLength', 'maxLength'] as const) {
    if (p[bound] !== undefined && (typeof p[bound] !== 'number' || !Number.isInteger(p[bound]) || p[bound] < 0))
      return `parameter '${key}' has a ${bound} that is not a whole number`;
  }
  if (p.pattern !== undefined) {
    if (p.type !== 'string' || typeof p.pattern !== 'string')
      return `parameter '${key}' has a pattern, which only a string parameter may have`;
    try {
      new RegExp(p.pattern, 'u');
    } catch (error) {
      return `parameter '${key}' has a pattern that is not a regular expression: ${(error as Error).message}`;
    }
  }
  if (p.default !== undefined) {
    const problem = valueProblem(key, p, p.default, 'default');
    if (problem) return problem;
  }
  if (p.examples !== undefined) {
    if (!Array.isArray(p.examples) || p.examples.length === 0)
      return `parameter '${key}' has examples that are not a list of values`;
    for (const example of p.examples) {
      const problem = valueProblem(key, p, example, 'example');
      if (problem) return problem;
    }
  }
  const time = (property as Record<string, unknown>)[TIME_KEYWORD];
  if (time !== undefined && (p.type !== 'string' || !TIME_KINDS.includes(time as string)))
    return `parameter '${key}' has ${TIME_KEYWORD} ${show(time)}; use Param.time, Param.times or Param.ranges`;
  const spec = inputSpecOf(property as never);
  if (spec !== undefined) {
    if (p.type !== 'string') return `input parameter '${key}' must be a string`;
    if (typeof spec !== 'object' || spec === null || !INPUT_KINDS.includes(spec.kind))
      return `input parameter '${key}' has kind ${show(spec?.kind)} (use ${INPUT_KINDS.join(', ')})`;
    if (typeof spec.list !== 'boolean') return `input parameter '${key}' must say whether it is a list`;
    if (spec.min !== undefined && (!Number.isInteger(spec.min) || spec.min < 1))
      return `input parameter '${key}' has min ${show(spec.min)}; it must be a whole number from 1`;
  }
  return undefined;
}

/** The first problem of a plugin's parameter schema, which must be a flat TypeBox object of scalars. */
export function schemaProblem(params: unknown): string | undefined {
  const schema = params as Partial<TObject> | undefined;
  if (
    typeof schema !== 'object' ||
    schema === null ||
    schema.type !== 'object' ||
    typeof schema.properties !== 'object' ||
    schema.properties === null
  ) {
    return 'params must be a TypeBox object schema (Type.Object({...}))';
  }
  for (const [key, property] of Object.entries(schema.properties)) {
    const problem = propertyProblem(key, property);
    if (problem) return problem;
  }
  for (const keyword of [DOCUMENT_KEYWORD, VALUES_KEYWORD]) {
    const marked = Object.keys(schema.properties).filter(
      (key) => (schema.properties![key] as Record<string, unknown>)[keyword],
    );
    if (marked.length > 1)
      return (
        `parameters ${marked.map((key) => `'${key}'`).join(' and ')} are both ` + `${keyword}: a plugin has one at most`
      );
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required)) return 'params.required must be a list of parameter names';
    const missing = schema.required.find((key) => !(key in schema.properties!));
    if (missing !== undefined) return `params.required names '${missing}', which is not a parameter`;
  }
  return undefined;
}

/** File names that say what an input of each kind is, for sample URLs. */
const SAMPLE_FILES: Record<string, [string, string]> = {
  audio: ['voice', 'mp3'],
  video: ['clip', 'mp4'],
  image: ['photo', 'jpg'],
  subtitle: ['subtitles', 'srt'],
  media: ['media', 'mp4'],
};

/** A sample URL of an input of `kind` (the `n`th of a list). */
function sampleUrl(kind: string, n?: number): string {
  const [name, extension] = SAMPLE_FILES[kind] ?? ['input', 'bin'];
  return `https://example.com/${name}${n === undefined ? '' : `-${n}`}.${extension}`;
}

/**
 * Plausible params for a schema: each default, else its first example, the first choice, the
 * minimum, or a sample URL. Used to ask a plugin for its output spec before any request (registration, API docs).
 */
export function sampleParams(schema: TObject): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties) as Array<[string, PropertyFields]>) {
    const spec = inputSpecOf(property as never);
    if (property.default !== undefined) params[key] = property.default;
    else if (Array.isArray(property.examples)) params[key] = property.examples[0];
    else if (property.type === 'object') params[key] = {};
    else if (Array.isArray(property.enum)) params[key] = property.enum[0];
    else if (typeof (property as Record<string, unknown>)[TIME_KEYWORD] === 'string')
      params[key] = SAMPLE_TIMES[(property as Record<string, unknown>)[TIME_KEYWORD] as string];
    else if (spec)
      params[key] = spec.list
        ? Array.from({ length: spec.min ?? 1 }, (_, i) => sampleUrl(spec.kind, i + 1))
        : sampleUrl(spec.kind);
    else if (property.type === 'integer' || property.type === 'number')
      params[key] =
        typeof property.minimum === 'number'
          ? Math.max(property.minimum, Math.min(1, Number(property.maximum ?? 1)))
          : 1;
    else if (property.type === 'boolean') params[key] = false;
    else params[key] = 'text';
  }
  return params;
}

/**
 * Answer fields mediaflow writes itself: an output's field or an answer of a plugin's own under one of
 * these names would overwrite them.
 */
export const RESERVED_ANSWERS: readonly string[] = ['message', 'error', 'warnings', 'output_file', 'output_files'];

/** Whether a name is a snake_case response field (`output_file`, `loudness`). */
const isFieldName = (name: unknown): name is string => typeof name === 'string' && /^[a-z][a-z0-9_]*$/.test(name);

/**
 * The first problem of an output spec: a response field name (one file), and paths under uploads
 * that hold the job's `{id}` (so nobody can guess them, docs/architecture.md) and cannot leave the store.
 */
export function outputProblem(spec: unknown): string | undefined {
  const output = spec as Partial<{ field: unknown; path: unknown; files: unknown }> | undefined;
  if (typeof output !== 'object' || output === null)
    return `output() returned ${show(output)}, not { field, path } or { files }`;
  if ('files' in output) {
    if (!Array.isArray(output.files)) return `output() returned files ${show(output.files)}, not a list of paths`;
    const paths = output.files as unknown[];
    if (new Set(paths).size !== paths.length) return 'output() returned the same path twice in files';
    for (const file of paths) {
      const problem = pathProblem(file);
      if (problem) return problem;
    }
    return undefined;
  }
  if (!isFieldName(output.field) || ['message', 'error', 'warnings', 'output_files'].includes(output.field)) {
    return (
      `output() returned field ${show(output.field)}; it must be a snake_case response field other than message, ` +
      `error, warnings and output_files`
    );
  }
  const also = (output as { alsoAs?: unknown }).alsoAs;
  if (
    also !== undefined &&
    (!Array.isArray(also) ||
      !also.every((name) => isFieldName(name) && name !== output.field && !RESERVED_ANSWERS.includes(name)))
  ) {
    return `output() returned alsoAs ${show(also)}; it must list snake_case response fields other than its field`;
  }
  return pathProblem(output.path) ?? alongsideProblem(output as SingleOutput);
}

/** The problem of the files alongside a single output: each a field of its own and a path of the job's. */
function alongsideProblem(output: SingleOutput): string | undefined {
  const alongside = output.alongside as unknown;
  if (alongside === undefined) return undefined;
  if (!Array.isArray(alongside)) return `output() returned alongside ${show(alongside)}, not a list of { field, path }`;
  const taken = new Set([output.field, ...(output.alsoAs ?? []), ...RESERVED_ANSWERS]);
  const paths = new Set([output.path]);
  for (const file of alongside as Array<Partial<AlongsideOutput> | null>) {
    if (!isFieldName(file?.field) || taken.has(file.field))
      return (
        `output() returned an alongside field ${show(file?.field)}; each must be a snake_case response field of its ` +
        "own (not the output's, message, error, warnings, output_file or output_files)"
      );
    if (paths.has(file.path as string)) return `output() returned the path ${show(file.path)} twice`;
    taken.add(file.field);
    paths.add(file.path as string);
    const problem = pathProblem(file.path);
    if (problem) return problem;
  }
  return undefined;
}

/** The problem of one output path, if any. */
function pathProblem(file: unknown): string | undefined {
  if (typeof file !== 'string' || !file.includes('{id}'))
    return `output() returned path ${show(file)}; it must contain {id}, the job's random id`;
  const segments = file.split('/');
  if (
    !/^[A-Za-z0-9{}._/-]+$/.test(file) ||
    file.startsWith('/') ||
    segments.some((s) => s === '' || s === '.' || s === '..' || s.startsWith('.'))
  ) {
    return (
      `output() returned path ${show(file)}; it must be a relative path of letters, digits, {id}, ., _, - and / ` +
      `that stays under uploads/`
    );
  }
  return undefined;
}

/** The first problem of a plugin's `answers` schema: an object schema of snake_case fields mediaflow does not write. */
export function answersProblem(answers: unknown): string | undefined {
  if (answers === undefined) return undefined;
  const properties = (answers as { properties?: unknown } | null)?.properties;
  if (typeof answers !== 'object' || answers === null || typeof properties !== 'object' || properties === null)
    return 'answers must be an object schema (Type.Object)';
  for (const name of Object.keys(properties)) {
    if (!isFieldName(name)) return `answers names '${name}', which is not a snake_case response field`;
    if (RESERVED_ANSWERS.includes(name)) return `answers names '${name}', which mediaflow answers itself`;
  }
  return undefined;
}

/**
 * The files an operation writes, as its output spec asked with sample params gives them: a list for
 * `{ files }` (empty for an operation that only answers, as media-metadata), undefined for one file.
 * The form of an output is the same for every parameter (docs/plugins.md), so pipelines know before a
 * run whether a step's output is one file, a list, or nothing another step could name.
 */
export function sampleFiles(plugin: PluginDefinition): string[] | undefined {
  try {
    const spec = plugin.output(sampleParams(plugin.params) as never);
    return 'files' in spec ? spec.files : undefined;
  } catch {
    // Registration asked output() already: a plugin that throws here wants params the sample lacks.
    return undefined;
  }
}

/**
 * Whether a plugin's output spec, asked with sample params, is sound (`output()` may throw for a
 * plugin that is broken).
 */
export function sampleOutputProblem(plugin: PluginDefinition): string | undefined {
  let spec: unknown;
  try {
    spec = plugin.output(sampleParams(plugin.params) as never);
  } catch (error) {
    return `output() threw with sample params: ${(error as Error)?.message ?? String(error)}`;
  }
  return outputProblem(spec);
}

/**
 * The output specs a plugin may answer with: its sample params', and each choice's of each enum parameter (a format,
 * captions or none).
 */
export function possibleOutputs(plugin: PluginDefinition): OutputSpec[] {
  const sample = sampleParams(plugin.params);
  const variants: Array<Record<string, unknown>> = [sample];
  for (const [key, property] of Object.entries(plugin.params.properties)) {
    const choices = (property as { enum?: unknown }).enum;
    if (Array.isArray(choices)) for (const value of choices) variants.push({ ...sample, [key]: value });
  }
  return variants.flatMap((params) => {
    try {
      return [plugin.output(params as never)];
    } catch {
      // A plugin whose output() wants other params: its sample output (checked at registration) is enough.
      return [];
    }
  });
}

/**
 * The response fields an operation may answer a file under, over every output it may write (see possibleOutputs):
 * its output's field and other names, and the fields of files alongside it. A pipeline names a file by one of them.
 */
export function fileFieldsOf(plugin: PluginDefinition): Set<string> {
  return new Set(
    possibleOutputs(plugin).flatMap((spec) =>
      'files' in spec ? [] : [spec.field, ...(spec.alsoAs ?? []), ...(spec.alongside ?? []).map((file) => file.field)],
    ),
  );
}
