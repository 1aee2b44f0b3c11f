// The reference of docs/render.md's edit document, made from its schema (src/plugins/render/schema.ts):
// `npx tsx scripts/render-reference.ts` writes it between the page's reference markers, and
// test/plugins/render/reference.test.ts fails when the page and the schema differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TIME_PATTERN } from '../src/sdk.js';
import type { JsonSchema as Schema } from '../src/plugins/render/document-check.js';
import { CLIP_TYPES, EDIT_SCHEMA, OUTPUT } from '../src/plugins/render/schema.js';

export const START = '<!-- reference: made from the schema by scripts/render-reference.ts -->';
export const END = '<!-- end of reference -->';

const code = (value: unknown) => `\`${String(value)}\``;
const range = (s: Schema) =>
  s.minimum !== undefined && s.maximum !== undefined ? ` ${s.minimum} to ${s.maximum}` : '';

/** What a field takes, in a few words. */
function takes(s: Schema): string {
  if (s.anyOf) {
    const time = s.anyOf.some((branch) => branch.pattern === TIME_PATTERN);
    const rest = s.anyOf.filter((branch) => branch.pattern !== TIME_PATTERN && !(time && branch.type === 'number'));
    return [...(time ? ['a time'] : []), ...rest.map(takes)].join(', or ');
  }
  if (s.const !== undefined) return code(s.const);
  if (s.enum) return s.enum.map(code).join(', ');
  switch (s.type) {
    case 'integer':
      return `whole number${range(s)}${s.multipleOf === 2 ? ', even' : ''}`;
    case 'number':
      return `number${range(s)}`;
    case 'boolean':
      return '`true`, `false`';
    case 'object':
      return `object (${s.title ?? 'below'})`;
    case 'array':
      return `a list of ${s.items?.title?.replace(/^an? /, '') ?? 'item'}s`;
    case 'string':
      return (
        s.title ??
        (s.pattern
          ? 'text, of the form its description gives'
          : `text${s.maxLength ? ` (at most ${s.maxLength} characters)` : ''}`)
      );
    default:
      return 'text or a number';
  }
}

/** One object's fields as a table: name, what it takes, its default (or that it is required), what it is. */
function table(schema: Schema): string {
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(([name, field]) => {
    const fallback = required.has(name) ? 'required' : field.default !== undefined ? code(field.default) : '';
    const text = (field.description ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
    return `| \`${name}\` | ${takes(field)} | ${fallback} | ${text} |`;
  });
  return ['| field | takes | default | what |', '|---|---|---|---|', ...rows].join('\n');
}

/** The whole reference: the document, the output, each clip type, the transition. */
export function renderReference(): string {
  const edit = EDIT_SCHEMA as unknown as Schema;
  const video = CLIP_TYPES.video as unknown as Schema;
  const sections = [
    ['The document', edit],
    ['`output`', OUTPUT as unknown as Schema],
    ...Object.entries(CLIP_TYPES).map(([type, schema]) => [`\`${type}\` clips`, schema as unknown as Schema] as const),
    ['`transition` (video and image clips)', video.properties!.transition!],
  ] as const;
  return sections.map(([title, schema]) => `#### ${title}\n\n${table(schema)}`).join('\n\n');
}

/** docs/render.md with its reference made anew. */
export function withReference(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error('docs/render.md has no reference markers');
  return `${page.slice(0, start + START.length)}\n\n${renderReference()}\n\n${page.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = path.resolve(import.meta.dirname, '../docs/render.md');
  writeFileSync(file, withReference(readFileSync(file, 'utf8')));
}
