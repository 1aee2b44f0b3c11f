import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';
import type { Catalogue, CatalogueEntry, CatalogueField } from './catalogue';

/**
 * The node's properties, made from the catalogue (operations.json): an Operation list of every operation
 * and pipeline, then each one's fields shown only when it is chosen. n8n wants property names unique
 * across the node, so each field's name starts with its operation's key (`merge_audios__format`).
 */

/** The Operation value of an entry: an operation's name, or `pipeline:<name>`. */
export function operationValue(entry: CatalogueEntry): string {
  return entry.kind === 'pipeline' ? `pipeline:${entry.name}` : entry.name;
}

/** The prefix of an entry's property names: its Operation value with only letters, digits and _. */
export function propertyKey(entry: CatalogueEntry): string {
  return operationValue(entry).replace(/[^A-Za-z0-9]/g, '_');
}

/** The names of a field's properties: the value, and for a media input where it comes from. */
export function fieldNames(entry: CatalogueEntry, field: CatalogueField) {
  const base = `${propertyKey(entry)}__${field.name}`;
  return { value: base, source: `${base}__source`, binary: `${base}__binary`, more: `${propertyKey(entry)}__more` };
}

/**
 * The properties of a template operation (render): the template picked from the server's list, its merge fields as
 * a resource mapper, and merge fields taken from the item's binary files.
 */
export function templateNames(entry: CatalogueEntry) {
  const key = propertyKey(entry);
  return { template: `${key}__template`, merge: `${key}__merge`, files: `${key}__merge_files` };
}

/** The node's methods that read the server's templates (templates.ts), by name. */
export const TEMPLATE_METHODS = { list: 'templates', fields: 'templateFields' } as const;

/** Words of field names n8n's labels spell in capitals, as its own nodes do ("Image URL"). */
const ACRONYMS: Record<string, string> = { url: 'URL', urls: 'URLs', fps: 'FPS' };

/** Words a title keeps in lower case after its first word ("Put Output File in Field", in n8n's nodes). */
const MINOR_WORDS = new Set(['and', 'for', 'from', 'of', 'or', 'per', 'to']);

/**
 * A field's or operation's name as n8n shows names: "audio_urls" as "Audio URLs", "crop_image_to_short" as
 * "Crop Image to Short".
 */
function title(name: string): string {
  return name
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((word, index) => {
      const lower = word.toLowerCase();
      if (ACRONYMS[lower]) return ACRONYMS[lower];
      if (index > 0 && MINOR_WORDS.has(lower)) return lower;
      return word[0]!.toUpperCase() + word.slice(1);
    })
    .join(' ');
}

/** An entry's name in the Operation list: "Merge Audios", "Pipeline: Text to Short". */
function operationName(entry: CatalogueEntry): string {
  return entry.kind === 'pipeline' ? `Pipeline: ${title(entry.name)}` : title(entry.name);
}

/**
 * The node's subtitle on the canvas: the chosen operation's name as the Operation list shows it, not its value
 * (`merge-audios`). n8n evaluates it as an expression with the node's `$parameter`; an operation the catalogue no
 * longer has shows its value.
 */
export function operationSubtitle(catalogue: Catalogue): string {
  const names = Object.fromEntries(catalogue.entries.map((entry) => [operationValue(entry), operationName(entry)]));
  return `={{ ${JSON.stringify(names)}[$parameter["operation"]] ?? $parameter["operation"] }}`;
}

function operationOption(entry: CatalogueEntry): INodePropertyOptions {
  return {
    name: operationName(entry),
    value: operationValue(entry),
    description: entry.description || entry.summary,
    action: entry.kind === 'pipeline' ? `Run the ${entry.name} pipeline` : entry.summary,
  };
}

