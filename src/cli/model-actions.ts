import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadConfig, type Config } from '../engine/config.js';
import { paramError } from '../engine/errors.js';
import { formatBytes } from '../engine/inputs/fetcher.js';
import {
  ensureWhisperModel,
  isEnglishOnly,
  knownModel,
  listWhisperModels,
  modelPath,
  verifyWhisperModel,
  type ModelListing,
} from '../engine/speech/models.js';
import { fail } from './fail.js';
import type { ModelFlags } from './models-command.js';
import { columns } from './subcommands.js';

/** The settings `models` reads, from the environment and its flags. */
function modelConfig(flags: ModelFlags): Config {
  return loadConfig(process.env, {
    ...(flags.dataDir !== undefined && { dataDir: flags.dataDir }),
    ...(flags.whisperModelUrl !== undefined && { whisperModelUrl: flags.whisperModelUrl }),
    ...(flags.allowPrivateUrls && { allowPrivateUrls: true }),
  });
}

/** The known models as rows of `mediaflow models`' table. */
const table = (models: ModelListing[]): string =>
  columns(
    ['NAME', 'SIZE', 'LANGUAGES', 'PRESENT', 'PATH'],
    models.map((model) => [
      model.name,
      formatBytes(model.bytes),
      isEnglishOnly(model.name) ? 'English' : 'multilingual',
      model.present ? 'yes' : 'no',
      model.path,
    ]),
  );

/** `mediaflow models list`: the known models, as a table or JSON. */
export async function listModels(flags: { dataDir?: string; json?: boolean }): Promise<void> {
  try {
    const models = await listWhisperModels(modelConfig(flags).dataDir);
    process.stdout.write(flags.json ? `${JSON.stringify(models, null, 2)}\n` : `${table(models)}\n`);
  } catch (error) {
    fail(error);
  }
}

/** `mediaflow models fetch <name>`: a model fetched (or the one there checked in full), its path printed. */
export async function fetchModel(name: string, flags: ModelFlags): Promise<void> {
  const controller = new AbortController();
  const onSigint = () => controller.abort(new DOMException('Interrupted', 'AbortError'));
  process.once('SIGINT', onSigint);
  try {
    const config = modelConfig(flags);
    if (!knownModel(name)) throw paramError(`'${name}' is not a known model name: see \`mediaflow models\``);
    // A file already there is checked in full: `fetch` is also how a user makes sure of one.
    const file = modelPath(config.dataDir, name);
    const present = await verifyWhisperModel(name, config.dataDir).catch((error: unknown) => error as Error);
    if (present instanceof Error && existsSync(file)) {
      process.stderr.write(`mediaflow: ${present.message}: fetching it again\n`);
      await rm(file, { force: true });
    }
    const model =
      present instanceof Error
        ? await ensureWhisperModel(name, config, {
            signal: controller.signal,
            onFetch: (found, url) =>
              process.stderr.write(`mediaflow: fetching ${found.name} (${formatBytes(found.bytes)}) from ${url}\n`),
          })
        : present;
    process.stdout.write(`${model.path}\n`);
  } catch (error) {
    fail(error);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** `mediaflow models verify [model]`: a name, a file, or every fetched model checked against its SHA-256. */
export async function verifyModels(spec: string | undefined, flags: { dataDir?: string }): Promise<void> {
  try {
    const { dataDir } = modelConfig(flags);
    const specs = spec !== undefined ? [spec] : (await listWhisperModels(dataDir)).filter((m) => m.present);
    if (specs.length === 0) process.stderr.write('mediaflow: no model is fetched yet\n');
    for (const each of specs) {
      const verified = await verifyWhisperModel(typeof each === 'string' ? each : each.name, dataDir);
      const what = verified.name ? `${verified.name}, as published` : 'a ggml model, not one of the known models';
      process.stdout.write(`${verified.path}: OK (${what}), SHA-256 ${verified.sha256}\n`);
    }
  } catch (error) {
    fail(error);
  }
}
