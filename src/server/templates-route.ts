import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MediaflowError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { templateInfo } from '../plugins/render/template-fields.js';
import { listTemplates, loadTemplate, templateNames } from '../plugins/render/templates.js';

/**
 * `GET /templates/`: the render templates of the server (MEDIAFLOW_TEMPLATES), each with its description and merge
 * fields; `GET /templates/<name>`: one of them with its edit document, which the studio page opens. Behind the API
 * key like `/render/`, which takes them by name. Read at each request, as `/render/` reads them.
 */
export function registerTemplateRoutes(
  app: FastifyInstance,
  options: { templatesDir: string; onRequest: (request: FastifyRequest) => Promise<void> },
): void {
  const { templatesDir, onRequest } = options;
  app.get(`${SERVER_PATHS.templates}/`, { onRequest }, async () => ({ templates: listTemplates(templatesDir) }));
  app.get(`${SERVER_PATHS.templates}/:name`, { onRequest }, async (request) => {
    const { name } = request.params as { name: string };
    if (!templateNames(templatesDir).includes(name))
      throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown template '${name}' (GET /templates/ lists them)`);
    const edit = loadTemplate(templatesDir, name);
    return { ...templateInfo(name, edit), edit };
  });
}
