import { errorRefs } from './error-responses.js';
import { apiKeySecurity, json, type Json } from './shared.js';

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

/** The route of the render templates: list them with their merge fields. */
export function templateRoutes(secured: boolean): Json {
  return {
    '/templates/': {
      get: {
        operationId: 'listTemplates',
        summary: 'The templates of /render/, with their merge fields',
        description:
          'Each template of the templates folder (MEDIAFLOW_TEMPLATES; mediaflow ships narrated-short, quote-card ' +
          'and audiogram): its name, which `/render/` takes as `template`, its description, and its merge fields ' +
          'in the order the template uses them. Read at each request.',
        tags: ['operations'],
        ...apiKeySecurity(secured),
        responses: {
          '200': {
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
      },
    },
  };
}
