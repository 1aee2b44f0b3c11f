import path from 'node:path';
import { isUrl } from '../engine/run/job-run.js';
import { splitList } from '../engine/plugins/params.js';
import type { PipelineDefinition } from './definition.js';

/**
 * Input values with the local paths of `url` and `urls` inputs made absolute against `baseDir`
 * (URLs and other inputs unchanged): a batch file names files relative to its own folder, not to
 * wherever the command happens to run, and a row's key then names the files it really used.
 */
export function resolveLocalPaths(
  definition: PipelineDefinition,
  values: Record<string, unknown>,
  baseDir: string,
): Record<string, unknown> {
  const absolute = (item: string) => (isUrl(item) ? item : path.resolve(baseDir, item));
  const resolved = { ...values };
  for (const input of definition.inputs) {
    const value = values[input.name];
    if (input.type === 'url' && typeof value === 'string' && value.trim() !== '')
      resolved[input.name] = absolute(value.trim());
    if (input.type === 'urls' && (typeof value === 'string' || Array.isArray(value))) {
      resolved[input.name] = [value]
        .flat()
        .flatMap((item) => splitList(String(item)))
        .map(absolute);
    }
  }
  return resolved;
}
