import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** One line of a batch's results file. */
export interface RowRecord {
  /** The row's number in the batch file (1 for the first data row). */
  row: number;
  /** A hash of the pipeline's name and the row's values: a row that changed is run again. */
  key: string;
  status: 'done' | 'failed';
  inputs: Record<string, unknown>;
  /** Each result's output file (or files), as paths under the output folder. */
  outputs: Record<string, string | string[]>;
  error: string | null;
  timings: { started: string; ended: string; ms: number; steps: Record<string, number> };
}

const isRecord = (value: unknown): value is RowRecord =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as RowRecord).row === 'number' &&
  ['done', 'failed'].includes((value as RowRecord).status);

/**
 * The latest record of each row. Lines that are not whole records (a process killed mid-write,
 * a hand edit) are skipped, so a damaged line costs at most that row's rerun.
 */
export async function readResults(file: string): Promise<Map<number, RowRecord>> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const latest = new Map<number, RowRecord>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) latest.set(value.row, value);
    } catch {
      // not a whole line
    }
  }
  return latest;
}

/**
 * Appends records as whole lines, one write each, in order. The file is first rewritten with one
 * line per row (beside it, then renamed over it), so reruns do not make it grow without end and a
 * torn last line from a killed process is dropped.
 */
export class ResultsWriter {
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(file: string, keep: Iterable<RowRecord>): Promise<ResultsWriter> {
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    const temp = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.${randomUUID()}.tmp`);
    try {
      const lines = [...keep].sort((a, b) => a.row - b.row).map((record) => `${JSON.stringify(record)}\n`);
      const handle = await open(temp, 'w');
      try {
        await handle.writeFile(lines.join(''));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } finally {
      await rm(temp, { force: true });
    }
    return new ResultsWriter(file, await open(file, 'a'));
  }

  /** Queues one record; resolves once its line is written. */
  append(record: RowRecord): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const write = this.chain.then(async () => {
      await this.handle.write(line);
    });
    this.chain = write.catch(() => undefined);
    return write;
  }

  /** Waits for queued lines and closes the file. */
  async close(): Promise<void> {
    await this.chain;
    await this.handle.sync().catch(() => undefined);
    await this.handle.close();
  }
}
