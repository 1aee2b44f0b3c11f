import type { Command } from 'commander';

/** Rows as aligned columns under a header (`mediaflow models`, `mediaflow voices`). */
export function columns(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** Makes commander's own errors in a command's subcommands exit 2, as main.ts does for the top-level commands. */
export function usageErrorsExitTwo(command: Command): Command {
  for (const sub of command.commands) {
    sub.exitOverride((error) => {
      throw error;
    });
  }
  return command;
}
