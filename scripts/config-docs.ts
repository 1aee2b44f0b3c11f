// docs/configuration.md's table of settings, made from the settings table (src/engine/config-table.ts):
// `npm run docs:config` writes it between the page's markers, and test/docs.test.ts fails when the page and the
// table differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Kind } from '../src/engine/config-kinds.js';
import { SETTINGS, type KeyedSetting } from '../src/engine/config.js';

const START = '<!-- settings: made from src/engine/config-table.ts by `npm run docs:config` -->';
const END = '<!-- end of settings -->';

/** A setting's default as the docs say it: its own words, else the value as a user would write it. */
function shownDefault(setting: KeyedSetting): string {
  if (setting.shown !== undefined) return setting.shown;
  return setting.default === undefined ? 'unset' : (setting.kind as Kind<unknown>).show(setting.default);
}

/** The table: one row per setting, in the table's order. */
export function settingsTable(): string {
  const rows = SETTINGS.map(
    (setting) =>
      `| \`${setting.env}\` | \`--${setting.flag}\` | ${shownDefault(setting)} | ${setting.doc ?? setting.help} |`,
  );
  return ['| variable | flag | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** docs/configuration.md with its table made anew. */
export function withSettingsTable(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error('docs/configuration.md has no settings markers');
  return `${page.slice(0, start + START.length)}\n\n${settingsTable()}\n\n${page.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = path.resolve(import.meta.dirname, '../docs/configuration.md');
  writeFileSync(file, withSettingsTable(readFileSync(file, 'utf8')));
}
