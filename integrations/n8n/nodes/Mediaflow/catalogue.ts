/**
 * What the node offers: mediaflow's operations and pipelines with their fields, read from a server's own
 * description of itself (GET /openapi.json, made from the plugin schemas, and GET /pipelines). The generator
 * (scripts/generate-description.ts) writes it to operations.json; the node's properties are made from that
 * file, so a new plugin or pipeline needs a regeneration, not node code.
 */

/** One field of an operation or one input of a pipeline. */
export interface CatalogueField {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  description: string;
  required: boolean;
  default?: string | number | boolean;
  /** The allowed values, for a field with a fixed list. */
  options?: string[];
  minimum?: number;
  maximum?: number;
  /** Set for a media input: a URL (or, in a list, several) or uploaded files. */
  input?: { list: boolean; min?: number };
  /** A JSON document (render's `edit`): an object, sent as its JSON text. */
  document?: true;
  /** Named values (render's `merge`): an object of texts, sent as its JSON text. */
  values?: true;
}

export interface CatalogueEntry {
  kind: 'operation' | 'pipeline';
  /** The operation's or pipeline's name, as the server names it. */
  name: string;
  /** The route that runs it. */
  path: string;
  summary: string;
  description: string;
  fields: CatalogueField[];
  /**
   * Set for an operation that renders a template of the server (render): the field naming the template, and the
   * values field its merge fields go in. The node lists the templates and their merge fields from GET /templates/
   * when it is edited, not from this file: a template added to the server is offered without a regeneration.
   */
  templates?: { field: string; values: string };
}

export interface Catalogue {
  /** The mediaflow version the catalogue was read from. */
  version: string;
  entries: CatalogueEntry[];
}

type Json = Record<string, unknown>;

/** The fields every run takes to be a job: the node sets them itself. */
const JOB_FIELDS = new Set(['webhook_url', 'metadata']);

/** What OpenAPI adds to an operation's description for readers of /docs, not useful in n8n. */
const ALSO_ANSWERED = /\n*Also answered at `[^`]*`:[\s\S]*$/;

function scalar(value: unknown): string | number | boolean | undefined {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** One operation field from its schema in the OpenAPI document (the form body). */
function operationField(name: string, schema: Json, required: boolean): CatalogueField {
  const input = schema['x-mediaflow-input'] as { list: boolean; min?: number } | undefined;
  const type = schema.type;
  const field: CatalogueField = {
    name,
    type: type === 'integer' || type === 'number' || type === 'boolean' ? type : 'string',
    description: String(schema.description ?? ''),
    required,
  };
  const fallback = scalar(schema.default);
  if (fallback !== undefined) field.default = fallback;
  if (Array.isArray(schema.enum)) field.options = schema.enum.map(String);
  if (typeof schema.minimum === 'number') field.minimum = schema.minimum;
  if (typeof schema.maximum === 'number') field.maximum = schema.maximum;
  if (input) field.input = { list: input.list, ...(input.min !== undefined ? { min: input.min } : {}) };
  if (schema['x-mediaflow-document']) field.document = true;
  if (schema['x-mediaflow-values']) field.values = true;
  return field;
}

/** The template and values fields of an operation that takes a template by name, when the server lists templates. */
function templatesOf(fields: CatalogueField[], listed: boolean): CatalogueEntry['templates'] {
  const template = fields.find((field) => field.name === 'template' && field.type === 'string');
  const values = fields.find((field) => field.values);
  return listed && template && values ? { field: template.name, values: values.name } : undefined;
}

/** The operations of an OpenAPI document: every POST path that a plugin answers. */
export function operationsOf(openapi: Json): CatalogueEntry[] {
  const entries: CatalogueEntry[] = [];
  for (const [path, item] of Object.entries((openapi.paths ?? {}) as Record<string, Json>)) {
    const post = item.post as Json | undefined;
    if (!post?.['x-mediaflow-plugin']) continue;
    // The urlencoded form's schema: the multipart one adds file parts to URL fields, which the node offers itself.
    const content = ((post.requestBody as Json).content as Json)['application/x-www-form-urlencoded'] as Json;
    const schema = content.schema as Json;
    const required = new Set((schema.required ?? []) as string[]);
    const fields = Object.entries(schema.properties as Record<string, Json>)
      .filter(([name]) => !JOB_FIELDS.has(name))
      .map(([name, property]) => operationField(name, property, required.has(name)));
    const templates = templatesOf(fields, Boolean((openapi.paths as Json)['/templates/']));
    entries.push({
      kind: 'operation',
      name: String(post.operationId),
      path,
      summary: String(post.summary ?? post.operationId),
      description: String(post.description ?? '').replace(ALSO_ANSWERED, ''),
      fields,
      ...(templates ? { templates } : {}),
    });
  }
  return entries;
}

/** The pipelines as GET /pipelines lists them, with their inputs. */
export function pipelinesOf(list: { pipelines: Json[] }): CatalogueEntry[] {
  return list.pipelines.map((pipeline) => ({
    kind: 'pipeline' as const,
    name: String(pipeline.name),
    path: String(pipeline.path),
    summary: String(pipeline.name),
    description: String(pipeline.description ?? ''),
    fields: ((pipeline.inputs ?? []) as Json[]).map((input) => {
      const type = String(input.type);
      const field: CatalogueField = {
        name: String(input.name),
        type: type === 'integer' || type === 'number' || type === 'boolean' ? type : 'string',
        description: String(input.description ?? ''),
        required: input.required === true,
      };
      const fallback = scalar(input.default);
      if (fallback !== undefined) field.default = fallback;
      if (type === 'url' || type === 'urls') field.input = { list: type === 'urls' };
      return field;
    }),
  }));
}

/**
 * Reads the catalogue from a running server (its API key, if it has one: /pipelines needs it).
 */
export async function readCatalogue(base: string, apiKey?: string): Promise<Catalogue> {
  const headers: Record<string, string> = apiKey ? { 'X-API-Key': apiKey } : {};
  const get = async (path: string): Promise<Json> => {
    const answer = await fetch(`${base.replace(/\/+$/, '')}${path}`, { headers });
    if (!answer.ok) throw new Error(`GET ${path} answered ${answer.status}: ${await answer.text()}`);
    return (await answer.json()) as Json;
  };
  const openapi = await get('/openapi.json');
  const pipelines = (await get('/pipelines')) as { pipelines: Json[] };
  return {
    version: String((openapi.info as Json).version),
    entries: [...operationsOf(openapi), ...pipelinesOf(pipelines)],
  };
}
