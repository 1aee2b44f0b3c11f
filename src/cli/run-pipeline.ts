import path from 'node:path';
import { loadConfig, type Config } from '../engine/config.js';
import { anyLocalPath } from '../engine/run/job-run.js';
import { paramError } from '../engine/errors.js';
import type { Registry } from '../engine/plugins/registry.js';
import { LocalOutputStore } from '../engine/storage/storage.js';
import { runBatch, type BatchSummary } from '../pipelines/batch.js';
import { checkBatch } from '../pipelines/batch-check.js';
import { resolveLocalPaths } from '../pipelines/local-paths.js';
import { resolvePipeline } from '../pipelines/loader.js';
import { readRows } from '../pipelines/rows.js';
import { planPipeline, runPipeline, type PipelinePlan } from '../pipelines/runner.js';
import { formatBatchCheck } from './batch-plan.js';
import { hintFor } from './hints.js';
import { cliRuntime } from './cli-runtime.js';
import { fail } from './fail.js';
import { ensureWritableDir } from './out-dir.js';
import { createBatchReporter, createStepsReporter, formatDuration } from './progress.js';
import type { RunFlags } from './run-command.js';

/** `key=value` flags as input values; a key given more than once is a list (for `urls` inputs). */
export function parseInputFlags(flags: string[]): Record<string, string | string[]> {
  const inputs: Record<string, string | string[]> = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw paramError(`Expected --input key=value, got \`${flag}\``);
    const key = flag.slice(0, at).trim();
    const value = flag.slice(at + 1);
    const previous = inputs[key];
    inputs[key] = previous === undefined ? value : [previous, value].flat();
  }
  return inputs;
}

/** An argument as a shell would need it written. */
const shellQuote = (arg: string) => (/^[A-Za-z0-9_/.,:=+@%^-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);

/**
 * The plan `--dry-run` prints: stages in order, what runs at the same time, each step's in-process
 * work and ffmpeg argv.
 */
export function formatPlan(plan: PipelinePlan): string {
  const lines = [`Pipeline ${plan.pipeline}${plan.description ? `: ${plan.description.trim()}` : ''}`];
  lines.push('Inputs:');
  for (const [name, value] of Object.entries(plan.inputs))
    lines.push(`  ${name} = ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  plan.stages.forEach((stage, index) => {
    lines.push(`Stage ${index + 1}${stage.length > 1 ? ` (${stage.length} steps run at the same time)` : ''}:`);
    for (const step of stage) {
      const each = step.each ? `, once per item of ${step.each.over} (${step.each.items} items, at the same time)` : '';
      const after = step.after.length > 0 ? `, after ${step.after.join(', ')}` : '';
      lines.push(`  ${step.name}: ${step.op}${each}${after}`);
      for (const [key, value] of Object.entries(step.with)) lines.push(`    ${key}: ${value}`);
      if (step.skipped) {
        lines.push(`    does not run: ${step.skipped}`);
        continue;
      }
      if (!step.runs) {
        const names = step.after.map((name) => `'${name}'`);
        const which =
          names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)} have` : `${names[0]} has`;
        lines.push(`    argv: known once ${which} run (it is built from the probed facts of their outputs)`);
        continue;
      }
      for (const run of step.runs) {
        const prefix = run.item !== undefined ? `item ${run.item}: ` : '';
        for (const step of run.steps) lines.push(`    ${prefix}in process: ${step}`);
        if (run.commands.length === 0 && run.steps.length === 0)
          lines.push(`    ${prefix}no ffmpeg: the operation writes its output itself`);
        for (const command of run.commands) lines.push(`    ${prefix}${command.map(shellQuote).join(' ')}`);
      }
    }
  });
  lines.push(
    `Results: ${Object.entries(plan.results)
      .map(([name, from]) => `${name} = ${from}`)
      .join(', ')}`,
  );
  return `${lines.join('\n')}\n`;
}

/** The summary a batch ends with, on stderr. */
function formatSummary(summary: BatchSummary, ms: number): string {
  const lines = [
    `${summary.pipeline}: ${summary.rows} rows: ${summary.done} ` +
      `done${summary.skipped ? ` (${summary.skipped} by an earlier run)` : ''}, ${summary.failed} ` +
      `failed${summary.notRun ? `, ${summary.notRun} not run` : ''} in ${formatDuration(ms)}`,
  ];
  for (const failure of summary.failures) lines.push(`  row ${failure.row}: ${failure.error}`);
  const hint = summary.failures.map((failure) => hintFor(failure.error)).find(Boolean);
  if (hint) lines.push(hint);
  if (summary.interrupted) lines.push('Interrupted: run the same command again to continue.');
  else if (summary.failed > 0) lines.push('Run the same command again to retry the failed rows.');
  lines.push(`Results: ${summary.resultsFile}`);
  return `${lines.join('\n')}\n`;
}

