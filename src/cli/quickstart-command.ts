import { Command } from 'commander';
import type { Registry } from '../engine/plugins/registry.js';

/**
 * `mediaflow quickstart`: a first run that needs no internet. It makes sample media with ffmpeg,
 * runs the ten operations of the endpoint table on it through the same engine as the server, and prints where
 * each result is.
 */
export function quickstartCommand(registry: Registry): Command {
  return (
    new Command()
      .description(
        'Make sample media with ffmpeg, run the ten operations of the endpoint table on it (no internet needed), ' +
          'and print where the results are',
      )
      .option('--out-dir <dir>', 'folder for the samples and the results', 'mediaflow-quickstart')
      // ffmpeg's runs, the engine and the runtime load only when the command runs.
      .action(async (flags: { outDir: string }) =>
        (await import('./run-quickstart.js')).runQuickstart(flags.outDir, registry),
      )
  );
}
