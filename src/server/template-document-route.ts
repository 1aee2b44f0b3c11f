import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MediaflowError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { loadTemplate, templateNames } from '../plugins/render/templates.js';

export interface TemplateDocumentRouteOptions {
  /** MEDIAFLOW_TEMPLATES: the folder of render templates. */
  templatesDir: string;
  /** The API key check, as for the list of templates (templates-route.ts). */
  onRequest: (request: FastifyRequest) => Promise<void>;
}

/**
 * `GET /templates/<name>`: one render template with its edit document as written (`edit`), which the studio page
 * opens in its editor (docs/render.md#templates); `GET /templates/` lists them. An unknown name is a 404. Read at each
 * request, as `/render/` reads a template it is given.
 */
export function registerTemplateDocumentRoute(app: FastifyInstance, options: TemplateDocumentRouteOptions): void {
  const { templatesDir, onRequest } = options;
  app.get(`${SERVER_PATHS.templates}/:name`, { onRequest }, async (request) => {
    const { name } = request.params as { name: string };
    if (!templateNames(templatesDir).includes(name))
      throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown template '${name}' (GET /templates/ lists them)`);
    const edit = loadTemplate(templatesDir, name);
    return { name, description: typeof edit.description === 'string' ? edit.description : '', edit };
  });
}