/**
 * `mediaflow run <pipeline>` at work (run-command.ts loads this module only then): one run, a `--dry-run`, or a
 * `--batch`.
 */
export async function runPipelineCommand(reference: string, flags: RunFlags, registry: Registry): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    // The first Ctrl-C stops cleanly (running work cancelled, results file whole); a second one quits at once.
    if (++interrupts > 1) process.exit(130);
    process.stderr.write('\nmediaflow: stopping (Ctrl-C again to quit at once)\n');
    controller.abort(new DOMException('Interrupted', 'AbortError'));
  };
  process.on('SIGINT', onSigint);
  try {
    const overrides: Partial<Record<keyof Config, string | boolean>> = {};
    if (flags.allowPrivateUrls) overrides.allowPrivateUrls = true;
    if (flags.concurrency !== undefined) overrides.concurrency = flags.concurrency;
    if (flags.pipelinesDir !== undefined) overrides.pipelinesDir = flags.pipelinesDir;
    const config = loadConfig(process.env, overrides);
    if (flags.output !== undefined) {
      throw paramError(
        `\`--output\` names one file, but a pipeline names its results itself (its \`results\`); use ` +
          `--out-dir <dir>: each result goes to <dir>/<result>.<ext>`,
      );
    }
    const definition = await resolvePipeline(reference, config.pipelinesDir, registry);
    const inputs = parseInputFlags(flags.input ?? []);
    const outDir = flags.outDir;
    if (!flags.dryRun) await ensureWritableDir(outDir, '--out-dir');
    const { engine } = await cliRuntime(config, registry, outDir);

    if (flags.batch) {
      // A row's paths are relative to the batch file; --input's to the working directory, as everywhere.
      const shared = resolveLocalPaths(definition, inputs, process.cwd());
      const rows = (await readRows(flags.batch)).map((row) => ({
        ...row,
        values: {
          ...shared,
          ...resolveLocalPaths(definition, row.values, path.dirname(path.resolve(flags.batch!))),
        },
      }));
      const resultsFile =
        flags.results ?? path.join(outDir, `${path.basename(flags.batch, path.extname(flags.batch))}.results.jsonl`);
      if (flags.dryRun) {
        const checks = await checkBatch(definition, engine, {
          rows,
          outDir,
          resultsFile,
          localFiles: anyLocalPath,
        });
        process.stdout.write(
          flags.json ? `${JSON.stringify(checks, null, 2)}\n` : formatBatchCheck(definition.name, checks),
        );
        const invalid = checks.filter((check) => check.status === 'invalid');
        if (invalid.length > 0) {
          const rows = invalid.map((check) => `  row ${check.row} (line ${check.line}): ${check.error}\n`);
          process.stderr.write(`mediaflow: ${invalid.length} of ${checks.length} rows are invalid:\n${rows.join('')}`);
          process.exitCode = 2;
        }
        return;
      }
      const reporter = createBatchReporter(definition.name);
      const started = Date.now();
      let summary: BatchSummary;
      try {
        summary = await runBatch(definition, engine, {
          rows,
          outDir,
          resultsFile,
          concurrency: config.concurrency,
          localFiles: anyLocalPath,
          signal: controller.signal,
          onEvent: reporter.onEvent,
        });
      } finally {
        reporter.done();
      }
      process.stderr.write(formatSummary(summary, Date.now() - started));
      const { failures, ...counts } = summary;
      process.stdout.write(`${JSON.stringify({ ...counts, failures }, null, 2)}\n`);
      process.exitCode = summary.interrupted ? 130 : summary.failed > 0 ? 1 : 0;
      return;
    }

    if (flags.dryRun) {
      const plan = await planPipeline(definition, engine, {
        inputs,
        refuseUnknownInputs: true,
        localFiles: anyLocalPath,
        signal: controller.signal,
      });
      process.stdout.write(flags.json ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan));
      return;
    }

    const reporter = createStepsReporter(definition.name);
    try {
      const run = await runPipeline(definition, engine, {
        inputs,
        refuseUnknownInputs: true,
        localFiles: anyLocalPath,
        store: new LocalOutputStore(outDir),
        resultDir: '',
        signal: controller.signal,
        onEvent: reporter.onEvent,
      });
      const outputs = Object.fromEntries(
        Object.entries(run.outputs).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.map((v) => path.join(outDir, v)) : path.join(outDir, value),
        ]),
      );
      process.stdout.write(
        `${JSON.stringify(
          {
            message: `Pipeline ${definition.name} completed successfully`,
            outputs,
            ...(run.answers ? { answers: run.answers } : {}),
          },
          null,
          2,
        )}\n`,
      );
    } finally {
      reporter.done();
    }
  } catch (error) {
    fail(error);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
