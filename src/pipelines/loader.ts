import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { MediaflowError, paramError } from '../engine/errors.js';
import type { Registry } from '../engine/plugins/registry.js';
import { parsePipeline, PipelineDefinitionError, type PipelineDefinition } from './definition.js';

/** File endings a pipeline definition may have, in the order they are looked for. */
export const PIPELINE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

/** A pipeline's name as a URL segment or CLI argument: no dots or slashes, so it never leaves the folder. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Reads and checks the definition in one file; errors name it as `label`. */
export async function loadPipelineFile(file: string, registry: Registry, label = file): Promise<PipelineDefinition> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw paramError(`Pipeline file not found or not readable: ${label}`);
  }
  return parsePipeline(text, label, registry);
}

/** The definition file of a pipeline name in `dir`, if there is one. */
async function fileOf(dir: string, name: string): Promise<string | undefined> {
  if (!NAME.test(name)) return undefined;
  const entries = await readdir(dir).catch(() => [] as string[]);
  for (const ext of PIPELINE_EXTENSIONS) if (entries.includes(`${name}${ext}`)) return `${name}${ext}`;
  return undefined;
}

/**
 * Loads a pipeline by name from the pipelines folder (a 404 when there is none). Errors name the
 * file by its name in the folder, never by its path on the disk. A definition's `name` must be its
 * file's, so the route and the definition agree.
 */
export async function loadPipelineByName(dir: string, name: string, registry: Registry): Promise<PipelineDefinition> {
  const file = await fileOf(dir, name);
  if (!file) throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown pipeline '${name}'`);
  const definition = await loadPipelineFile(path.join(dir, file), registry, file);
  if (definition.name !== name) {
    throw new PipelineDefinitionError([
      { file, field: 'name', message: `the name '${definition.name}' differs from the file's name '${name}'` },
    ]);
  }
  return definition;
}

/**
 * What `mediaflow run <pipeline>` names: a definition file (a path that exists, or one ending in
 * .yaml/.yml/.json), else a pipeline in the pipelines folder.
 */
export async function resolvePipeline(reference: string, dir: string, registry: Registry): Promise<PipelineDefinition> {
  const looksLikeFile =
    reference.includes('/') ||
    reference.includes(path.sep) ||
    PIPELINE_EXTENSIONS.some((ext) => reference.endsWith(ext));
  if (looksLikeFile) return loadPipelineFile(reference, registry);
  try {
    return await loadPipelineByName(dir, reference, registry);
  } catch (error) {
    if (error instanceof MediaflowError && error.code === 'MF_ERR_NOT_FOUND') {
      throw new MediaflowError(
        'MF_ERR_NOT_FOUND',
        `Unknown pipeline '${reference}': no ${reference}.yaml, .yml or .json in ${dir}, and no such file`,
      );
    }
    throw error;
  }
}

/** Every pipeline in the folder, each loaded or with the reason it cannot be. */
export async function listPipelines(
  dir: string,
  registry: Registry,
): Promise<Array<{ name: string; definition?: PipelineDefinition; error?: string }>> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  const names = [
    ...new Set(
      entries
        .filter((entry) => PIPELINE_EXTENSIONS.some((ext) => entry.endsWith(ext)))
        .map((entry) => entry.replace(/\.(yaml|yml|json)$/, '')),
    ),
  ]
    .filter((name) => NAME.test(name))
    .sort();
  return Promise.all(
    names.map(async (name) => {
      try {
        return { name, definition: await loadPipelineByName(dir, name, registry) };
      } catch (error) {
        return { name, error: (error as Error).message };
      }
    }),
  );
}
