import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { RowRecord } from './results-file.js';
import type { BatchRow } from './rows.js';

/** Identifies a row's work: the pipeline and the row's values, whatever their order. */
export function rowKey(pipeline: string, values: Record<string, unknown>): string {
  const sorted = Object.keys(values)
    .sort()
    .map((key) => [key, values[key]]);
  return createHash('sha256')
    .update(JSON.stringify([pipeline, sorted]))
    .digest('hex')
    .slice(0, 16);
}

/** A row of the batch with its key. */
export interface KeyedRow {
  row: number;
  values: Record<string, unknown>;
  key: string;
}

/** Which rows of a batch an earlier run has done already, matched by key, not by position. */
export interface ResumePlan {
  /** Rows done by an earlier run: each with that run's record (whose `row` may be another number). */
  done: Array<{ row: KeyedRow; record: RowRecord }>;
  /** Rows to run: new, changed, failed, unfinished, or with an output gone. */
  todo: KeyedRow[];
  /** Records no current row takes over: their files are no row's current outputs. */
  stale: RowRecord[];
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** Whether a file lies inside a folder (resolved), so that moving or deleting it stays in the batch's own outputs. */
export const inside = (dir: string, file: string): boolean =>
  path.resolve(file).startsWith(path.resolve(dir) + path.sep);

/**
 * Matches the rows to the records of an earlier run by key: a row whose values (and pipeline) an
 * earlier run finished, with all of that run's outputs still in `outDir`, is done wherever it
 * now stands in the file, so inserting or reordering rows redoes nothing. Rows with the same
 * values take one record each, the one of their own position first.
 */
export async function planResume(
  pipeline: string,
  rows: readonly BatchRow[],
  previous: ReadonlyMap<number, RowRecord>,
  outDir: string,
): Promise<ResumePlan> {
  const usable = new Map<string, RowRecord[]>();
  for (const record of previous.values()) {
    if (record.status !== 'done') continue;
    const files = Object.values(record.outputs).flat();
    if (!files.every((file) => inside(outDir, file)) || !(await Promise.all(files.map(exists))).every(Boolean))
      continue;
    usable.set(record.key, [...(usable.get(record.key) ?? []), record]);
  }
  const plan: ResumePlan = { done: [], todo: [], stale: [] };
  const taken = new Set<RowRecord>();
  for (const { row, values } of rows) {
    const keyed = { row, values, key: rowKey(pipeline, values) };
    const candidates = (usable.get(keyed.key) ?? []).filter((record) => !taken.has(record));
    const record = candidates.find((candidate) => candidate.row === row) ?? candidates[0];
    if (record) {
      taken.add(record);
      plan.done.push({ row: keyed, record });
    } else plan.todo.push(keyed);
  }
  plan.stale = [...previous.values()].filter((record) => !taken.has(record));
  return plan;
}
