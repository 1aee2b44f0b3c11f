import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import type { Engine } from '../engine/engine.js';
import type { PipelineDefinition } from '../pipelines/definition.js';
import { listPipelines, loadPipelineByName } from '../pipelines/loader.js';
import { runPipeline } from '../pipelines/runner.js';
import { readFields } from './body.js';
import { untilDisconnect } from './disconnect.js';

export interface PipelineRouteOptions {
  engine: Engine;
  config: Config;
  /** Runs before a request's body is read (the API key check). */
  onRequest: (request: FastifyRequest) => Promise<void>;
  /** `{base_url}` of a request. */
  baseUrl: (request: FastifyRequest) => string;
}

/** A pipeline as `GET /pipelines` shows it: what to post, and where. */
function describe(definition: PipelineDefinition) {
  return {
    name: definition.name,
    description: definition.description,
    path: `/pipelines/${definition.name}/`,
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
 * `{message, outputs}` with the results' URLs. Definitions are read at each request, so an edited
 * file takes effect without a restart. Inputs are URLs only: steps accept local files solely
 * when an earlier step of the same run made them.
 */
export async function registerPipelineRoutes(app: FastifyInstance, options: PipelineRouteOptions): Promise<void> {
  const { engine, config } = options;
  const registry = engine.deps.registry;
  const store = engine.deps.store;

  app.get('/pipelines', { onRequest: options.onRequest }, async () => {
    const entries = await listPipelines(config.pipelinesDir, registry);
    return {
      pipelines: entries.map((entry) => (entry.definition ? describe(entry.definition) : { name: entry.name, error: entry.error })),
    };
  });

  app.get('/pipelines/:name', { onRequest: options.onRequest }, async (request) => {
    const { name } = request.params as { name: string };
    return describe(await loadPipelineByName(config.pipelinesDir, name, registry));
  });

  app.post('/pipelines/:name', { onRequest: options.onRequest }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const definition = await loadPipelineByName(config.pipelinesDir, name, registry);
    const fields = await readFields(request);
    // A client that hangs up stops the run: waiting steps leave the queue, running ffmpeg is stopped.
    const runId = crypto.randomUUID();
    const run = await untilDisconnect(reply, (signal) => runPipeline(definition, engine, { inputs: fields, store, resultDir: runId, signal }));
    request.log.info({ pipeline: definition.name, run: runId, timings: run.timings }, 'pipeline finished');
    const base = `${options.baseUrl(request)}/uploads/`;
    const outputs = Object.fromEntries(
      Object.entries(run.outputs).map(([result, value]) => [result, Array.isArray(value) ? value.map((v) => `${base}${v}`) : `${base}${value}`]),
    );
    return { message: `Pipeline ${definition.name} completed successfully`, outputs };
  });
}
