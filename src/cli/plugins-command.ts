import { Command, Option } from 'commander';
import type { Registry } from '../engine/plugins/registry.js';
import { dashed } from '../engine/plugins/reserved.js';
import { VERSION } from '../engine/version.js';

/** One row of `mediaflow plugins`. */
export interface PluginRow {
  name: string;
  command: string;
  version: string;
  source: string;
  route: string;
  summary: string;
}

/** The loaded operations, built-ins first, with where each came from. */
function pluginRows(registry: Registry): PluginRow[] {
  return registry.list().map((plugin) => {
    const info = registry.infoOf(plugin.name);
    const source = info?.source ?? 'built-in';
    return {
      name: plugin.name,
      command: dashed(plugin.name),
      version: info?.version ?? (source === 'built-in' ? VERSION : '-'),
      source,
      route: plugin.path,
      summary: plugin.summary,
    };
  });
}

/** Rows as aligned columns under a header. */
function table(rows: PluginRow[]): string {
  const columns = ['name', 'version', 'source', 'route'] as const;
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [
    line(columns.map((column) => column.toUpperCase())),
    ...rows.map((row) => line(columns.map((column) => row[column]))),
  ].join('\n');
}

/** `mediaflow plugins`: the operations loaded (built-in and third-party), their versions and sources. */
export function pluginsCommand(registry: Registry): Command {
  return new Command()
    .summary('List the loaded operation plugins with their versions and sources')
    .description(
      'List the loaded operation plugins: the built-ins, ' +
        'then those of mediaflow.config.{js,mjs,json}, MEDIAFLOW_PLUGINS and --plugin, ' +
        'with their versions, where each came from, and their HTTP routes.\n\n' +
        'Examples:\n' +
        '  mediaflow plugins\n' +
        '  MEDIAFLOW_PLUGINS=mediaflow-plugin-thumbnail mediaflow plugins --json\n' +
        '  mediaflow plugins --plugin ./my-plugin.js',
    )
    .addOption(new Option('--json', 'print the list as JSON'))
    .action((flags: { json?: boolean }) => {
      const rows = pluginRows(registry);
      process.stdout.write(flags.json ? `${JSON.stringify(rows, null, 2)}\n` : `${table(rows)}\n`);
    });
}
