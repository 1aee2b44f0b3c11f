import { Command, Option } from 'commander';
import type { Registry } from '../engine/plugins/registry.js';

/** The flags of `mediaflow run`. */
export interface RunFlags {
  input?: string[];
  outDir: string;
  output?: string;
  dryRun?: boolean;
  json?: boolean;
  batch?: string;
  results?: string;
  concurrency?: string;
  pipelinesDir?: string;
  allowPrivateUrls?: boolean;
}

/** `mediaflow run <pipeline>`: one run, a `--dry-run`, or a `--batch` of rows. */
export function runCommand(registry: Registry): Command {
  return (
    new Command()
      .summary('Run a pipeline: once, as a dry run, or once per row of a CSV/JSONL file')
      .description(
        'Run a pipeline (a name from the pipelines folder, or a .yaml/.json file). Inputs are URLs, local paths ' +
          'or values.',
      )
      .addHelpText(
        'after',
        [
          '',
          'Examples:',
          '  mediaflow run text-to-short --input text="Hello there." --input images=a.jpg,b.jpg --input ' +
            'voice=voice.mp3 --out-dir out/',
          '  mediaflow run text-to-short --dry-run --input ...      # the plan: stages and ffmpeg argv, nothing run',
          '  mediaflow run podcast --batch episodes.csv --out-dir out/   # one run per row; run again to resume',
          '  mediaflow run podcast --batch episodes.csv --dry-run        # check every row; nothing fetched, ' +
            'run or written',
          '',
          'See docs/pipelines.md for the definition format.',
        ].join('\n'),
      )
      .argument('<pipeline>', 'pipeline name or definition file')
      .option(
        '--input <key=value>',
        'a pipeline input; repeat for more (a key given twice makes a list)',
        (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
      )
      .option('--out-dir <dir>', 'folder for the results', '.')
      .option('-o, --output <file>', 'refused: a pipeline names its results itself; use --out-dir')
      .option(
        '--dry-run',
        'print the plan (stages, what runs in parallel, ffmpeg argv) without running it; with --batch, check ' +
          'every row and print what each would do',
      )
      .option('--json', 'with --dry-run: print the plan as JSON')
      .addOption(
        new Option(
          '--batch <file>',
          'run once per row of a CSV (header row: input names) or JSONL file; relative paths in it are relative ' +
            'to its folder',
        ),
      )
      .option(
        '--results <file>',
        'with --batch: the results file (default <out-dir>/<batch file name without extension>.results.jsonl)',
      )
      .option('--concurrency <n>', 'ffmpeg jobs at once, and rows at once in a batch [env MEDIAFLOW_CONCURRENCY]')
      .option('--pipelines-dir <dir>', 'folder of pipeline definitions [env MEDIAFLOW_PIPELINES_DIR]')
      .option('--allow-private-urls', 'allow input URLs on loopback/private addresses')
      // The pipelines, the engine and the runtime load only when the command runs.
      .action(async (reference: string, flags: RunFlags) =>
        (await import('./run-pipeline.js')).runPipelineCommand(reference, flags, registry),
      )
  );
}
