import { childPath } from '../../src/plugins/render/json-path.js';

/**
 * JSON text read with where each value is: every value's span in the text, by its JSON path as the server's errors
 * name it (`tracks[1].clips[0].src`), so that a problem is underlined where it is, a clip's bar selects its text, and
 * the cursor tells which clip it is in.
 */

/** Where a value is in the text, and its key when it is a member of an object. */
export interface Span {
  from: number;
  to: number;
  key?: { from: number; to: number };
}

export interface Mapped {
  value: unknown;
  spans: Map<string, Span>;
}

/** Text that is not JSON: what is wrong, and where. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

const WHITESPACE = /[ \t\n\r]*/y;
// JSON's strings: no raw control character (U+0000 to U+001F) inside, escapes as JSON has them.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS: Array<[string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** Reads `text` as JSON (as JSON.parse would: a repeated key keeps its last value) and maps every value's span. */
export function mapJson(text: string): Mapped {
  const spans = new Map<string, Span>();
  let pos = 0;
  const skip = () => {
    WHITESPACE.lastIndex = pos;
    WHITESPACE.exec(text);
    pos = WHITESPACE.lastIndex;
  };
  const fail = (what: string): never => {
    const line = text.slice(0, pos).split('\n').length;
    const found = pos < text.length ? `'${text[pos]}'` : 'the end';
    throw new JsonSyntaxError(`Not JSON: expected ${what}, found ${found} (line ${line})`, pos);
  };
  const token = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = pos;
    const match = pattern.exec(text);
    if (!match) return undefined;
    pos = pattern.lastIndex;
    return match[0];
  };
  const value = (path: string, key?: Span['key']): unknown => {
    skip();
    const from = pos;
    let result: unknown;
    const char = text[pos];
    if (char === '{') {
      pos++;
      const object: Record<string, unknown> = {};
      skip();
      if (text[pos] === '}') pos++;
      else
        for (;;) {
          skip();
          const keyFrom = pos;
          const raw = token(STRING) ?? fail('a key in double quotes');
          const name = JSON.parse(raw) as string;
          const keySpan = { from: keyFrom, to: pos };
          skip();
          if (text[pos] !== ':') fail("':'");
          pos++;
          object[name] = value(childPath(path, name), keySpan);
          skip();
          if (text[pos] === ',') pos++;
          else if (text[pos] === '}') {
            pos++;
            break;
          } else fail("',' or '}'");
        }
      result = object;
    } else if (char === '[') {
      pos++;
      const array: unknown[] = [];
      skip();
      if (text[pos] === ']') pos++;
      else
        for (;;) {
          array.push(value(childPath(path, array.length)));
          skip();
          if (text[pos] === ',') pos++;
          else if (text[pos] === ']') {
            pos++;
            break;
          } else fail("',' or ']'");
        }
      result = array;
    } else if (char === '"') {
      result = JSON.parse(token(STRING) ?? fail('a string ending with a double quote'));
    } else {
      const literal = LITERALS.find(([word]) => text.startsWith(word, pos));
      if (literal) {
        pos += literal[0].length;
        result = literal[1];
      } else {
        const number = token(NUMBER) ?? fail('a value');
        result = Number(number);
      }
    }
    spans.set(path, { from, to: pos, ...(key ? { key } : {}) });
    return result;
  };
  const result = value('');
  skip();
  if (pos < text.length) fail('the end of the document');
  return { value: result, spans };
}

/** The last member of a path (`.src`, `[1]`, `["a b"]`). */
const LAST =
  /(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:\d+|"(?:[^"\\]|\\.)*")\])$|^(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*")$/;

/** The path of the value that holds the one at `path` ('' for a top-level member). */
export const parentPath = (path: string): string => path.replace(LAST, '');

/**
 * Where to underline a problem at `path`: its value; for a missing field, the key (or the opening bracket) of the
 * nearest value that is there.
 */
export function problemRange(mapped: Mapped, path: string): { from: number; to: number } {
  const exact = mapped.spans.get(path);
  if (exact) return { from: exact.from, to: exact.to };
  for (let at = parentPath(path), before = path; at !== before; before = at, at = parentPath(at)) {
    const span = mapped.spans.get(at);
    if (span) return span.key ?? { from: span.from, to: span.from + 1 };
  }
  return { from: 0, to: 0 };
}

/** The path of the innermost value (or member, by its key) the position `pos` is in. */
export function pathAt(mapped: Mapped, pos: number): string {
  let best = '';
  let size = Infinity;
  for (const [path, span] of mapped.spans) {
    const from = span.key?.from ?? span.from;
    if (from <= pos && pos <= span.to && span.to - from < size) {
      best = path;
      size = span.to - from;
    }
  }
  return best;
}

/** The clip a path is in (`tracks[1].clips[0].src`: track 1, clip 0), if any. */
export function clipAt(path: string): { track: number; index: number } | undefined {
  const match = /^tracks\[(\d+)\]\.clips\[(\d+)\]/.exec(path);
  return match ? { track: Number(match[1]), index: Number(match[2]) } : undefined;
}
