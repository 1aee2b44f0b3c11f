import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { paramError } from '../engine/errors.js';

/** One row of a batch: its number (1 for the first data row), the line it starts on, and its values by column. */
export interface BatchRow {
  row: number;
  line: number;
  values: Record<string, unknown>;
}

/**
 * Parses CSV (RFC 4180): fields separated by commas, records by LF or CRLF; a field in double
 * quotes may hold commas, line breaks and doubled quotes (`""`). Returns records with the line
 * each starts on. A byte-order mark is skipped.
 */
export function parseCsv(text: string, label = 'CSV'): Array<{ line: number; fields: string[] }> {
  const records: Array<{ line: number; fields: string[] }> = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  let fields: string[] = [];
  let field = '';
  let recordLine = 1;
  let quoted = false;
  let quoteLine = 0;
  let atFieldStart = true;
  /** Whether the current record has begun (a record of one empty quoted field has no characters in `field`). */
  let started = false;
  const endField = () => {
    fields.push(field);
    field = '';
    atFieldStart = true;
  };
  const endRecord = () => {
    endField();
    records.push({ line: recordLine, fields });
    fields = [];
    started = false;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c !== '\r' && c !== '\n') started = true;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        // After a closing quote only a separator or the end of the record may follow.
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw paramError(`${label}:${line}: unexpected character after a closing quote`);
        }
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"' && atFieldStart) {
      quoted = true;
      quoteLine = line;
      atFieldStart = false;
      i++;
      continue;
    }
    if (c === ',') {
      endField();
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      endRecord();
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line++;
      recordLine = line;
      continue;
    }
    if (c === '"')
      throw paramError(
        `${label}:${line}: a quote inside an unquoted field (quote the whole field and double the quote)`,
      );
    field += c;
    atFieldStart = false;
    i++;
  }
  if (quoted) throw paramError(`${label}:${quoteLine}: a quoted field is never closed`);
  // The last record, unless the text ended with a line break.
  if (started) endRecord();
  return records;
}

/** Rows of a CSV file whose first record names the columns; blank lines are skipped. */
export function csvRows(text: string, label: string): BatchRow[] {
  const records = parseCsv(text, label).filter((record) => !(record.fields.length === 1 && record.fields[0] === ''));
  const header = records.shift();
  if (!header) throw paramError(`${label}: no header row`);
  const columns = header.fields.map((name) => name.trim());
  const seen = new Set<string>();
  for (const column of columns) {
    if (!column) throw paramError(`${label}:${header.line}: a column has no name`);
    if (seen.has(column)) throw paramError(`${label}:${header.line}: column '${column}' appears twice`);
    seen.add(column);
  }
  return records.map((record, index) => {
    if (record.fields.length > columns.length) {
      throw paramError(
        `${label}:${record.line}: ${record.fields.length} fields, but the header names ${columns.length} columns`,
      );
    }
    const values: Record<string, unknown> = {};
    columns.forEach((column, i) => {
      const value = record.fields[i];
      if (value !== undefined && value !== '') values[column] = value;
    });
    return { row: index + 1, line: record.line, values };
  });
}

/** Rows of a JSON Lines file: one object a line, blank lines skipped. */
export function jsonlRows(text: string, label: string): BatchRow[] {
  const rows: BatchRow[] = [];
  text.split(/\r?\n/).forEach((content, index) => {
    if (content.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch (error) {
      throw paramError(`${label}:${index + 1}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw paramError(`${label}:${index + 1}: expected a JSON object of input values`);
    rows.push({ row: rows.length + 1, line: index + 1, values: value as Record<string, unknown> });
  });
  return rows;
}

/** Reads a batch file: `.jsonl`/`.ndjson` as JSON Lines, anything else as CSV. */
export async function readRows(file: string): Promise<BatchRow[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw paramError(`Batch file not found or not readable: ${file}`);
  }
  const ext = path.extname(file).toLowerCase();
  return ext === '.jsonl' || ext === '.ndjson' ? jsonlRows(text, file) : csvRows(text, file);
}