/** A plain (not media) field as an n8n property of the given name. */
function plainProperty(field: CatalogueField, name: string): INodeProperties {
  const common = { displayName: title(field.name), name, description: field.description };
  // A document or named values: an object, written as JSON (n8n checks it is JSON as it is typed).
  if (field.document || field.values) return { ...common, type: 'json', default: '{}' };
  if (field.options) {
    return {
      ...common,
      type: 'options',
      options: field.options.map((value) => ({ name: value, value })),
      default: String(field.default ?? field.options[0]),
    };
  }
  if (field.type === 'boolean') return { ...common, type: 'boolean', default: field.default === true };
  if (field.type === 'number' || field.type === 'integer') {
    return {
      ...common,
      type: 'number',
      default: typeof field.default === 'number' ? field.default : (field.minimum ?? 0),
      typeOptions: {
        ...(field.minimum !== undefined ? { minValue: field.minimum } : {}),
        ...(field.maximum !== undefined ? { maxValue: field.maximum } : {}),
        ...(field.type === 'integer' ? { numberPrecision: 0 } : { numberPrecision: 2 }),
      },
    };
  }
  return { ...common, type: 'string', default: field.default === undefined ? '' : String(field.default) };
}

type Show = NonNullable<NonNullable<INodeProperties['displayOptions']>['show']>;

/** A media input: where it comes from (URL or binary property), then the URL or the property's name. */
function inputProperties(entry: CatalogueEntry, field: CatalogueField, show: Show): INodeProperties[] {
  const names = fieldNames(entry, field);
  const list = field.input?.list === true;
  return [
    {
      displayName: `${title(field.name)} Source`,
      name: names.source,
      type: 'options',
      options: [
        { name: 'URL', value: 'url', description: 'A URL mediaflow downloads' },
        {
          name: 'Binary File',
          value: 'binary',
          description: 'A file of the input item, uploaded with the request',
        },
      ],
      default: 'url',
      displayOptions: { show },
    },
    {
      displayName: title(field.name),
      name: names.value,
      type: 'string',
      default: '',
      required: field.required,
      placeholder: list ? 'https://example.com/a.mp4,https://example.com/b.mp4' : 'https://example.com/a.mp4',
      description: field.description,
      displayOptions: { show: { ...show, [names.source]: ['url'] } },
    },
    {
      displayName: list ? `${title(field.name)}: Input Binary Fields` : `${title(field.name)}: Input Binary Field`,
      name: names.binary,
      type: 'string',
      default: 'data',
      required: field.required,
      hint: list
        ? 'The names of the binary properties, comma-separated, in order: each is uploaded as one file'
        : 'The name of the binary property holding the file',
      description: field.description,
      displayOptions: { show: { ...show, [names.source]: ['binary'] } },
    },
  ];
}

/**
 * A template operation's own properties: the template, picked from the server's list (GET /templates/, read as the
 * node is edited); its merge fields, loaded for the template picked, as the values to send; and merge fields given
 * as the item's binary files. With no template, the edit document comes from Additional Fields.
 */
function templateProperties(entry: CatalogueEntry, show: Show): INodeProperties[] {
  const names = templateNames(entry);
  const noTemplate = { [names.template]: [''] };
  return [
    {
      displayName: 'Template',
      name: names.template,
      type: 'options',
      typeOptions: { loadOptionsMethod: TEMPLATE_METHODS.list },
      default: '',
      description:
        'A template of the server (its list, GET /templates/), rendered with the merge values below; or none, to ' +
        'give an Edit document under Additional Fields',
      displayOptions: { show },
    },
    {
      displayName: 'Merge Fields',
      name: names.merge,
      type: 'resourceMapper',
      noDataExpression: true,
      default: { mappingMode: 'defineBelow', value: null },
      required: true,
      description: "The template's merge fields: the value each `{{NAME}}` takes; a field left out takes its default",
      typeOptions: {
        loadOptionsDependsOn: [names.template],
        resourceMapper: {
          resourceMapperMethod: TEMPLATE_METHODS.fields,
          mode: 'add',
          valuesLabel: 'Merge Values',
          fieldWords: { singular: 'merge field', plural: 'merge fields' },
          addAllFields: true,
          multiKeyMatch: false,
          supportAutoMap: false,
          noFieldsError: 'This template has no merge fields',
        },
      },
      displayOptions: { show, hide: noTemplate },
    },
    {
      displayName: 'Binary Merge Fields',
      name: names.files,
      type: 'string',
      default: '',
      placeholder: 'COVER_URL=data, VOICE_URL=voice',
      hint: 'NAME=property pairs, comma-separated: each binary property is uploaded as the file of that merge field',
      description:
        'URL merge fields given as files of the input item instead: each is uploaded as the file part named after ' +
        'the merge field (leave the field out of the values above)',
      displayOptions: { show, hide: noTemplate },
    },
  ];
}

