import { NodeOperationError, type IDataObject, type IExecuteFunctions } from 'n8n-workflow';
import type { CatalogueEntry, CatalogueField } from './catalogue';
import { fieldNames, templateNames } from './properties';

/**
 * The multipart body of one item's run: each field as mediaflow takes it, and each media input as its URL
 * (a list comma-separated, as mediaflow's lists are) or as file parts named after the field, one per
 * binary property (a list field may have several).
 */
export async function buildForm(ctx: IExecuteFunctions, item: number, entry: CatalogueEntry): Promise<FormData> {
  const form = new FormData();
  const own = new Set(entry.templates ? [entry.templates.field, entry.templates.values] : []);
  const more = entry.fields.some((field) => !field.input && !field.required && !own.has(field.name))
    ? (ctx.getNodeParameter(fieldNames(entry, entry.fields[0]!).more, item, {}) as IDataObject)
    : {};
  if (entry.templates) await appendTemplate(ctx, form, item, entry);
  for (const field of entry.fields) {
    const names = fieldNames(entry, field);
    if (own.has(field.name)) continue;
    if (field.input) {
      if (ctx.getNodeParameter(names.source, item, 'url') === 'binary') {
        const properties = String(ctx.getNodeParameter(names.binary, item, 'data'))
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        for (const property of properties) await appendFile(ctx, form, item, field.name, property);
      } else {
        const url = String(ctx.getNodeParameter(names.value, item, '')).trim();
        if (url) form.append(field.name, url);
      }
    } else if (field.required) {
      form.append(field.name, fieldText(field, ctx.getNodeParameter(names.value, item)));
    } else if (more[field.name] !== undefined && more[field.name] !== '') {
      form.append(field.name, fieldText(field, more[field.name]));
    }
  }
  return form;
}

/** A field's value as form text: a document or named values as their JSON text (n8n may hand over the object). */
const fieldText = (field: CatalogueField, value: unknown): string =>
  (field.document || field.values) && typeof value === 'object' ? JSON.stringify(value) : String(value);

/**
 * A template operation's fields: the template picked, the merge values mapped (as the values field's JSON text; one
 * left empty takes the template's default) and merge fields uploaded from binary properties, as parts of their names.
 */
async function appendTemplate(ctx: IExecuteFunctions, form: FormData, item: number, entry: CatalogueEntry) {
  const names = templateNames(entry);
  const { field, values } = entry.templates!;
  const template = String(ctx.getNodeParameter(names.template, item, ''));
  if (!template) return;
  form.append(field, template);
  const mapped = (ctx.getNodeParameter(`${names.merge}.value`, item, {}) ?? {}) as IDataObject;
  const given = Object.entries(mapped).filter(([, value]) => value !== undefined && value !== null && value !== '');
  if (given.length > 0) form.append(values, JSON.stringify(Object.fromEntries(given.map(([k, v]) => [k, String(v)]))));
  for (const pair of String(ctx.getNodeParameter(names.files, item, '')).split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    if (at < 1)
      throw new NodeOperationError(
        ctx.getNode(),
        `Expected NAME=property in Binary Merge Fields, got '${pair.trim()}'`,
        {
          itemIndex: item,
        },
      );
    await appendFile(ctx, form, item, pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
}

/** One binary property of the item as a file part named `field`, with its file name and content type. */
async function appendFile(
  ctx: IExecuteFunctions,
  form: FormData,
  item: number,
  field: string,
  property: string,
): Promise<void> {
  const binary = ctx.helpers.assertBinaryData(item, property);
  const bytes = await ctx.helpers.getBinaryDataBuffer(item, property);
  const name = binary.fileName ?? (binary.fileExtension ? `${property}.${binary.fileExtension}` : property);
  form.append(
    field,
    new Blob([bytes as Uint8Array<ArrayBuffer>], { type: binary.mimeType || 'application/octet-stream' }),
    name,
  );
}
