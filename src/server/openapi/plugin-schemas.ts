import { possibleOutputs, sampleParams } from '../../engine/plugins/plugin-check.js';
import {
  answerFiles,
  DOCUMENT_KEYWORD,
  FONT_KEYWORD,
  FORMAT_KEYWORD,
  inputSpecOf,
  outputPaths,
  type OutputSpec,
  type PluginDefinition,
  type TSchema,
  VALUES_KEYWORD,
} from '../../engine/contract/plugin.js';
import { jobFields } from './job-fields.js';
import { SAMPLE_BASE, SAMPLE_ID, type Json } from './shared.js';

/**
 * The schemas of an operation, made from its plugin's parameters (the same ones that validate requests
 * and make CLI flags): its request body in each encoding, with examples, and its success body.
 */

/** Keywords of a parameter schema copied into the document's Schema Objects (TypeBox's symbols and others stay out). */
const SCHEMA_KEYWORDS = [
  'type',
  'description',
  'enum',
  'default',
  'examples',
  'minimum',
  'maximum',
  'maxLength',
  'minLength',
  'pattern',
] as const;

/**
 * The fields of a request that works as it is in /docs' "Try it out" (a URL aside): the required
 * ones and those with a default or examples, with those values (lists as comma text). Optional
 * fields without either are left out rather than shown at some bound (a 8192x8192 frame, say).
 */
export function exampleFields(plugin: PluginDefinition): Json {
  const required = new Set(plugin.params.required ?? []);
  return Object.fromEntries(
    Object.entries(sampleParams(plugin.params))
      .filter(([key]) => {
        const property = plugin.params.properties[key] as Json;
        return required.has(key) || property.default !== undefined || property.examples !== undefined;
      })
      .map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]),
  );
}

/** How a body is encoded: a multipart form (whose URL fields also take file parts), an urlencoded form, JSON. */
export type BodyEncoding = 'multipart' | 'form' | 'json';

/**
 * A URL field of a multipart body: the URL text, or a file part in its place (several for a list,
 * each one file). OpenAPI 3.1 names a file part by its media type (`contentMediaType`), not `format: binary`.
 */
function withFileParts(schema: Json, list: boolean): Json {
  return {
    ...schema,
    description:
      `${String(schema.description ?? '')}; or, in a multipart body, ` +
      (list ? 'file parts of this name, one per file, mixed with URLs in the order sent' : 'a file part of this name'),
    anyOf: [
      list ? { description: 'URLs separated by commas' } : { format: 'uri', description: 'A URL' },
      { contentMediaType: 'application/octet-stream', description: 'A file sent as a part (docs/files.md)' },
    ],
  };
}

/**
 * A document or values parameter (Param.document, Param.values) as a field: its whole schema, which a form sends as
 * JSON text; undefined for any other parameter.
 */
function objectField(source: Json, encoding: BodyEncoding, example: unknown): Json | undefined {
  if (!source[DOCUMENT_KEYWORD] && !source[VALUES_KEYWORD]) return undefined;
  // The schema as JSON: TypeBox's symbols stay out.
  const schema = JSON.parse(JSON.stringify(source)) as Json;
  const form = encoding === 'json' ? '' : '; in this form, its JSON text';
  const files = encoding === 'multipart' ? ', and a file part of such a name is an input whose URL is its value' : '';
  const loose =
    source[VALUES_KEYWORD] && encoding !== 'json'
      ? `; every field of the form that is no other parameter is one more value${files}`
      : '';
  schema.description = `${String(schema.description ?? '')}${form}${loose}`;
  if (schema.examples === undefined && example !== undefined) schema.examples = [example];
  return schema;
}

/**
 * One parameter as a field of a form body or of a JSON body (where a list may also be an array),
 * with its example. A text's length is bounded by the body limit too: its `maxLength` says the
 * smaller of the two, and its description that the limit counts bytes.
 */
function fieldSchema(property: TSchema, encoding: BodyEncoding, example: unknown, bodyLimit: number | undefined): Json {
  const source = property as Json;
  const object = objectField(source, encoding, example);
  if (object) return object;
  const schema: Json = {};
  for (const keyword of SCHEMA_KEYWORDS) if (source[keyword] !== undefined) schema[keyword] = source[keyword];
  if (source[FORMAT_KEYWORD]) schema['x-mediaflow-format'] = true;
  if (source[FONT_KEYWORD]) schema['x-mediaflow-font'] = true;
  if (schema.examples === undefined && example !== undefined) schema.examples = [example];
  if (bodyLimit !== undefined && typeof schema.maxLength === 'number') {
    schema.maxLength = Math.min(schema.maxLength, bodyLimit);
    schema.description =
      `${String(schema.description ?? '')} (at most ${schema.maxLength} characters; the whole request body is ` +
      `at most ${bodyLimit} bytes, MEDIAFLOW_BODY_LIMIT, and a character may take up to 4 bytes of UTF-8)`;
  }
  const spec = inputSpecOf(property);
  if (!spec) return schema;
  schema['x-mediaflow-input'] = {
    kind: spec.kind,
    list: spec.list,
    ...(spec.min !== undefined ? { min: spec.min } : {}),
  };
  if (!spec.list) return encoding === 'multipart' ? withFileParts(schema, false) : { ...schema, format: 'uri' };
  schema.description =
    `${String(source.description ?? '')} (URLs separated by ` +
    `commas${spec.min && spec.min > 1 ? `, at least ${spec.min}` : ''})`;
  if (encoding === 'multipart') return withFileParts(schema, true);
  if (encoding === 'form') return schema;
  const { type: _type, ...rest } = schema;
  return {
    ...rest,
    oneOf: [
      { type: 'string', description: 'URLs separated by commas' },
      { type: 'array', items: { type: 'string', format: 'uri' }, minItems: spec.min ?? 1 },
    ],
  };
}

