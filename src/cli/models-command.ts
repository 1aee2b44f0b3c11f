import { Command, Option } from 'commander';
import { usageErrorsExitTwo } from './subcommands.js';

/** The flags of `models`, `fetch` the most of them. */
export interface ModelFlags {
  dataDir?: string;
  whisperModelUrl?: string;
  allowPrivateUrls?: boolean;
}

/** What the subcommands do, loaded only when one runs: the model table, files and downloads. */
const actions = () => import('./model-actions.js');

const dataDirOption = () =>
  new Option('--data-dir <dir>', 'where models are kept, in <dir>/models [env MEDIAFLOW_DATA_DIR]');

function listCommand(): Command {
  return new Command('list')
    .summary('List the known models, their sizes, and which are fetched (the default)')
    .addOption(dataDirOption())
    .addOption(new Option('--json', 'print the list as JSON'))
    .action(async (flags: { dataDir?: string; json?: boolean }) => (await actions()).listModels(flags));
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
    .action(async (name: string, flags: ModelFlags) => (await actions()).fetchModel(name, flags));
}

function verifyCommand(): Command {
  return new Command('verify')
    .summary("Re-check models' SHA-256: a name, a model file, or every fetched model")
    .argument('[model]', 'a known model name or a path to a ggml model file (default: every fetched model)')
    .addOption(dataDirOption())
    .action(async (spec: string | undefined, flags: { dataDir?: string }) =>
      (await actions()).verifyModels(spec, flags),
    );
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
