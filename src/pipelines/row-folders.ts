import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { RowRecord } from './results-file.js';
import { inside, type ResumePlan } from './resume.js';

/** The name of row `n`'s results folder, inside the batch's output folder. */
export const rowFolderName = (row: number): string => `row-${row}`;

const rowFolder = (outDir: string, row: number): string => path.join(outDir, rowFolderName(row));

/** Where files of rows that change number wait between their old folder and their new one. */
const stagingOf = (outDir: string) => path.join(outDir, '.mediaflow-moving');

/** The rows an earlier run did, as records for their current numbers, and how to put their files there. */
export interface RowFolders {
  kept: RowRecord[];
  /** Moves the files of renumbered rows into their new folders: call once `kept` is in the results file. */
  finish: () => Promise<void>;
}

/**
 * Makes each row's folder hold only its current outputs before a batch runs. Rows done earlier
 * keep their files, moved to `row-<n>` when their number changed; the folders of rows that run
 * are emptied (a failed or changed row's old files would look like results); files of records no
 * row takes over are deleted. Only files inside `outDir` are ever moved or deleted.
 *
 * The order keeps the results file truthful if the process is killed half-way: renumbered files
 * first leave their old folders, the folders are cleared, the caller records the new paths, and
 * only then do files arrive there. A record can point to a missing file (the row runs again),
 * never to another row's file.
 */
export async function arrangeRowFolders(outDir: string, plan: ResumePlan): Promise<RowFolders> {
  const staging = stagingOf(outDir);
  // Files a killed run left here are no row's any more: their records pointed to the old folders.
  await rm(staging, { recursive: true, force: true });
  const kept: RowRecord[] = [];
  const moves: Array<{ from: string; to: string }> = [];
  const renumbered: number[] = [];
  for (const { row, record } of plan.done) {
    if (record.row === row.row) {
      kept.push(record);
      continue;
    }
    const outputs: RowRecord['outputs'] = {};
    for (const [name, value] of Object.entries(record.outputs)) {
      const targets: string[] = [];
      for (const file of [value].flat()) {
        const staged = path.join(staging, String(row.row), path.basename(file));
        await mkdir(path.dirname(staged), { recursive: true });
        await rename(file, staged);
        moves.push({ from: staged, to: path.join(rowFolder(outDir, row.row), path.basename(file)) });
        targets.push(moves.at(-1)!.to);
      }
      outputs[name] = Array.isArray(value) ? targets : targets[0]!;
    }
    kept.push({ ...record, row: row.row, outputs });
    renumbered.push(row.row);
  }
  const cleared = [...plan.todo.map((row) => row.row), ...renumbered];
  await Promise.all(cleared.map((row) => rm(rowFolder(outDir, row), { recursive: true, force: true })));
  const owned = new Set(
    kept.flatMap((record) => Object.values(record.outputs).flat()).map((file) => path.resolve(file)),
  );
  for (const record of plan.stale) {
    for (const file of Object.values(record.outputs).flat()) {
      if (!inside(outDir, file) || owned.has(path.resolve(file))) continue;
      await rm(file, { force: true });
      // The folder goes with its last file; one that holds anything else stays.
      await rmdir(path.dirname(file)).catch(() => undefined);
    }
  }
  return {
    kept,
    finish: async () => {
      for (const { from, to } of moves) {
        await mkdir(path.dirname(to), { recursive: true });
        await rename(from, to);
      }
      await rm(staging, { recursive: true, force: true });
    },
  };
}
