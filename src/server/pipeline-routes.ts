import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import type { PipelineDefinition } from '../pipelines/definition.js';
import { listPipelines, loadPipelineByName } from '../pipelines/loader.js';
import { submitJob, type SubmitContext } from './job-submission.js';

export interface PipelineRouteOptions {
  config: Config;
  registry: Registry;
  /** Runs before a request's body is read (the API key check). */
  onRequest: (request: FastifyRequest) => Promise<void>;
  submit: SubmitContext;
}

/** A pipeline as `GET /pipelines` shows it: what to post, and where. */
function describe(definition: PipelineDefinition) {
  return {
    name: definition.name,
    description: definition.description,
    path: `${SERVER_PATHS.pipelines}/${definition.name}/`,
    inputs: definition.inputs.map((input) => ({
      name: input.name,
      type: input.type,
      required: input.default === undefined,
      ...(input.default !== undefined ? { default: input.default } : {}),
      ...(input.description ? { description: input.description } : {}),
    })),
    steps: definition.steps.map((step) => ({ name: step.name, op: step.op })),
    results: definition.results.map((result) => result.name),
  };
}

/**
 * `GET /pipelines` lists the pipelines of the pipelines folder with their inputs;
 * `POST /pipelines/<name>/` runs one with the request's fields as its inputs and answers
 * `{message, outputs}` with the results' URLs, or runs it as a job like any operation route.
 * Definitions are read at each request, so an edited file takes effect without a restart. Inputs are URLs (or files
 * sent with the request, kept as own outputs): steps accept local files solely when an earlier step of the same run
 * made them.
 */
export async function registerPipelineRoutes(app: FastifyInstance, options: PipelineRouteOptions): Promise<void> {
  const { config, registry } = options;

  app.get(SERVER_PATHS.pipelines, { onRequest: options.onRequest }, async () => {
    const entries = await listPipelines(config.pipelinesDir, registry);
    return {
      pipelines: entries.map((entry) =>
        entry.definition ? describe(entry.definition) : { name: entry.name, error: entry.error },
      ),
    };
  });

  app.get(`${SERVER_PATHS.pipelines}/:name`, { onRequest: options.onRequest }, async (request) => {
    const { name } = request.params as { name: string };
    return describe(await loadPipelineByName(config.pipelinesDir, name, registry));
  });

  app.post(`${SERVER_PATHS.pipelines}/:name`, { onRequest: options.onRequest }, async (request, reply) => {
    const { name } = request.params as { name: string };
    // An unknown or broken pipeline is refused before the body is read.
    const definition = await loadPipelineByName(config.pipelinesDir, name, registry);
    // A file part named after an input of type url or urls is that input.
    const inputFields = definition.inputs
      .filter((input) => input.type === 'url' || input.type === 'urls')
      .map((input) => input.name);
    return submitJob(request, reply, 'pipeline', name, options.submit, inputFields);
  });
}
