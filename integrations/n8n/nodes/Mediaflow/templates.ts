import type {
  FieldType,
  ILoadOptionsFunctions,
  INodePropertyOptions,
  ResourceMapperField,
  ResourceMapperFields,
} from 'n8n-workflow';
import type { Catalogue } from './catalogue';
import { call, CREDENTIALS } from './jobs';
import { operationValue, TEMPLATE_METHODS, templateNames } from './properties';

/**
 * What the editor asks the server while the node is edited: its render templates and the merge fields of the one
 * picked (GET /templates/, docs/render.md#templates), so that the Render operation shows that template's merge
 * fields as inputs, whatever templates the server has today.
 */

/** A template as GET /templates/ lists it. */
interface Template {
  name: string;
  description: string;
  merge: Array<{ name: string; kind: 'text' | 'url' | 'number'; default?: string }>;
}

async function serverTemplates(ctx: ILoadOptionsFunctions): Promise<Template[]> {
  const credentials = await ctx.getCredentials(CREDENTIALS);
  const base = String(credentials.baseUrl).replace(/\/+$/, '');
  return (await call<{ templates: Template[] }>(ctx, 0, { method: 'GET', url: `${base}/templates/` })).templates;
}

/** A merge field as a field of the resource mapper: a number as a number, a URL or text as text. */
function mapperField(field: Template['merge'][number]): ResourceMapperField {
  const type: FieldType = field.kind === 'number' ? 'number' : 'string';
  const fallback = field.default === undefined ? undefined : type === 'number' ? Number(field.default) : field.default;
  return {
    id: field.name,
    displayName: field.kind === 'url' ? `${field.name} (URL)` : field.name,
    type,
    required: field.default === undefined,
    defaultMatch: false,
    canBeUsedToMatch: false,
    display: true,
    ...(fallback !== undefined ? { defaultValue: fallback } : {}),
  };
}

/** The methods the node's template properties name (properties.ts), for the operations of `catalogue`. */
export function templateMethods(catalogue: Catalogue) {
  return {
    loadOptions: {
      async [TEMPLATE_METHODS.list](this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
        const templates = await serverTemplates(this);
        return [
          { name: '— None: The Edit Document of Additional Fields —', value: '' },
          ...templates.map((template) => ({
            name: template.name,
            value: template.name,
            description: template.description,
          })),
        ];
      },
    },
    resourceMapping: {
      async [TEMPLATE_METHODS.fields](this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
        const operation = this.getCurrentNodeParameter('operation');
        const entry = catalogue.entries.find((candidate) => operationValue(candidate) === operation);
        const picked = entry?.templates ? this.getCurrentNodeParameter(templateNames(entry).template) : undefined;
        if (!picked) return { fields: [], emptyFieldsNotice: 'Pick a template first' };
        const template = (await serverTemplates(this)).find((candidate) => candidate.name === picked);
        if (!template) return { fields: [], emptyFieldsNotice: `The server has no template '${String(picked)}'` };
        return { fields: template.merge.map(mapperField) };
      },
    },
  };
}
