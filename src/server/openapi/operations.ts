import path from 'node:path';
import type { PluginDefinition } from '../../engine/contract/plugin.js';
import type { Registry } from '../../engine/plugins/registry.js';
import { errorRefs, RUN_ERRORS } from './error-responses.js';
import { JOB_PARAMETERS } from './job-fields.js';
import { bodySchema, exampleFields, successSchema } from './plugin-schemas.js';
import { dashed } from '../../engine/plugins/reserved.js';
import { VERSION } from '../../engine/version.js';
import { apiKeySecurity, type Json } from './shared.js';

/** The path of each operation: a POST whose fields are its plugin's parameters. */

/**
 * Where a plugin came from, as the open document may say it: a package name, or a file's name
 * without its folder (no server paths).
 */
function publicSource(source: string): string {
  return source.replace(/^(\S+)/, (entry) => (/^(\.|\/|file:|[A-Za-z]:\\)/.test(entry) ? path.basename(entry) : entry));
}

/** The path as it also answers: without its trailing slash, or with one. */
const otherForm = (route: string) => (route.endsWith('/') ? route.replace(/\/+$/, '') : `${route}/`);

/** The OpenAPI path item of one operation. */
export function operation(
  plugin: PluginDefinition,
  registry: Registry,
  secured: boolean,
  bodyLimit: number | undefined,
): Json {
  const info = registry.infoOf(plugin.name);
  const builtIn = !info || info.source === 'built-in';
  const version = builtIn ? VERSION : info?.version;
  const example = exampleFields(plugin);
  const success = successSchema(plugin);
  // One path per operation keeps /docs readable; the other form is said here (and in info.description).
  const also =
    `Also answered at \`${otherForm(plugin.path)}\`: the trailing slash is optional. Other methods than POST on ` +
    `this path are a 405 with \`Allow: POST\`.`;
  return {
    post: {
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
      ...apiKeySecurity(secured),
      parameters: JOB_PARAMETERS,
      requestBody: {
        required: true,
        description:
          'The fields as multipart/form-data (as the README shows), application/x-www-form-urlencoded or ' +
          'application/json; unknown fields are ignored. In a multipart body a URL field also takes a file part ' +
          'of its name (a list field several), stored as an input of its own (docs/files.md). With `webhook_url` ' +
          'or `Prefer: respond-async` the operation runs as a job (202).',
        content: {
          'multipart/form-data': { schema: bodySchema(plugin, 'multipart', bodyLimit), example },
          'application/x-www-form-urlencoded': { schema: bodySchema(plugin, 'form', bodyLimit), example },
          'application/json': { schema: bodySchema(plugin, 'json', bodyLimit), example },
        },
      },
      responses: {
        '200': {
          description: 'Done (a synchronous request): the output is published under /uploads/',
          content: { 'application/json': { schema: success.schema, example: success.example } },
        },
        '202': { $ref: '#/components/responses/Accepted' },
        ...errorRefs(RUN_ERRORS),
      },
    },
  };
}
