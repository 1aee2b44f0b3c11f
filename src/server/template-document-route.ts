import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MediaflowError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { loadTemplate, templateNames } from '../plugins/render/templates.js';
import { errorRefs } from './openapi/error-responses.js';
import { apiKeySecurity, json } from './openapi/shared.js';

export interface TemplateDocumentRouteOptions {
  /** MEDIAFLOW_TEMPLATES: the folder of render templates. */
  templatesDir: string;
  /** The API key check, as for the list of templates (templates-route.ts). */
  onRequest: (request: FastifyRequest) => Promise<void>;
  /** Whether the server has an API key: the route's `security`. */
  secured: boolean;
}

/** The route's schema: one template, its document as written. */
const templateDocs = (secured: boolean) => ({
  params: Type.Object({ name: Type.String() }),
  operationId: 'getTemplate',
  summary: 'One template of /render/, with its edit document as written (`edit`)',
  tags: ['operations'],
  ...apiKeySecurity(secured),
  response: {
    200: {
      description: 'The template: its name, its description and its document, merge fields as written',
      content: json({
        type: 'object',
        required: ['name', 'description', 'edit'],
        properties: {
          name: { type: 'string', examples: ['quote-card'] },
          description: { type: 'string' },
          edit: { type: 'object', additionalProperties: true },
        },
      }),
    },
    ...errorRefs(['MF_ERR_NOT_FOUND', 'MF_ERR_AUTH']),
  },
});

/**
 * `GET /templates/<name>`: one render template with its edit document as written (`edit`), which the studio page
 * opens in its editor (docs/render.md#templates); `GET /templates/` lists them. An unknown name is a 404. Read at each
 * request, as `/render/` reads a template it is given.
 */
export function registerTemplateDocumentRoute(fastify: FastifyInstance, options: TemplateDocumentRouteOptions): void {
  const { templatesDir, onRequest } = options;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(`${SERVER_PATHS.templates}/:name`, { onRequest, schema: templateDocs(options.secured) }, async (request) => {
    const { name } = request.params;
    if (!templateNames(templatesDir).includes(name))
      throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown template '${name}' (GET /templates/ lists them)`);
    const edit = loadTemplate(templatesDir, name);
    return { name, description: typeof edit.description === 'string' ? edit.description : '', edit };
  });
}
