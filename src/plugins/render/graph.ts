/**
 * A filter graph being written: statements of filter chains between labels, every label generated here (`pv<n>`), so
 * nothing of the document names a stream.
 */
export class FilterGraph {
  private readonly statements: string[] = [];
  private count = 0;

  /** A new label, unique in the graph; `pv` keeps the picture's labels apart from the sound's. */
  label(): string {
    return `pv${this.count++}`;
  }

  /**
   * Adds a chain of `filters` (joined by commas) reading the streams `from` (labels, or input streams as `3:v`),
   * and answers the label of its output (`to`, else a new one); a chain with no filters and no `to` is its one input.
   */
  chain(from: string | readonly string[], filters: ReadonlyArray<string | false | undefined>, to?: string): string {
    const sources = typeof from === 'string' ? [from] : from;
    const kept = filters.filter((filter): filter is string => Boolean(filter));
    if (kept.length === 0 && to === undefined && sources.length === 1) return sources[0]!;
    const output = to ?? this.label();
    const chain = kept.length > 0 ? kept.join(',') : 'null';
    this.statements.push(`${sources.map((source) => `[${source}]`).join('')}${chain}[${output}]`);
    return output;
  }

  /** Splits a stream in `count` copies, for filters that each need the whole picture. */
  split(from: string, count: number): string[] {
    const copies = Array.from({ length: count }, () => this.label());
    this.statements.push(`[${from}]split=${count}${copies.map((copy) => `[${copy}]`).join('')}`);
    return copies;
  }

  /** Adds a chain of a source filter (`color=...`), with no input. */
  source(filters: readonly string[]): string {
    const to = this.label();
    this.statements.push(`${filters.join(',')}[${to}]`);
    return to;
  }

  /** The graph's text, one statement a line, for `-filter_complex_script`. */
  text(): string {
    return `${this.statements.join(';\n')}\n`;
  }
}
