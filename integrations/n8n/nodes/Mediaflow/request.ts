import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { CatalogueEntry } from './catalogue';
import { fieldNames } from './properties';

/**
 * The multipart body of one item's run: each field as mediaflow takes it, and each media input as its URL
 * (a list comma-separated, as mediaflow's lists are) or as file parts named after the field, one per
 * binary property (a list field may have several).
 */
export async function buildForm(ctx: IExecuteFunctions, item: number, entry: CatalogueEntry): Promise<FormData> {
  const form = new FormData();
  const more = entry.fields.some((field) => !field.input && !field.required)
    ? (ctx.getNodeParameter(fieldNames(entry, entry.fields[0]!).more, item, {}) as IDataObject)
    : {};
  for (const field of entry.fields) {
    const names = fieldNames(entry, field);
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
      form.append(field.name, String(ctx.getNodeParameter(names.value, item)));
    } else if (more[field.name] !== undefined && more[field.name] !== '') {
      form.append(field.name, String(more[field.name]));
    }
  }
  return form;
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
