// One installed CommonJS package as one ES module file, for `npm run build` (scripts/build.js).
//
// Node reads, resolves and links every module file on its own, and that, not running them, is most of what a
// package of hundreds of small files costs a command at start (docs/performance.md, "Start-up"). This writes the
// package's modules into one file: each module's own code unchanged, in a function that gets the `exports`,
// `require` and `module` Node would give it, run once, when first required, as Node runs it. It takes a package
// whose modules require only each other (relative paths), and fails the build on any other require; its modules
// run in strict mode, as TypeScript's CommonJS output asks anyway.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** A require call with a string literal, as TypeScript's CommonJS output writes it. */
const REQUIRE = /\brequire\((["'])([^"']+)\1\)/g;

/**
 * The ES module text of package `name`, resolved from `fromDir` as the code that imports it resolves it (its
 * CommonJS entry): it exports the entry's exports by name, as Node's import of that entry does.
 */
export function oneFilePackage(name, fromDir) {
  const requireFrom = createRequire(path.join(fromDir, 'noop.js'));
  const entry = requireFrom.resolve(name);
  const base = path.dirname(entry);
  const id = (file) => JSON.stringify(path.relative(base, file));

  const modules = new Map();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop();
    if (modules.has(file)) continue;
    const code = readFileSync(file, 'utf8');
    const requires = {};
    for (const [, , specifier] of code.matchAll(REQUIRE)) {
      if (!specifier.startsWith('.')) throw new Error(`${name}: ${file} requires ${specifier}, outside the package`);
      const required = createRequire(file).resolve(specifier);
      requires[specifier] = path.relative(base, required);
      pending.push(required);
    }
    modules.set(file, { code, requires });
  }

  const definitions = [...modules].map(
    ([file, { code, requires }]) =>
      `${id(file)}: [${JSON.stringify(requires)}, function (exports, require, module) {\n${code}\n}],`,
  );
  // Each name through a local binding of its own: the package may export `Object` or `String`, which a
  // destructuring `export const` would declare over the globals its own code uses.
  const exported = Object.keys(requireFrom(entry)).map((exportName, index) => {
    const quoted = JSON.stringify(exportName);
    return `const export${index} = entry[${quoted}];\nexport { export${index} as ${quoted} };`;
  });
  return [
    `// ${name}, written by scripts/one-file-package.js from its installed CommonJS build; not edited by hand.`,
    'const definitions = {',
    ...definitions,
    '};',
    'const loaded = {};',
    'function load(file) {',
    '  if (loaded[file]) return loaded[file].exports;',
    '  const module = (loaded[file] = { exports: {} });',
    '  const [requires, run] = definitions[file];',
    '  run.call(module.exports, module.exports, (specifier) => load(requires[specifier]), module);',
    '  return module.exports;',
    '}',
    `const entry = load(${id(entry)});`,
    ...exported,
    '',
  ].join('\n');
}
