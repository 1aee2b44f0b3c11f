import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

/**
 * Why a plugin file could not be imported, said so that its author can fix it: the error, and
 * where it is (file and line). Node gives a plugin's runtime errors a stack with their place, but
 * not a SyntaxError met by `import()` (the place is only printed for an uncaught one), nor the
 * line of an import that names a missing package; those are found here. A TypeScript file gets
 * the way to compile it, since the Node.js versions mediaflow supports do not run it.
 */

/** The tsconfig.json a TypeScript plugin compiles with: ES modules, as mediaflow imports them. */
export const PLUGIN_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    outDir: 'dist',
    strict: true,
    declaration: true,
  },
  include: ['*.ts', 'src/**/*.ts'],
};

const run = promisify(execFile);

/** A place in a file: a path (or file: URL) and a line, as V8 writes it in stacks and in its arrow message. */
const PLACE = /((?:file:\/\/)?\/[^\s():]+|[A-Za-z]:\\[^\s():]+):(\d+)(?::(\d+))?/;

const asPath = (location: string) => (location.startsWith('file:') ? fileURLToPath(location) : location);

/** The first place a stack names that is not Node's own code. */
function placeInStack(stack: string): string | undefined {
  for (const line of stack.split('\n')) {
    if (/node:internal|\(node:/.test(line)) continue;
    const match = PLACE.exec(line);
    if (match) return `${asPath(match[1]!)}:${match[2]}${match[3] ? `:${match[3]}` : ''}`;
  }
  return undefined;
}

/** The file, and line, that imports the missing `specifier` (for "Cannot find package 'x' imported from <file>"). */
async function importLine(message: string): Promise<string | undefined> {
  const match = /^Cannot find (?:package|module) '([^']+)' imported from (.+)$/.exec(message);
  if (!match) return undefined;
  const [, specifier, from] = match;
  const text = await readFile(asPath(from!), 'utf8').catch(() => undefined);
  const index =
    text?.split('\n').findIndex((line) => line.includes(`'${specifier}'`) || line.includes(`"${specifier}"`)) ?? -1;
  // A relative specifier is reported resolved, so it may not be found as written: the file alone then.
  return index >= 0 ? `${asPath(from!)}:${index + 1}` : asPath(from!);
}

/**
 * Where a SyntaxError is: an uncaught one prints it, so the file is imported again in a child
 * Node.js (no shell, the URL as an argument) and the first line of what it prints is read. A
 * module graph with a syntax error is never evaluated, so this runs none of the plugin's code.
 */
async function syntaxErrorPlace(file: string): Promise<string | undefined> {
  const url = pathToFileURL(file).href;
  const result = await run(process.execPath, ['--input-type=module', '-e', 'await import(process.argv[1])', url], {
    timeout: 10_000,
  }).catch((error: { stderr?: string }) => error);
  const firstLine = String(result.stderr ?? '').split('\n')[0] ?? '';
  const match = PLACE.exec(firstLine);
  return match ? `${asPath(match[1]!)}:${match[2]}` : undefined;
}

/** The problem to report for a plugin file whose `import()` threw `error`. */
export async function importProblem(error: unknown, file: string): Promise<string> {
  const err = error as { code?: string; name?: string; message?: string; stack?: string };
  const message = String(err?.message ?? error).split('\n')[0]!;
  if (err?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[mc]?ts$/.test(file)) {
    return (
      'it is TypeScript, which this Node.js does not run: compile it to JavaScript and load the .js file instead ' +
      `(npx tsc, with a tsconfig.json such as ${JSON.stringify(PLUGIN_TSCONFIG)}, then --plugin ./dist/<name>.js)`
    );
  }
  const hint =
    err?.code === 'ERR_MODULE_NOT_FOUND' && /'mediaflow'/.test(message)
      ? " (it imports 'mediaflow', which must be installed where the plugin can find it: it is the plugin's " +
        'peer dependency)'
      : '';
  let place = err?.code === 'ERR_MODULE_NOT_FOUND' ? await importLine(message) : placeInStack(String(err?.stack ?? ''));
  if (place === undefined && err?.name === 'SyntaxError') place = await syntaxErrorPlace(file);
  const kind = err?.name && err.name !== 'Error' && !message.startsWith(err.name) ? `${err.name}: ` : '';
  return `importing it failed: ${kind}${message}${place ? ` (at ${place})` : ''}${hint}`;
}