/**
 * An operation's own fields, required when they have no default: the body schema without the job's
 * fields, and the input schema of the operation's MCP tool (src/mcp/tools.ts).
 */
export function paramsSchema(plugin: PluginDefinition, encoding: BodyEncoding, bodyLimit: number | undefined): Json {
  const examples = exampleFields(plugin);
  const properties = Object.fromEntries(
    Object.entries(plugin.params.properties).map(([key, property]) => [
      key,
      fieldSchema(property, encoding, examples[key], bodyLimit),
    ]),
  );
  const required = (plugin.params.required ?? []).filter(
    (key) => (plugin.params.properties[key] as Json | undefined)?.default === undefined,
  );
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/** The body schema of an operation: its fields and the job's (`webhook_url`, `metadata`); unknown ones are ignored. */
export function bodySchema(plugin: PluginDefinition, encoding: BodyEncoding, bodyLimit: number | undefined): Json {
  const params = paramsSchema(plugin, encoding, bodyLimit);
  return {
    ...params,
    properties: { ...(params.properties as Json), ...jobFields(encoding === 'json' ? 'json' : 'form') },
    additionalProperties: true,
  };
}

/**
 * What went wrong without failing the job (engine.ts' JobResult), in a success body: absent when
 * nothing did. The job result shows it too, being that same body.
 */
export const WARNINGS_SCHEMA: Json = {
  type: 'array',
  items: { type: 'string' },
  description:
    'Present only when something went wrong that did not fail the job, such as burned-in characters no ' +
    'installed font has (they render as empty boxes)',
  examples: [['No font has glyphs for U+65E5, U+672C: they render as empty boxes; install fonts-noto-cjk']],
};

/**
 * The JSON body an operation answers with: `message`, its output field (or `output_file` and
 * `output_files` for several files, neither for none), its answer fields, and `warnings` when there
 * are some.
 */
export function successSchema(plugin: PluginDefinition): { schema: Json; example: Json } {
  const sample = sampleParams(plugin.params);
  let output: OutputSpec = { field: 'output_file', path: '{id}' };
  let message = '';
  try {
    output = plugin.output(sample as never);
    message = plugin.message(sample as never);
  } catch {
    // The registry asked output() already; a message() that needs real params just gets no example.
  }
  const urlOf = (file: string) => `${SAMPLE_BASE}/uploads/${file.replaceAll('{id}', SAMPLE_ID)}`;
  const where = outputPaths(output).join(', ');
  const urlSchema = (description: string, example: string): Json => ({
    type: 'string',
    format: 'uri',
    description: `${description}: {base_url}/uploads/${where} ({id} is a random UUID v4)`,
    examples: [example],
  });
  const files: Record<string, Json> =
    'field' in output
      ? { [output.field]: urlSchema('URL of the output', urlOf(output.path)) }
      : output.files.length > 0
        ? {
            output_file: urlSchema('URL of the first output file', urlOf(output.files[0]!)),
            output_files: {
              type: 'array',
              items: { type: 'string', format: 'uri' },
              description: `URLs of every output file, in order: {base_url}/uploads/${where}, ...`,
              examples: [output.files.map(urlOf)],
            },
          }
        : {};
  const required = Object.keys(files);
  // Files a choice adds beside the output (speak's captions): answered only when the parameters ask for them.
  for (const possible of possibleOutputs(plugin))
    for (const file of 'field' in possible ? (possible.alongside ?? []) : [])
      files[file.field] ??= {
        type: 'string',
        format: 'uri',
        description:
          `URL of a file written beside the output when the parameters ask for it: ` +
          `{base_url}/uploads/${file.path}`,
        examples: [urlOf(file.path)],
      };
  const answers = (plugin.answers?.properties ?? {}) as Record<string, Json>;
  return {
    schema: {
      type: 'object',
      required: ['message', ...required, ...(plugin.answers?.required ?? [])],
      properties: {
        message: { type: 'string', description: 'What was done', ...(message ? { examples: [message] } : {}) },
        ...files,
        ...answers,
        warnings: WARNINGS_SCHEMA,
      },
    },
    example: {
      ...(message ? { message } : {}),
      ...answerFiles(output, urlOf),
      ...Object.fromEntries(
        Object.entries(answers).flatMap(([name, schema]) =>
          Array.isArray(schema.examples) ? [[name, schema.examples[0]]] : [],
        ),
      ),
    },
  };
}
