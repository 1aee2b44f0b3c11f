import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { listTemplates } from '../plugins/render/templates.js';

export interface TemplatesRouteOptions {
  /** MEDIAFLOW_TEMPLATES: the folder of render templates. */
  templatesDir: string;
  /** The API key check: the list is the server's own content, as GET /pipelines is. */
  onRequest: (request: FastifyRequest) => Promise<void>;
}

/**
 * `GET /templates/`: the render templates of the templates folder, each with its description and its merge fields
 * (name, kind, default), as `mediaflow templates --json` prints them (docs/render.md#templates). The folder is read at
 * each request, as `template=<name>` reads it, so a template added or changed is listed without a restart.
 */
export function registerTemplatesRoute(app: FastifyInstance, options: TemplatesRouteOptions): void {
  app.get(SERVER_PATHS.templates, { onRequest: options.onRequest }, async () => ({
    templates: listTemplates(options.templatesDir),
  }));
}
