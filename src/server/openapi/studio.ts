import { errorRefs } from './error-responses.js';
import { apiKeySecurity, json, type Json } from './shared.js';

/** One render template's document (docs/render.md#templates), and the studio page that opens it (docs/studio.md). */
export function studioRoutes(secured: boolean): Json {
  return {
    '/templates/{name}': {
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: 'getTemplate',
        summary: 'One template of /render/, with its edit document as written (`edit`)',
        tags: ['operations'],
        ...apiKeySecurity(secured),
        responses: {
          '200': {
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
      },
    },
    '/studio/': {
      get: {
        operationId: 'studio',
        summary: 'The studio page: edit and see a render, follow jobs, try operations (MEDIAFLOW_STUDIO=0: off)',
        description:
          'Open without the API key (the page asks for it and sends it with each call). A server built without dev ' +
          'dependencies has no page: 503 with a page that says how to build it.',
        tags: ['server'],
        responses: {
          '200': { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
          '503': { description: 'Not built in this install', content: { 'text/html': { schema: { type: 'string' } } } },
        },
      },
    },
  };
}
