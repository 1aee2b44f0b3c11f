import type { RowCheck } from '../pipelines/batch-check.js';

const show = (value: unknown) => (Array.isArray(value) ? value.join(', ') : String(value));

/** The plan `--dry-run --batch` prints: each row's verdict, with its inputs and the files it would write. */
export function formatBatchCheck(pipeline: string, checks: RowCheck[]): string {
  const count = (status: RowCheck['status']) => checks.filter((check) => check.status === status).length;
  const lines = [
    `Pipeline ${pipeline}, ${checks.length} rows: ${count('run')} to run, ${count('done')} done by an earlier ` +
      `run, ${count('invalid')} invalid`,
  ];
  for (const check of checks) {
    const verdict =
      check.status === 'run'
        ? 'runs'
        : check.status === 'done'
          ? 'done by an earlier run, skipped'
          : `invalid: ${check.error}`;
    lines.push(`Row ${check.row} (line ${check.line}): ${verdict}`);
    for (const [name, value] of Object.entries(check.inputs ?? {})) lines.push(`  ${name} = ${show(value)}`);
    if (check.outputs) lines.push(`  ${check.status === 'done' ? 'keeps' : 'writes'} ${check.outputs.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