/** An entry's fields: media inputs and required fields in the open, the optional ones in a collection. */
function entryProperties(entry: CatalogueEntry): INodeProperties[] {
  const show = { operation: [operationValue(entry)] };
  const properties: INodeProperties[] = entry.templates ? templateProperties(entry, show) : [];
  const optional: INodeProperties[] = [];
  const own = new Set(entry.templates ? [entry.templates.field, entry.templates.values] : []);
  for (const field of entry.fields) {
    if (own.has(field.name)) continue;
    if (field.input) properties.push(...inputProperties(entry, field, show));
    else if (field.required) {
      properties.push({
        ...plainProperty(field, fieldNames(entry, field).value),
        required: true,
        displayOptions: { show },
      });
    } else optional.push(plainProperty(field, field.name));
  }
  if (optional.length > 0) {
    properties.push({
      displayName: 'Additional Fields',
      name: `${propertyKey(entry)}__more`,
      type: 'collection',
      placeholder: 'Add Field',
      default: {},
      displayOptions: { show },
      options: optional.sort((a, b) => a.displayName.localeCompare(b.displayName)),
    });
  }
  return properties;
}

/** What every operation shares: waiting for the job and downloading its result. */
export const RUN_PROPERTIES: INodeProperties[] = [
  {
    displayName: 'Wait for Completion',
    name: 'waitForCompletion',
    type: 'boolean',
    default: true,
    description:
      'Whether to wait for the job to end (polling it, without holding a request open) and output its result; ' +
      'otherwise the node outputs the queued job (job_id, status_url) at once',
  },
  {
    displayName: 'Download Result',
    name: 'downloadResult',
    type: 'boolean',
    default: false,
    description: 'Whether to download the result files as binary data',
    displayOptions: { show: { waitForCompletion: [true] } },
  },
  {
    displayName: 'Put Output File in Field',
    name: 'binaryPropertyOutput',
    type: 'string',
    default: 'data',
    hint: 'The binary property of the first result file; further files get _1, _2, ... after it',
    displayOptions: { show: { waitForCompletion: [true], downloadResult: [true] } },
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    options: [
      {
        displayName: 'Timeout (Minutes)',
        name: 'timeoutMinutes',
        type: 'number',
        default: 120,
        typeOptions: { minValue: 1 },
        description: 'How long to wait for the job before failing (the job itself goes on)',
      },
      {
        displayName: 'Webhook URL',
        name: 'webhookUrl',
        type: 'string',
        default: '',
        description: "A URL mediaflow POSTs the finished job to, such as a Wait node's {{ $execution.resumeUrl }}",
      },
      {
        displayName: 'Metadata',
        name: 'metadata',
        type: 'string',
        default: '',
        description: 'Text kept with the job and echoed in it and in its webhook',
      },
    ],
  },
];

/** Every property of the node, for a catalogue. */
export function nodeProperties(catalogue: Catalogue): INodeProperties[] {
  const entries = [...catalogue.entries];
  return [
    {
      displayName: 'Operation',
      name: 'operation',
      type: 'options',
      noDataExpression: true,
      options: entries.map(operationOption).sort((a, b) => a.name.localeCompare(b.name)),
      // The rule wants a literal it can check; the first entry of the generated list is one of the options.
      // eslint-disable-next-line n8n-nodes-base/node-param-default-wrong-for-options
      default: operationValue(entries[0]!),
    },
    ...entries.flatMap(entryProperties),
    ...RUN_PROPERTIES,
  ];
}
