import path from 'node:path';
import type { Engine } from '../engine/run/engine.js';
import type { LocalFilePolicy } from '../engine/run/job-run.js';
import { MediaflowError } from '../engine/errors.js';
import { checkColumns } from './batch.js';
import type { PipelineDefinition } from './definition.js';
import type { InputValue } from './inputs.js';
import { readResults } from './results-file.js';
import { planResume } from './resume.js';
import { rowFolderName } from './row-folders.js';
import type { BatchRow } from './rows.js';
import { checkRun } from './runner.js';

/** What a batch's dry run says of one row. */
export interface RowCheck {
  row: number;
  /** The line of the batch file the row starts on. */
  line: number;
  /**
   * `run`: it would run; `done`: an earlier run did it and it would be skipped; `invalid`: it would fail its checks.
   */
  status: 'run' | 'done' | 'invalid';
  /** The input values as read (absent for an invalid row). */
  inputs?: Record<string, InputValue>;
  /** The files the row's run would publish. */
  outputs?: string[];
  error?: string;
}

/**
 * Checks every row of a batch as its run would before starting (input values, every step's
 * parameters, URLs against the address policy, that local files can be read), without fetching
 * or running anything, and says which rows a run would skip as done.
 */
export async function checkBatch(
  definition: PipelineDefinition,
  engine: Engine,
  options: { rows: BatchRow[]; outDir: string; resultsFile: string; localFiles?: LocalFilePolicy },
): Promise<RowCheck[]> {
  checkColumns(definition, options.rows, 'batch');
  const plan = await planResume(definition.name, options.rows, await readResults(options.resultsFile), options.outDir);
  const done = new Set(plan.done.map(({ row }) => row.row));
  const checks: RowCheck[] = [];
  for (const { row, line, values } of options.rows) {
    try {
      const { inputs, results } = await checkRun(definition, engine, {
        inputs: values,
        ...(options.localFiles ? { localFiles: options.localFiles } : {}),
      });
      const outputs = results.map((name) => path.join(options.outDir, rowFolderName(row), name));
      checks.push({ row, line, status: done.has(row) ? 'done' : 'run', inputs, outputs });
    } catch (error) {
      if (!(error instanceof MediaflowError)) throw error;
      checks.push({ row, line, status: 'invalid', error: error.message });
    }
  }
  return checks;
}
