import { mergeDefaults, mergeUses } from './merge.js';

/**
 * What the list of templates (`GET /templates/`) says of an edit document: its description and its merge fields, each
 * with the kind of value it takes and its default. Pure, with no import of Node's: the studio page shows the merge
 * fields of any document it edits, a template's or a pasted one, as the list would.
 */

/** A merge field of a template as the list of templates shows it. */
export interface TemplateField {
  name: string;
  /** What it takes, from where it is used: `url` in a `src`, `number` in a time or a number, `text` elsewhere. */
  kind: 'text' | 'url' | 'number';
  /** Its default, when the template gives one. */
  default?: string;
}

export interface TemplateInfo {
  name: string;
  description: string;
  merge: TemplateField[];
}

/** The fields of a clip or the output that take a time or a number: a merge field used there is a number. */
const NUMBER_FIELDS = new Set([
  'start',
  'duration',
  'trim',
  'volume',
  'speed',
  'fade_in',
  'fade_out',
  'width',
  'height',
  'fps',
  'opacity',
  'margin',
  'font_size',
  'outline',
  'max_width',
]);

/**
 * What the list of templates says of one: its description and its merge fields, with their kinds and defaults: those
 * without a default (which a request must give) first.
 */
export function templateInfo(name: string, document: Record<string, unknown>): TemplateInfo {
  const defaults = mergeDefaults(document);
  const kinds = new Map<string, TemplateField['kind']>();
  const rank = { text: 0, number: 1, url: 2 } as const;
  for (const use of mergeUses(document)) {
    const field = use.path.split(/[.[]/).pop()!;
    const kind = field === 'src' ? 'url' : use.whole && NUMBER_FIELDS.has(field) ? 'number' : 'text';
    const before = kinds.get(use.name);
    if (before === undefined || rank[kind] > rank[before]) kinds.set(use.name, kind);
  }
  const fields: TemplateField[] = [...kinds].map(([field, kind]) => ({
    name: field,
    kind,
    ...(defaults[field] !== undefined ? { default: defaults[field] } : {}),
  }));
  // What must be given comes first, as a form asks for it; each group in the order the document uses them.
  const needed = (field: TemplateField) => (field.default === undefined ? 0 : 1);
  return {
    name,
    description: typeof document.description === 'string' ? document.description : '',
    merge: fields.sort((a, b) => needed(a) - needed(b)),
  };
}
