import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Engine } from '../engine/run/engine.js';
import type { LocalFilePolicy } from '../engine/run/job-run.js';
import { paramError } from '../engine/errors.js';
import { LocalOutputStore } from '../engine/storage/storage.js';
import type { PipelineDefinition } from './definition.js';
import { readResults, ResultsWriter, type RowRecord } from './results-file.js';
import { planResume, type KeyedRow } from './resume.js';
import { arrangeRowFolders, rowFolderName } from './row-folders.js';
import type { BatchRow } from './rows.js';
import { runPipeline } from './runner.js';

/** What a batch tells its progress display. */
export type BatchEvent =
  | { type: 'begin'; total: number; skipped: number; toRun: number }
  | { type: 'row-start'; row: number }
  | { type: 'row-end'; record: RowRecord };

export interface BatchOptions {
  rows: BatchRow[];
  /** Outputs go to `<outDir>/row-<n>/<result>.<ext>`. */
  outDir: string;
  /** The JSONL results file: read to resume, then appended to as rows end. */
  resultsFile: string;
  /** Rows run at once; their steps share the engine's queue. */
  concurrency: number;
  localFiles?: LocalFilePolicy;
  /** Stops the batch: no new rows start, running ones are cancelled and left unrecorded (so they run next time). */
  signal?: AbortSignal;
  onEvent?: (event: BatchEvent) => void;
}

export interface BatchSummary {
  pipeline: string;
  rows: number;
  /** Rows done, counting those done by an earlier run. */
  done: number;
  failed: number;
  /** Rows an earlier run had done, not run again. */
  skipped: number;
  /** Rows not run because the batch was stopped. */
  notRun: number;
  interrupted: boolean;
  resultsFile: string;
  failures: Array<{ row: number; error: string }>;
}

/** Refuses a batch that cannot give some required input to any row: every row would fail the same way. */
export function checkColumns(definition: PipelineDefinition, rows: BatchRow[], label: string): void {
  if (rows.length === 0) return;
  for (const input of definition.inputs) {
    if (input.default !== undefined) continue;
    if (!rows.some((row) => row.values[input.name] !== undefined)) {
      throw paramError(`${label}: no column '${input.name}', a required input of pipeline '${definition.name}'`);
    }
  }
}

/**
 * Runs a pipeline once per row, `concurrency` rows at a time. A failed row is recorded with its
 * error and the batch goes on. Each ended row is appended to the results file at once, so an
 * interrupted batch loses only the rows that were running; run again, it skips the rows done
 * (matched by key, wherever they now stand) and retries the others.
 */
export async function runBatch(
  definition: PipelineDefinition,
  engine: Engine,
  options: BatchOptions,
): Promise<BatchSummary> {
  checkColumns(definition, options.rows, 'batch');
  const plan = await planResume(definition.name, options.rows, await readResults(options.resultsFile), options.outDir);
  const { todo } = plan;
  const skipped = plan.done.length;
  const folders = await arrangeRowFolders(options.outDir, plan);
  // Records of rows that will run again are dropped; they get new ones when they end.
  const writer = await ResultsWriter.open(options.resultsFile, folders.kept);
  await folders.finish();
  const store = new LocalOutputStore(options.outDir);
  const failures: BatchSummary['failures'] = [];
  let done = 0;
  let next = 0;
  options.onEvent?.({ type: 'begin', total: options.rows.length, skipped, toRun: todo.length });

  const runRow = async ({ row, values, key }: KeyedRow): Promise<void> => {
    const started = new Date();
    options.onEvent?.({ type: 'row-start', row });
    let record: RowRecord;
    const timings = () => ({
      started: started.toISOString(),
      ended: new Date().toISOString(),
      ms: Date.now() - started.getTime(),
    });
    try {
      const run = await runPipeline(definition, engine, {
        inputs: values,
        ...(options.localFiles ? { localFiles: options.localFiles } : {}),
        store,
        resultDir: rowFolderName(row),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const outputs = Object.fromEntries(
        Object.entries(run.outputs).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.map((v) => path.join(options.outDir, v)) : path.join(options.outDir, value),
        ]),
      );
      record = {
        row,
        key,
        status: 'done',
        inputs: values,
        outputs,
        error: null,
        timings: { ...timings(), steps: run.timings.steps },
      };
      done++;
    } catch (error) {
      // Results published before the failure are not the row's results.
      await rm(path.join(options.outDir, rowFolderName(row)), { recursive: true, force: true });
      // A cancelled row is left unrecorded: it has not failed, it runs next time.
      if (options.signal?.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      record = {
        row,
        key,
        status: 'failed',
        inputs: values,
        outputs: {},
        error: message,
        timings: { ...timings(), steps: {} },
      };
      failures.push({ row, error: message });
    }
    await writer.append(record);
    options.onEvent?.({ type: 'row-end', record });
  };

  const worker = async () => {
    while (next < todo.length && !options.signal?.aborted) await runRow(todo[next++]!);
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, todo.length)) }, worker));
  } finally {
    await writer.close();
  }
  const interrupted = Boolean(options.signal?.aborted);
  return {
    pipeline: definition.name,
    rows: options.rows.length,
    done: done + skipped,
    failed: failures.length,
    skipped,
    notRun: options.rows.length - done - skipped - failures.length,
    interrupted,
    resultsFile: options.resultsFile,
    failures: failures.sort((a, b) => a.row - b.row),
  };
}
