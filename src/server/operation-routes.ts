import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { inputSpecOf, paramMarked, VALUES_KEYWORD, type PluginDefinition } from '../engine/contract/plugin.js';
import { MediaflowError } from '../engine/errors.js';
import type { Registry } from '../engine/plugins/registry.js';
import { dashed } from '../engine/plugins/reserved.js';
import { VERSION } from '../engine/version.js';
import { submitJob, type SubmitContext } from './job-submission.js';
import { JOB_FIELD_NAMES } from './limits.js';
import { handlerValidates } from './validation.js';
import { errorRefs, RUN_ERRORS } from './openapi/error-responses.js';
import { JOB_HEADERS } from './openapi/job-fields.js';
import { bodySchema, exampleFields, successSchema } from './openapi/plugin-schemas.js';
import { apiKeySecurity, REQUEST_DESCRIPTION, responseRef, type Json } from './openapi/shared.js';

/** One POST route per operation of the registry, whose fields are its plugin's parameters. */

export interface OperationRouteOptions {
  registry: Registry;
  /** The API key check, run before the body is read. */
  onRequest: (request: FastifyRequest) => Promise<void>;
  submit: SubmitContext;
  /** Whether the server has an API key: the routes' `security`. */
  secured: boolean;
}

/**
 * Where a plugin came from, as the open document may say it: a package name, or a file's name
 * without its folder (no server paths).
 */
function publicSource(source: string): string {
  return source.replace(/^(\S+)/, (entry) => (/^(\.|\/|file:|[A-Za-z]:\\)/.test(entry) ? path.basename(entry) : entry));
}

/** The path as it also answers: without its trailing slash, or with one. */
const otherForm = (route: string) => (route.endsWith('/') ? route.replace(/\/+$/, '') : `${route}/`);

/** The schema of one operation's route: its fields in the three encodings, its answers, where it comes from. */
function operationDocs(plugin: PluginDefinition, options: OperationRouteOptions, bodyLimit: number): Json {
  const info = options.registry.infoOf(plugin.name);
  const builtIn = !info || info.source === 'built-in';
  const version = builtIn ? VERSION : info?.version;
  const examples = [exampleFields(plugin)];
  const success = successSchema(plugin);
  // One path per operation keeps /docs readable; the other form is said here (and in info.description).
  const also =
    `Also answered at \`${otherForm(plugin.path)}\`: the trailing slash is optional. Other methods than POST on ` +
    `this path are a 405 with \`Allow: POST\`.`;
  return {
    operationId: plugin.name,
    summary: plugin.summary,
    description: plugin.description ? `${plugin.description}\n\n${also}` : also,
    tags: [builtIn ? 'operations' : 'plugins'],
    'x-mediaflow-plugin': {
      name: plugin.name,
      source: publicSource(info?.source ?? 'built-in'),
      ...(version ? { version } : {}),
      cli: `mediaflow ${dashed(plugin.name)}`,
    },
    ...apiKeySecurity(options.secured),
    headers: JOB_HEADERS,
    [REQUEST_DESCRIPTION]:
      'The fields as multipart/form-data (as the README shows), application/x-www-form-urlencoded or ' +
      'application/json; unknown fields are ignored. In a multipart body a URL field also takes a file part ' +
      'of its name (a list field several), stored as an input of its own (docs/files.md). With `webhook_url` ' +
      'or `Prefer: respond-async` the operation runs as a job (202).',
    body: {
      content: {
        'multipart/form-data': { schema: { ...bodySchema(plugin, 'multipart', bodyLimit), examples } },
        'application/x-www-form-urlencoded': { schema: { ...bodySchema(plugin, 'form', bodyLimit), examples } },
        'application/json': { schema: { ...bodySchema(plugin, 'json', bodyLimit), examples } },
      },
    },
    response: {
      200: {
        description: 'Done (a synchronous request): the output is published under /uploads/',
        content: { 'application/json': { schema: success.schema, example: success.example } },
      },
      202: responseRef('Accepted'),
      ...errorRefs(RUN_ERRORS),
    },
  };
}

/** Registers `POST <path>` for every operation, and a 405 for the path's other methods. */
export function registerOperationRoutes(app: FastifyInstance, options: OperationRouteOptions, bodyLimit: number): void {
  for (const plugin of options.registry.list()) {
    const inputFields = Object.entries(plugin.params.properties).flatMap(([key, schema]) =>
      inputSpecOf(schema) ? [key] : [],
    );
    // An operation of named values takes a form's other fields as values, and a file part of another name as one.
    const ownFields = paramMarked(plugin.params, VALUES_KEYWORD)
      ? [...Object.keys(plugin.params.properties), ...JOB_FIELD_NAMES]
      : undefined;
    app.post(
      plugin.path,
      {
        onRequest: options.onRequest,
        schema: operationDocs(plugin, options, bodyLimit),
        validatorCompiler: handlerValidates,
      },
      (request, reply) => submitJob(request, reply, 'operation', plugin.name, options.submit, inputFields, ownFields),
    );
    // Another method on an operation's path is the wrong method, not a missing route (HEAD comes with GET). The POST's
    // description says so; listed, each would be an operation of its own in /docs.
    app.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url: plugin.path,
      schema: { hide: true },
      handler: async (request, reply) => {
        void reply.header('allow', 'POST');
        throw new MediaflowError(
          'MF_ERR_METHOD',
          `Method ${request.method} is not allowed on ${plugin.path}: send a POST with the fields`,
        );
      },
    });
  }
}
