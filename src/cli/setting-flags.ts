import { Option, type Command } from 'commander';
import { SETTINGS, type Config } from '../engine/config.js';
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
    const flag = setting.kind === 'bool' ? `--${setting.flag}` : `--${setting.flag} <value>`;
    command.addOption(new Option(flag, `${setting.description} [env ${setting.env}]`));
  }
  return command;
}
