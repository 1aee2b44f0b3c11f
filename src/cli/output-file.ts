import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { JobResult } from '../engine/run/engine.js';
import type { JobOptions } from '../engine/run/job-run.js';
import { paramError } from '../engine/errors.js';
import {
  FORMAT_KEYWORD,
  outputPaths,
  type OutputSpec,
  type PluginDefinition,
  type SingleOutput,
} from '../engine/contract/plugin.js';
import { dashed } from '../engine/plugins/reserved.js';
import { LocalOutputStore } from '../engine/storage/storage.js';
import type { CliServices } from '../runtime.js';
import { ensureWritableDir } from './out-dir.js';

/**
 * Refuses an `--output` name whose extension is not the result's: the content follows the
 * operation's format, so `out.mkv` holding an MP4 would mislead every player that trusts names.
 * Asked once the inputs are probed, before anything runs: an output may take the input's container.
 */
function checkName(plugin: PluginDefinition, file: string, output: OutputSpec): void {
  const files = outputPaths(output).length;
  if ('files' in output || files > 1) {
    throw paramError(
      files === 0
        ? `${plugin.name} writes no file: leave out \`--output\``
        : `\`--output\` names one file, and ${plugin.name} writes ${files} here: use \`--out-dir\``,
    );
  }
  const ext = path.extname(output.path);
  if (path.extname(file).toLowerCase() === ext.toLowerCase()) return;
  const format = Object.entries(plugin.params.properties).find(
    ([, schema]) => (schema as Record<string, unknown>)[FORMAT_KEYWORD],
  )?.[0];
  throw paramError(
    `Expected \`--output\` to end in ${ext}, the kind of file ${plugin.name} makes here, got ` +
      `\`${file}\`${format ? ` (--${dashed(format)} chooses another)` : ''}`,
  );
}

/**
 * Runs one operation and puts its one output file at exactly `file` (`--output`), replacing any file
 * there: the result is published in this run's work folder, then moved, so `file` appears whole
 * or not at all.
 */
export async function runToFile(
  { engine, workspaces }: CliServices,
  operation: string,
  raw: Record<string, unknown>,
  file: string,
  options: JobOptions,
): Promise<JobResult> {
  const plugin = engine.plugin(operation);
  if ((await stat(file).catch(() => undefined))?.isDirectory())
    throw paramError(`Cannot write to --output ${file}: it is a folder`);
  await ensureWritableDir(path.dirname(path.resolve(file)), '--output');
  const staging = new LocalOutputStore(workspaces.outputStagingDir());
  try {
    const result = await engine.run(operation, raw, {
      ...options,
      store: staging,
      checkOutput: (output) => checkName(plugin, file, output),
    });
    // checkName let only a single output through.
    const { field, path: published } = result.output as SingleOutput;
    await new LocalOutputStore(path.dirname(path.resolve(file))).publish(
      staging.locate(published),
      path.basename(file),
    );
    return { ...result, output: { field, path: file } };
  } finally {
    await workspaces.remove(staging.root);
  }
}
