import { errorRefs } from './error-responses.js';
import { apiKeySecurity, json, type Json } from './shared.js';

/** A render template as `GET /templates/` lists it. */
const TEMPLATE: Json = {
  type: 'object',
  required: ['name', 'description', 'merge'],
  properties: {
    name: { type: 'string', description: 'What `template` of /render/ takes', examples: ['quote-card'] },
    description: { type: 'string' },
    merge: {
      type: 'array',
      description: 'Its merge fields, in the order the document uses them',
      items: {
        type: 'object',
        required: ['name', 'kind'],
        properties: {
          name: { type: 'string', examples: ['TITLE'] },
          kind: {
            type: 'string',
            enum: ['text', 'url', 'number'],
            description: '`url` where it is a `src`, `number` where it is a time or a number, else `text`',
          },
          default: { type: 'string', description: "The document's own `merge` default, when it has one" },
        },
      },
    },
  },
};

/** The render templates (docs/render.md#templates) and the studio page that opens them (docs/studio.md). */
export function studioRoutes(secured: boolean): Json {
  const security = apiKeySecurity(secured);
  return {
    '/templates/': {
      get: {
        operationId: 'listTemplates',
        summary: "The server's render templates (MEDIAFLOW_TEMPLATES), with their merge fields",
        tags: ['server'],
        ...security,
        responses: {
          '200': {
            description: 'Every template, by name',
            content: json({
              type: 'object',
              required: ['templates'],
              properties: { templates: { type: 'array', items: TEMPLATE } },
            }),
          },
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
    },
    '/templates/{name}': {
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: 'getTemplate',
        summary: 'One template, with its edit document (`edit`)',
        tags: ['server'],
        ...security,
        responses: {
          '200': {
            description: 'The template as the list shows it, and its document with its merge fields as written',
            content: json({
              ...TEMPLATE,
              required: [...(TEMPLATE.required as string[]), 'edit'],
              properties: { ...(TEMPLATE.properties as Json), edit: { type: 'object', additionalProperties: true } },
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
