import { Command, Option } from 'commander';
import { loadConfig, SETTINGS, type Config } from '../engine/config.js';
import { fail } from './fail.js';
import { flagKey } from './flag-key.js';

/** Reads a command's flags into configuration overrides, one per setting. */
export function overridesOf(flags: Record<string, string | boolean>): Partial<Record<keyof Config, string | boolean>> {
  const overrides: Partial<Record<keyof Config, string | boolean>> = {};
  for (const setting of SETTINGS) {
    const value = flags[flagKey(setting.flag)];
    if (value !== undefined) overrides[setting.key] = value;
  }
  return overrides;
}

/** Adds a flag per setting (less `skip`), each naming its environment variable. */
export function addSettingFlags(command: Command, skip: ReadonlySet<keyof Config> = new Set()): Command {
  for (const setting of SETTINGS) {
    if (skip.has(setting.key)) continue;
    const flag = setting.kind.switch ? `--${setting.flag}` : `--${setting.flag} <value>`;
    command.addOption(new Option(flag, `${setting.help} [env ${setting.env}]`));
  }
  return command;
}

/**
 * A command that starts a long-running process (`serve`, `worker`, `mcp`): a flag per setting (less `skip`), the
 * configuration read from the environment and those flags, then `start`; a failure to start is told as the CLI's.
 */
export function settingsCommand(
  description: string,
  start: (config: Config) => Promise<void>,
  skip: ReadonlySet<keyof Config> = new Set(),
): Command {
  const command = addSettingFlags(new Command().description(description), skip);
  command.action(async (flags: Record<string, string | boolean>) => {
    try {
      await start(loadConfig(process.env, overridesOf(flags)));
    } catch (error) {
      fail(error);
    }
  });
  return command;
}
