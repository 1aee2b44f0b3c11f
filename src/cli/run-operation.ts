import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../engine/config.js';
import { paramError } from '../engine/errors.js';
import { anyLocalPath } from '../engine/run/job-run.js';
import { answerFiles, DOCUMENT_KEYWORD, paramMarked, type PluginDefinition } from '../engine/contract/plugin.js';
import type { Registry } from '../engine/plugins/registry.js';
import { dashed } from '../engine/plugins/reserved.js';
import { cliRuntime } from './cli-runtime.js';
import { fail } from './fail.js';
import { flagKey } from './flag-key.js';
import { ensureWritableDir } from './out-dir.js';
import { runToFile } from './output-file.js';
import { createProgressReporter } from './progress.js';

/** The text of a document argument: a file's, or standard input's for `-`. */
async function readDocument(file: string): Promise<string> {
  if (file !== '-') {
    return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw paramError(`Cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.code}`);
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An operation's subcommand at work (main.ts loads this module only then): the flags read as its parameters, the
 * operation run, and its answer printed as JSON.
 */
export async function runOperation(
  plugin: PluginDefinition,
  registry: Registry,
  flags: Record<string, string | boolean>,
  /** The command's argument: the document parameter's file (Param.document), or `-` for standard input. */
  file?: string,
): Promise<void> {
  const document = paramMarked(plugin.params, DOCUMENT_KEYWORD);
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(plugin.params.properties)) {
    const value = flags[flagKey(dashed(key))];
    if (value !== undefined) raw[key] = value;
  }
  const outDir = String(flags.outDir);
  const output = typeof flags.output === 'string' ? flags.output : undefined;
  const controller = new AbortController();
  const onSigint = () => controller.abort(new DOMException('Interrupted', 'AbortError'));
  process.once('SIGINT', onSigint);
  const progress = createProgressReporter(plugin.name);
  try {
    if (document && file !== undefined) {
      if (raw[document] !== undefined)
        throw paramError(`Give \`${document}\` once: as the argument (a file) or as --${dashed(document)}`);
      raw[document] = await readDocument(file);
    }
    const config = loadConfig(process.env, flags.allowPrivateUrls ? { allowPrivateUrls: true } : {});
    if (output === undefined) await ensureWritableDir(outDir, '--out-dir');
    const cli = await cliRuntime(config, registry, outDir);
    const options = { localFiles: anyLocalPath, signal: controller.signal, onProgress: progress.update };
    const result =
      output === undefined
        ? await cli.engine.run(plugin.name, raw, options)
        : await runToFile(cli, plugin.name, raw, output, options);
    progress.done();
    // Characters drawn as empty boxes, say: the job succeeded, but the user should know.
    for (const warning of result.warnings ?? []) process.stderr.write(`mediaflow: warning: ${warning}\n`);
    // With `--output` the one file is there; otherwise each is under --out-dir.
    const where = (file: string) => output ?? path.join(outDir, file);
    const printed = { message: result.message, ...answerFiles(result.output, where), ...result.answers };
    process.stdout.write(`${JSON.stringify(printed, null, 2)}\n`);
  } catch (error) {
    progress.done();
    fail(error);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
