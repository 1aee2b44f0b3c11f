import type { Diagnostic } from '@codemirror/lint';
import type { Problem } from '../../src/sdk.js';
import { checkEdit } from '../../src/plugins/render/edit-check.js';
import { JsonSyntaxError, mapJson, problemRange, type Mapped } from './json-map.js';

/**
 * The document checked as it is typed, with the server's own check (edit-check.ts: its merge fields filled in, then
 * the schema of /openapi.json): what needs the media (their lengths, a trim past an end) or the server's settings is
 * the dry run's to tell.
 */

export interface Analysis {
  text: string;
  /** The text read as JSON, with where each value is; undefined when it is not JSON. */
  mapped?: Mapped;
  /** What is not JSON about it. */
  syntax?: { message: string; pos: number };
  /** The schema's problems with the merged document. */
  problems: Problem[];
}

export function analyse(text: string, schema: object, values: Record<string, string>): Analysis {
  if (text.trim() === '') return { text, problems: [] };
  let mapped: Mapped;
  try {
    mapped = mapJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { text, syntax: { message: error.message, pos: error.pos }, problems: [] };
  }
  return { text, mapped, problems: checkEdit(schema, mapped.value, values).problems };
}

/** The problems underlined in the editor: a syntax error, else each problem at its path. */
export function diagnosticsOf(analysis: Analysis, problems: Problem[]): Diagnostic[] {
  const end = analysis.text.length;
  if (analysis.syntax) {
    const from = Math.min(analysis.syntax.pos, end);
    return [{ from, to: Math.min(from + 1, end), severity: 'error', message: analysis.syntax.message }];
  }
  if (!analysis.mapped) return [];
  return problems.map((problem) => {
    const { from, to } = problemRange(analysis.mapped!, problem.path);
    return { from, to, severity: 'error', message: `${problem.path || 'the document'}: ${problem.error}` };
  });
}
