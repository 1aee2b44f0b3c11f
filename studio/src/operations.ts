import { callJson, jsonBody } from './api.js';
import { el, replace } from './dom.js';
import { newId, urlField, type Field } from './fields.js';

/**
 * "Try an operation": each operation's form made from its request body in the OpenAPI document (`/openapi.json`),
 * which the server makes from the same plugin schemas as the CLI's flags. The JSON body's schema is read, so each
 * field is sent with its own type; the job fields (`webhook_url`, `metadata`) are the API's, not the form's.
 */

interface Schema {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  format?: string;
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  'x-mediaflow-input'?: { kind: string; list: boolean };
}

export interface Operation {
  name: string;
  path: string;
  summary: string;
  schema: Schema;
}

interface OpenApi {
  paths: Record<
    string,
    {
      post?: {
        operationId: string;
        summary: string;
        'x-mediaflow-plugin'?: unknown;
        requestBody: { content: Record<string, { schema: Schema }> };
      };
    }
  >;
}

/** The fields that make a request a job and say what to do with it: not the operation's. */
const JOB_FIELDS = new Set(['webhook_url', 'metadata']);

/** The operations of the document, but `render` (which the page edits as a document), by name. */
export function operationsOf(document: OpenApi): Operation[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) =>
      item.post?.['x-mediaflow-plugin'] && item.post.operationId !== 'render'
        ? [
            {
              name: item.post.operationId,
              path,
              summary: item.post.summary,
              schema: item.post.requestBody.content['application/json']!.schema,
            },
          ]
        : [],
    )
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The edit document's schema: the `edit` field of `/render/`'s JSON body. */
export function editSchemaOf(document: OpenApi): object {
  const schema = document.paths['/render/']?.post?.requestBody.content['application/json']?.schema.properties?.edit;
  if (!schema) throw new Error('The server has no /render/ operation');
  return schema;
}

/** One control for one field of the schema. */
function fieldOf(name: string, schema: Schema, required: boolean): Field {
  const input = schema['x-mediaflow-input'];
  const label = `${name}${required ? ' (required)' : ''}`;
  if (input)
    return urlField(name, label, {
      list: input.list,
      required,
      ...(schema.description ? { hint: schema.description } : {}),
    });
  const id = newId(name);
  const hint = schema.description ? el('small', { attrs: { id: `${id}-hint` } }, schema.description) : null;
  const described: Record<string, string> = hint ? { 'aria-describedby': `${id}-hint` } : {};
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  let value: () => unknown;
  if (schema.enum) {
    const select = el(
      'select',
      { attrs: { id, name, ...described } },
      required
        ? null
        : el(
            'option',
            { attrs: { value: '' } },
            schema.default !== undefined ? `(default: ${String(schema.default)})` : '(none)',
          ),
      ...schema.enum.map((choice) => el('option', { attrs: { value: String(choice) } }, String(choice))),
    );
    control = select;
    value = () => (select.value === '' ? undefined : select.value);
  } else if (schema.type === 'boolean') {
    const box = el('input', { attrs: { id, name, type: 'checkbox', ...described } });
    box.checked = schema.default === true;
    control = box;
    value = () => box.checked;
  } else if (schema.type === 'integer' || schema.type === 'number') {
    const number = el('input', {
      attrs: {
        id,
        name,
        type: 'number',
        step: schema.type === 'integer' ? '1' : 'any',
        ...(schema.minimum !== undefined ? { min: String(schema.minimum) } : {}),
        ...(schema.maximum !== undefined ? { max: String(schema.maximum) } : {}),
        ...(schema.default !== undefined ? { placeholder: String(schema.default) } : {}),
        ...described,
      },
    });
    control = number;
    value = () => (number.value === '' ? undefined : Number(number.value));
  } else {
    const text =
      (schema.maxLength ?? 0) > 200
        ? el('textarea', { attrs: { id, name, rows: '3', ...described } })
        : el('input', {
            attrs: {
              id,
              name,
              type: 'text',
              ...(schema.default !== undefined ? { placeholder: String(schema.default) } : {}),
              ...described,
            },
          });
    control = text;
    value = () => (text.value === '' ? undefined : text.value);
  }
  if (required) control.required = true;
  return { element: el('div', { class: 'field' }, el('label', { attrs: { for: id } }, label), hint, control), value };
}

/** Draws the form of `operation` into `container`; `submitted` is told the job it started. */
export function drawOperationForm(
  container: HTMLElement,
  operation: Operation,
  submitted: (jobId: string, name: string) => void,
): void {
  const required = new Set(operation.schema.required ?? []);
  const fields = Object.entries(operation.schema.properties ?? {})
    .filter(([name]) => !JOB_FIELDS.has(name))
    .map(([name, schema]) => [name, fieldOf(name, schema, required.has(name))] as const);
  const outcome = el('p', { class: 'form-outcome', attrs: { 'aria-live': 'polite' } });
  const form = el(
    'form',
    { class: 'operation-form', attrs: { 'aria-label': `${operation.name}: its fields`, novalidate: '' } },
    el('p', {}, operation.summary),
    ...fields.map(([, field]) => field.element),
    el('button', { attrs: { type: 'submit' } }, `Run ${operation.name} as a job`),
    outcome,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body = Object.fromEntries(
      fields.flatMap(([name, field]) => (field.value() === undefined ? [] : [[name, field.value()]])),
    );
    outcome.textContent = 'Submitting…';
    callJson<{ job_id: string }>(operation.path.replace(/^\//, ''), jsonBody(body, true))
      .then((accepted) => {
        outcome.textContent = `Job ${accepted.job_id} accepted`;
        submitted(accepted.job_id, operation.name);
      })
      .catch((error: Error) => (outcome.textContent = `Refused: ${error.message}`));
  });
  replace(container, form);
}
