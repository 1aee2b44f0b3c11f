import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { listTemplates } from '../plugins/render/templates.js';
import { errorRefs } from './openapi/error-responses.js';
import { apiKeySecurity, DOCUMENTED_WITH_SLASH, json, type Json } from './openapi/shared.js';

export interface TemplatesRouteOptions {
  /** MEDIAFLOW_TEMPLATES: the folder of render templates. */
  templatesDir: string;
  /** The API key check: the list is the server's own content, as GET /pipelines is. */
  onRequest: (request: FastifyRequest) => Promise<void>;
  /** Whether the server has an API key: the route's `security`. */
  secured: boolean;
}

/** One merge field of a template, as GET /templates/ lists it. */
const MERGE_FIELD: Json = {
  type: 'object',
  required: ['name', 'kind'],
  properties: {
    name: { type: 'string', description: 'The field, written `{{NAME}}` in the template', examples: ['TITLE'] },
    kind: {
      type: 'string',
      enum: ['text', 'url', 'number'],
      description:
        'What it takes, from where the template uses it: `url` in a `src` (a URL, or a file part of its name), ' +
        '`number` as a whole time or number, `text` elsewhere',
    },
    default: {
      type: 'string',
      description: "The template's default, as text; a field without one must be given",
      examples: ['A short story'],
    },
  },
};

/** The route's schema: the templates with their merge fields. */
const templatesDocs = (secured: boolean) => ({
  operationId: 'listTemplates',
  summary: 'The templates of /render/, with their merge fields',
  description:
    'Each template of the templates folder (MEDIAFLOW_TEMPLATES; mediaflow ships narrated-short, quote-card ' +
    'and audiogram): its name, which `/render/` takes as `template`, its description, and its merge fields ' +
    'in the order the template uses them. Read at each request.',
  tags: ['operations'],
  ...apiKeySecurity(secured),
  response: {
    200: {
      description: 'The templates, by name',
      content: json({
        type: 'object',
        required: ['templates'],
        properties: {
          templates: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'description', 'merge'],
              properties: {
                name: { type: 'string', examples: ['quote-card'] },
                description: { type: 'string' },
                merge: { type: 'array', items: MERGE_FIELD },
              },
            },
          },
        },
      }),
    },
    ...errorRefs(['MF_ERR_AUTH']),
  },
});

/**
 * `GET /templates/`: the render templates of the templates folder, each with its description and its merge fields
 * (name, kind, default), as `mediaflow templates --json` prints them (docs/render.md#templates). The folder is read at
 * each request, as `template=<name>` reads it, so a template added or changed is listed without a restart.
 */
export function registerTemplatesRoute(app: FastifyInstance, options: TemplatesRouteOptions): void {
  app.get(
    SERVER_PATHS.templates,
    { onRequest: options.onRequest, schema: templatesDocs(options.secured), config: DOCUMENTED_WITH_SLASH },
    async () => ({
      templates: listTemplates(options.templatesDir),
    }),
  );
}
