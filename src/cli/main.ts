import { Command, CommanderError, Option } from 'commander';
import {
  DOCUMENT_KEYWORD,
  inputSpecOf,
  paramMarked,
  VALUES_KEYWORD,
  type PluginDefinition,
} from '../engine/contract/plugin.js';
import type { Registry } from '../engine/plugins/registry.js';
import { CLI_COMMANDS, dashed, type CliCommand } from '../engine/plugins/reserved.js';
import { commandRegistry } from './command-registry.js';
import { fail } from './fail.js';
import { fontsCommand } from './fonts-command.js';
import { mcpCommand } from './mcp-command.js';
import { modelsCommand } from './models-command.js';
import { pluginsCommand } from './plugins-command.js';
import { quickstartCommand } from './quickstart-command.js';
import { runCommand } from './run-command.js';
import { settingsCommand } from './setting-flags.js';
import { templatesCommand } from './templates-command.js';
import { printVersions } from './versions.js';
import { voicesCommand } from './voices-command.js';
import { workerCommand } from './worker-command.js';

/** The text `--help` shows for one parameter: its description, choices and default. */
function describeParam(schema: Record<string, unknown>, required = false): string {
  const parts = [String(schema.description ?? '')];
  const spec = inputSpecOf(schema as never);
  const least = spec?.min && spec.min > 1 ? `, at least ${spec.min}` : '';
  if (spec) parts.push(spec.list ? `(URLs or local paths, comma-separated${least})` : '(URL or local path)');
  if (Array.isArray(schema.enum)) parts.push(`(choices: ${schema.enum.join(', ')})`);
  if (typeof schema.minimum === 'number') parts.push(`(${schema.minimum} to ${String(schema.maximum ?? '∞')})`);
  if (required && schema.default === undefined) parts.push('(required)');
  return parts.join(' ');
}

/** A subcommand for one operation, with flags generated from its schema. */
function operationCommand(plugin: PluginDefinition, registry: Registry): Command {
  const command = new Command(dashed(plugin.name))
    .summary(plugin.summary)
    .description(`${plugin.summary}.${plugin.description ? `\n\n${plugin.description}` : ''}`);
  // A document parameter (Param.document) is also the command's argument: a JSON file, or `-` for standard input.
  const document = paramMarked(plugin.params, DOCUMENT_KEYWORD);
  if (document)
    command.argument(
      `[${document}]`,
      `${describeParam(plugin.params.properties[document] as never)}: a JSON file, or - to read it from standard input`,
    );
  for (const [key, schema] of Object.entries(plugin.params.properties) as Array<[string, Record<string, unknown>]>) {
    // A boolean is a bare flag with its negation (`--mono`, `--no-mono`); `--mono false` still works.
    const boolean = schema.type === 'boolean';
    // Named values (Param.values) are one flag given once per value: `--merge TITLE="Episode 12"`.
    const values = Boolean(schema[VALUES_KEYWORD]);
    const valueForm = boolean ? '[true|false]' : values ? '<NAME=value>' : key === document ? '<json>' : '<value>';
    const option = new Option(
      `--${dashed(key)} ${valueForm}`,
      describeParam(schema, plugin.params.required?.includes(key)),
    );
    if (schema.default !== undefined) option.default(String(schema.default));
    if (values) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    command.addOption(option);
    if (boolean) command.addOption(new Option(`--no-${dashed(key)}`, `the same as --${dashed(key)} false`));
  }
  command
    .option('--out-dir <dir>', 'folder for the output (in a folder of its own, as the server lays it out)', '.')
    .option(
      '-o, --output <file>',
      "the file to write the result to, replacing any there; its extension must be the result's (instead of --out-dir)",
    )
    .option('--allow-private-urls', 'allow input URLs on loopback/private addresses')
    // The engine, the runtime and what they load come only when an operation runs, not for `--help`.
    .action(async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const [file] = command.processedArgs as Array<string | undefined>;
      await (await import('./run-operation.js')).runOperation(plugin, registry, command.opts(), file);
    });
  return command;
}

/** `mediaflow serve`, with a flag per setting of docs/configuration.md. */
function serveCommand(registry: Registry): Command {
  // Fastify and the job stack load only for `serve`.
  return settingsCommand('Start the HTTP server', async (config) =>
    (await import('../server/start.js')).startServer(config, registry),
  );
}

/**
 * The CLI's own commands, one per name of CLI_COMMANDS: the type admits no name without a command and no
 * command without a name, and each is named from the list, which plugin checks refuse as plugin names.
 */
const BUILT_IN_COMMANDS: { readonly [name in CliCommand]: (registry: Registry) => Command } = {
  serve: serveCommand,
  worker: workerCommand,
  mcp: mcpCommand,
  run: runCommand,
  plugins: pluginsCommand,
  fonts: fontsCommand,
  models: modelsCommand,
  voices: voicesCommand,
  templates: templatesCommand,
  quickstart: quickstartCommand,
};

/** The `mediaflow` program: its own commands, and a subcommand per registered operation. */
export function buildProgram(registry: Registry): Command {
  const program = new Command('mediaflow')
    .description('Media processing with ffmpeg: run operations from the command line, or serve them over HTTP.')
    .option('--version', 'print the versions of mediaflow, ffmpeg and ffprobe')
    .showHelpAfterError()
    // An unknown operation arrives here as an argument (its flags as unknown options): it is named
    // as an unknown command, not as an excess argument or one of its flags.
    .allowExcessArguments()
    .allowUnknownOption()
    .action(async (flags: { version?: boolean }, command: Command) => {
      const [first] = command.args;
      if (first?.startsWith('-'))
        return program.error(`error: unknown option '${first}'`, { exitCode: 2, code: 'commander.unknownOption' });
      if (first !== undefined)
        return program.error(`error: unknown command '${first}'`, { exitCode: 2, code: 'commander.unknownCommand' });
      if (!flags.version) return program.help();
      await printVersions();
    });
  for (const name of CLI_COMMANDS) program.addCommand(BUILT_IN_COMMANDS[name](registry).name(name));
  for (const plugin of registry.list()) program.addCommand(operationCommand(plugin, registry));
  // Every command takes --plugin; main() has read them all from argv before the commands were made.
  for (const command of [program, ...program.commands]) {
    if (!command.options.some((option) => option.long === '--plugin')) command.addOption(pluginOption());
  }
  // Commander's own errors (unknown option, missing value, ...) are usage errors: exit 2, like a bad
  // parameter, instead of commander's 1. It has printed them already.
  for (const command of [program, ...program.commands]) {
    command.exitOverride((error) => {
      throw error;
    });
  }
  return program;
}

/** `--plugin <module>`, repeatable: an operation plugin to load (package name or path). */
function pluginOption(): Option {
  return new Option(
    '--plugin <module>',
    'load an operation plugin: a package name or a path (repeatable) [env MEDIAFLOW_PLUGINS]',
  ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // Plugins load before commander builds the subcommands, so each plugin has its own, with --help.
  // A plugin that cannot load stops every command (and `serve` from starting), naming it.
  let registry: Registry;
  try {
    registry = await commandRegistry(argv.slice(2), process.cwd(), process.env);
  } catch (error) {
    process.stderr.write(`mediaflow: ${(error as Error)?.message ?? String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    await buildProgram(registry).parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
    else fail(error);
  }
}
