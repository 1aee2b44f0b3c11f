import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import type { JobKind } from '../jobs/job.js';
import type { PipelineDefinition } from '../pipelines/definition.js';
import type { InputType } from '../pipelines/definition/types.js';
import { listPipelines } from '../pipelines/loader.js';
import { paramsSchema } from '../server/openapi/plugin-schemas.js';
import type { Json } from '../server/openapi/shared.js';

/**
 * The MCP tools: one per registered operation and one per loadable pipeline, made from the registry and
 * the pipelines folder each time they are asked for, so a plugin or a pipeline added later is a tool
 * without code here. An operation's input schema is its JSON body's schema in the OpenAPI document
 * (without the job's own fields, `webhook_url` and `metadata`, which an MCP client has no use for).
 */
export interface Tool {
  name: string;
  description: string;
  inputSchema: Json;
  /** What the tool runs: an operation or a pipeline, by its registered or file name. */
  kind: JobKind;
  target: string;
}

/** A pipeline input's schema in a JSON body: a list of URLs may be comma-separated text or an array. */
const INPUT_SCHEMAS: Record<InputType, Json> = {
  string: { type: 'string' },
  integer: { type: 'integer' },
  number: { type: 'number' },
  url: { type: 'string', format: 'uri' },
  urls: {
    oneOf: [
      { type: 'string', description: 'URLs separated by commas' },
      { type: 'array', items: { type: 'string', format: 'uri' }, minItems: 1 },
    ],
  },
};

/** A pipeline's inputs as a JSON Schema: required when they have no default. */
export function pipelineSchema(definition: PipelineDefinition): Json {
  const properties = Object.fromEntries(
    definition.inputs.map((input) => [
      input.name,
      {
        ...INPUT_SCHEMAS[input.type],
        ...(input.description ? { description: input.description } : {}),
        ...(input.default !== undefined ? { default: input.default } : {}),
      },
    ]),
  );
  const required = definition.inputs.filter((input) => input.default === undefined).map((input) => input.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/** Every tool, operations first. A pipeline named like an operation is `pipeline-<name>`; a broken one is left out. */
export async function listTools(registry: Registry, config: Config): Promise<Tool[]> {
  const operations: Tool[] = registry.list().map((plugin) => ({
    name: plugin.name,
    description: plugin.description ? `${plugin.summary}\n\n${plugin.description}` : plugin.summary,
    inputSchema: paramsSchema(plugin, 'json', config.bodyLimit),
    kind: 'operation',
    target: plugin.name,
  }));
  const taken = new Set(operations.map((tool) => tool.name));
  const pipelines = (await listPipelines(config.pipelinesDir, registry)).flatMap(({ name, definition }) =>
    definition
      ? [
          {
            name: taken.has(name) ? `pipeline-${name}` : name,
            description: `Pipeline: ${definition.description || name} (steps: ${definition.steps
              .map((step) => step.op)
              .join(', ')})`,
            inputSchema: pipelineSchema(definition),
            kind: 'pipeline' as const,
            target: name,
          },
        ]
      : [],
  );
  return [...operations, ...pipelines];
}
