import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Command, Option } from 'commander';
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
import { columns, usageErrorsExitTwo } from './subcommands.js';

/** The settings `models` reads, from the environment and its flags. */
function modelConfig(flags: { dataDir?: string; whisperModelUrl?: string; allowPrivateUrls?: boolean }): Config {
  return loadConfig(process.env, {
    ...(flags.dataDir !== undefined && { dataDir: flags.dataDir }),
    ...(flags.whisperModelUrl !== undefined && { whisperModelUrl: flags.whisperModelUrl }),
    ...(flags.allowPrivateUrls && { allowPrivateUrls: true }),
  });
}

const dataDirOption = () =>
  new Option('--data-dir <dir>', 'where models are kept, in <dir>/models [env MEDIAFLOW_DATA_DIR]');

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

function listCommand(): Command {
  return new Command('list')
    .summary('List the known models, their sizes, and which are fetched (the default)')
    .addOption(dataDirOption())
    .addOption(new Option('--json', 'print the list as JSON'))
    .action(async (flags: { dataDir?: string; json?: boolean }) => {
      try {
        const models = await listWhisperModels(modelConfig(flags).dataDir);
        process.stdout.write(flags.json ? `${JSON.stringify(models, null, 2)}\n` : `${table(models)}\n`);
      } catch (error) {
        fail(error);
      }
    });
}

function fetchCommand(): Command {
  return new Command('fetch')
    .summary('Fetch a model by name and check its SHA-256; print its path')
    .argument('<name>', 'a known model name (tiny.en, base, large-v3-turbo, ...)')
    .addOption(dataDirOption())
    .addOption(
      new Option(
        '--whisper-model-url <url>',
        'where names are fetched from, as <url>/ggml-<name>.bin [env MEDIAFLOW_WHISPER_MODEL_URL]',
      ),
    )
    .option('--allow-private-urls', 'allow a model URL on a loopback/private address')
    .action(async (name: string, flags: { dataDir?: string; whisperModelUrl?: string; allowPrivateUrls?: boolean }) => {
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
    });
}

function verifyCommand(): Command {
  return new Command('verify')
    .summary("Re-check models' SHA-256: a name, a model file, or every fetched model")
    .argument('[model]', 'a known model name or a path to a ggml model file (default: every fetched model)')
    .addOption(dataDirOption())
    .action(async (spec: string | undefined, flags: { dataDir?: string }) => {
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
    });
}

/** `mediaflow models`: the whisper models names stand for; `fetch` and `verify` them. */
export function modelsCommand(): Command {
  const command = new Command()
    .summary('List, fetch and verify the whisper models that transcription uses')
    .description(
      'The whisper.cpp models a name stands for (tiny.en, base, large-v3-turbo, ...): their sizes, and which are ' +
        'fetched into <data-dir>/models. A name is fetched once, from MEDIAFLOW_WHISPER_MODEL_URL, and kept only ' +
        'when its SHA-256 is the published one.\n\n' +
        'Examples:\n' +
        '  mediaflow models\n' +
        '  mediaflow models fetch base.en\n' +
        '  mediaflow models verify\n' +
        '  mediaflow models verify ./my-model.bin',
    )
    .addCommand(listCommand(), { isDefault: true })
    .addCommand(fetchCommand())
    .addCommand(verifyCommand());
  return usageErrorsExitTwo(command);
}
