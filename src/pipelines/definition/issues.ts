import type { Document, LineCounter } from 'yaml';
import { MediaflowError } from '../../engine/errors.js';

/** The problems of a definition, each with where it is: all collected, then thrown together. */

/** One problem in a definition, with where it is. */
export interface DefinitionIssue {
  file: string;
  line?: number;
  step?: string;
  field?: string;
  message: string;
}

export const formatIssue = (issue: DefinitionIssue): string =>
  `${issue.file}${issue.line ? `:${issue.line}` : ''}: ${issue.step ? `step '${issue.step}', ` : ''}` +
  `${issue.field ? `field '${issue.field}': ` : ''}${issue.message}`;

/** A definition that cannot run: a 400 (CLI exit 2) listing every problem found, one a line. */
export class PipelineDefinitionError extends MediaflowError {
  constructor(readonly issues: DefinitionIssue[]) {
    super('MF_ERR_PARAM', issues.map(formatIssue).join('\n'));
    this.name = 'PipelineDefinitionError';
  }
}

/** Collects every problem of one parsed document, each with the line of the node it is about. */
export class Issues {
  private readonly found: DefinitionIssue[] = [];

  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly file: string,
  ) {}

  get count(): number {
    return this.found.length;
  }

  /** The line of the node at `path`, or of its nearest ancestor that has one. */
  private lineOf(path: Array<string | number>): number | undefined {
    for (let length = path.length; length >= 0; length--) {
      const node = this.doc.getIn(path.slice(0, length), true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) return this.lines.linePos(node.range[0]).line;
    }
    return undefined;
  }

  /** Adds a problem at `path`, naming its step and its field when it has them. */
  add(path: Array<string | number>, message: string, where: { step?: string; field?: string } = {}): void {
    const line = this.lineOf(path);
    const field = where.field ?? (where.step ? path.slice(2) : path).join('.');
    this.found.push({
      file: this.file,
      ...(line ? { line } : {}),
      ...(where.step ? { step: where.step } : {}),
      ...(field ? { field } : {}),
      message,
    });
  }

  /** Adds a problem for each key of `value` that is not among `allowed`. */
  unknownKeys(value: Record<string, unknown>, allowed: string[], path: string[], step?: string): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key))
        this.add([...path, key], `unknown key '${key}' (expected ${allowed.join(', ')})`, step ? { step } : {});
    }
  }

  /** The error that lists every problem, in the order of their lines. */
  error(): PipelineDefinitionError {
    this.found.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    return new PipelineDefinitionError(this.found);
  }
}
