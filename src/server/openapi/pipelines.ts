import { errorRefs, RUN_ERRORS } from './error-responses.js';
import { JOB_PARAMETERS, jobFields } from './job-fields.js';
import { anyObject, apiKeySecurity, json, type Json } from './shared.js';

/** The routes of pipelines: list them, describe one, run one. */
export function pipelineRoutes(secured: boolean): Json {
  const security = apiKeySecurity(secured);
  const nameParameter = {
    name: 'name',
    in: 'path',
    required: true,
    description: 'The pipeline: a file <name>.yaml, .yml or .json in the pipelines folder',
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' },
  };
  return {
    '/pipelines': {
      get: {
        operationId: 'listPipelines',
        summary: 'The pipelines of the pipelines folder, with their inputs',
        tags: ['pipelines'],
        ...security,
        responses: {
          '200': {
            description: 'The pipelines',
            content: json({ type: 'object', properties: { pipelines: { type: 'array', items: anyObject } } }),
          },
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
    },
    '/pipelines/{name}/': {
      get: {
        operationId: 'describePipeline',
        summary: "A pipeline's inputs, steps and results",
        tags: ['pipelines'],
        ...security,
        parameters: [nameParameter],
        responses: {
          '200': { description: 'The pipeline', content: json(anyObject) },
          '404': { description: 'No such pipeline', content: json({ $ref: '#/components/schemas/Error' }) },
          ...errorRefs(['MF_ERR_PARAM', 'MF_ERR_AUTH']),
        },
      },
      post: {
        operationId: 'runPipeline',
        summary: 'Run a pipeline with the fields as its inputs',
        tags: ['pipelines'],
        ...security,
        parameters: [nameParameter, ...JOB_PARAMETERS],
        requestBody: {
          required: true,
          description:
            "The pipeline's inputs as fields (see GET /pipelines/{name}/), in any of the three encodings; a " +
            'field that is not one of its inputs (nor `webhook_url` or `metadata`) is a 400. In a multipart body, ' +
            'an input of type url or urls also takes file parts of its name (docs/files.md). With ' +
            '`webhook_url` or `Prefer: respond-async` the pipeline runs as a job (202).',
          content: {
            'multipart/form-data': { schema: { ...anyObject, properties: jobFields('form') } },
            'application/x-www-form-urlencoded': { schema: { ...anyObject, properties: jobFields('form') } },
            'application/json': { schema: { ...anyObject, properties: jobFields('json') } },
          },
        },
        responses: {
          '200': {
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
          '202': { $ref: '#/components/responses/Accepted' },
          '404': { description: 'No such pipeline', content: json({ $ref: '#/components/schemas/Error' }) },
          ...errorRefs(RUN_ERRORS),
        },
      },
    },
  };
}
