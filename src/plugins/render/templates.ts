import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MediaflowError, paramError } from '../../sdk.js';
import { templateInfo, type TemplateInfo } from './template-fields.js';

// The list's shape, with the list (the CLI prints it).
export type { TemplateInfo } from './template-fields.js';

/**
 * Render templates: edit documents with merge fields, one `<name>.json` each in the templates folder
 * (MEDIAFLOW_TEMPLATES, by default the `templates/` shipped with mediaflow). A request names one in `template`
 * instead of sending `edit`. They are read when a request names one (a file of a few kilobytes, read whole), so a
 * template added or changed is used without a restart.
 */

/** A template's name, which is its file's name without `.json`. */
export const TEMPLATE_NAME = '^[a-z0-9][a-z0-9-]{0,63}$';

/** The templates in a folder, by name, in order; none when the folder is missing. */
export function templateNames(dir: string): string[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  const pattern = new RegExp(TEMPLATE_NAME);
  return files
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .filter((name) => pattern.test(name))
    .sort();
}

/**
 * The document of template `name`: a 400 naming it and the known ones when there is no such template; a 500 when
 * its file is not a JSON object (the server's own file: its text is for the log, not the client).
 */
export function loadTemplate(dir: string, name: string): Record<string, unknown> {
  const known = templateNames(dir);
  if (!known.includes(name)) {
    const which = known.length > 0 ? `the templates are ${known.join(', ')}` : 'this server has no templates';
    throw paramError(`Unknown template '${name}': ${which}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8'));
  } catch (error) {
    throw new MediaflowError('MF_ERR_INTERNAL', `Template '${name}' cannot be read`, { cause: error });
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new MediaflowError('MF_ERR_INTERNAL', `Template '${name}' is not a JSON object`);
  return document as Record<string, unknown>;
}

/** Every template of a folder as the list of templates shows it; one that cannot be read is left out. */
export const listTemplates = (dir: string): TemplateInfo[] =>
  templateNames(dir).flatMap((name) => {
    try {
      return [templateInfo(name, loadTemplate(dir, name))];
    } catch {
      return [];
    }
  });
