import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import type { Registry } from '../engine/plugins/registry.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import type { PipelineDefinition } from '../pipelines/definition.js';
import { listPipelines, loadPipelineByName } from '../pipelines/loader.js';
import { submitJob, type SubmitContext } from './job-submission.js';
import { handlerValidates } from './validation.js';
import { errorRefs, RUN_ERRORS } from './openapi/error-responses.js';
import { JOB_HEADERS, jobFields } from './openapi/job-fields.js';
import {
  anyObject,
  apiKeySecurity,
  DOCUMENTED_WITH_SLASH,
  json,
  REQUEST_DESCRIPTION,
  responseRef,
  schemaRef,
} from './openapi/shared.js';

export interface PipelineRouteOptions {
  config: Config;
  registry: Registry;
  /** Runs before a request's body is read (the API key check). */
  onRequest: (request: FastifyRequest) => Promise<void>;
  submit: SubmitContext;
  /** Whether the server has an API key: the routes' `security`. */
  secured: boolean;
}

/**
 * A pipeline's name in its path. Its pattern is not declared to Fastify: a name of other characters is an unknown
 * pipeline (404), as the loader answers it.
 */
const NAME = Type.Object({
  name: Type.String({ description: 'The pipeline: a file <name>.yaml, .yml or .json in the pipelines folder' }),
});

/** The documentation of the pipeline routes: what each answers, a run's fields. */
function pipelineDocs(secured: boolean) {
  const security = apiKeySecurity(secured);
  const notFound = { description: 'No such pipeline', content: json(schemaRef('Error')) };
  const body = (encoding: 'form' | 'json') => ({ schema: { ...anyObject, properties: jobFields(encoding) } });
  return {
    list: {
      operationId: 'listPipelines',
      summary: 'The pipelines of the pipelines folder, with their inputs',
      tags: ['pipelines'],
      ...security,
      response: {
        200: {
          description: 'The pipelines',
          content: json({ type: 'object', properties: { pipelines: { type: 'array', items: anyObject } } }),
        },
        ...errorRefs(['MF_ERR_AUTH']),
      },
    },
    describe: {
      operationId: 'describePipeline',
      summary: "A pipeline's inputs, steps and results",
      tags: ['pipelines'],
      ...security,
      params: NAME,
      response: {
        200: { description: 'The pipeline', content: json(anyObject) },
        404: notFound,
        ...errorRefs(['MF_ERR_PARAM', 'MF_ERR_AUTH']),
      },
    },
    run: {
      operationId: 'runPipeline',
      summary: 'Run a pipeline with the fields as its inputs',
      tags: ['pipelines'],
      ...security,
      params: NAME,
      headers: JOB_HEADERS,
      [REQUEST_DESCRIPTION]:
        "The pipeline's inputs as fields (see GET /pipelines/{name}/), in any of the three encodings; a " +
        'field that is not one of its inputs (nor `webhook_url` or `metadata`) is a 400. In a multipart body, ' +
        'an input of type url or urls also takes file parts of its name (docs/files.md). With ' +
        '`webhook_url` or `Prefer: respond-async` the pipeline runs as a job (202).',
      body: {
        content: {
          'multipart/form-data': body('form'),
          'application/x-www-form-urlencoded': body('form'),
          'application/json': body('json'),
        },
      },
      response: {
        200: {
          description: "Done (a synchronous request): each result's URL",
          content: json({
            type: 'object',
            required: ['message', 'outputs'],
            properties: {
              message: { type: 'string' },
              outputs: { type: 'object', additionalProperties: true },
              answers: {
                type: 'object',
                additionalProperties: true,
                description:
                  'The answer fields of each step that gave some (a list per item for a step with `each`), ' +
                  'by step name; absent when none did',
              },
            },
          }),
        },
        202: responseRef('Accepted'),
        404: notFound,
        ...errorRefs(RUN_ERRORS),
      },
    },
  };
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
export async function registerPipelineRoutes(fastify: FastifyInstance, options: PipelineRouteOptions): Promise<void> {
  const { config, registry } = options;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const docs = pipelineDocs(options.secured);

  app.get(SERVER_PATHS.pipelines, { onRequest: options.onRequest, schema: docs.list }, async () => {
    const entries = await listPipelines(config.pipelinesDir, registry);
    return {
      pipelines: entries.map((entry) =>
        entry.definition ? describe(entry.definition) : { name: entry.name, error: entry.error },
      ),
    };
  });

  app.get(
    `${SERVER_PATHS.pipelines}/:name`,
    { onRequest: options.onRequest, schema: docs.describe, config: DOCUMENTED_WITH_SLASH },
    async (request) => describe(await loadPipelineByName(config.pipelinesDir, request.params.name, registry)),
  );

  app.post(
    `${SERVER_PATHS.pipelines}/:name`,
    {
      onRequest: options.onRequest,
      schema: docs.run,
      validatorCompiler: handlerValidates,
      config: DOCUMENTED_WITH_SLASH,
    },
    async (request, reply) => {
      const { name } = request.params;
      // An unknown or broken pipeline is refused before the body is read.
      const definition = await loadPipelineByName(config.pipelinesDir, name, registry);
      // A file part named after an input of type url or urls is that input.
      const inputFields = definition.inputs
        .filter((input) => input.type === 'url' || input.type === 'urls')
        .map((input) => input.name);
      return submitJob(request, reply, 'pipeline', name, options.submit, inputFields);
    },
  );
}
