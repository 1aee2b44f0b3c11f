#!/usr/bin/env node
// `npm run build` (and `prepare`, so `npm install` and `npm ci` run it): src/ to dist/.
//
// The JavaScript comes from sucrase, which strips the types and changes nothing else (the ES2022 modules run
// as written), in every install alike. The declarations (dist/**/*.d.ts, the types plugin authors import)
// and the type check come from tsc, a dev dependency: a development install and `npm pack` have it, a
// production install (`npm ci --omit=dev`) runs the server and needs neither, so it goes without the
// compiler's 23 MB (docs/deploy.md).
//
// The studio page (studio/, docs/studio.md) is browser TypeScript that esbuild bundles with its editor (CodeMirror)
// into dist/studio/: index.html, studio.js and studio.css, the only files GET /studio/ serves. esbuild and CodeMirror
// are dev dependencies too: a production install builds no page, and /studio/ then answers one that says how to have
// it (docs/deploy.md, "The studio"). `node scripts/build.js --studio` builds the page alone, unchecked (its test does).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { transform } from 'sucrase';
import { oneFilePackage } from './one-file-package.js';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

const studioOnly = process.argv.includes('--studio');

// Packages of many small modules that dist/ imports from one file of its own instead (scripts/one-file-package.js):
// TypeBox's 200 modules were most of what a command run from the CLI loads (docs/performance.md, "Start-up").
const ONE_FILE = { '@sinclair/typebox': 'vendor/typebox.js' };
const importOf = (specifier) => new RegExp(`(from\\s*)(["'])${specifier}\\2`, 'g');

/** Builds dist/studio/, its types checked first with tsc when it is given; false, with none, without esbuild. */
async function buildStudio(tsc) {
  const out = path.join(dist, 'studio');
  rmSync(out, { recursive: true, force: true });
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return false;
  }
  // studio/tsconfig.json: the DOM's types, which src/ does not have.
  if (tsc) execFileSync(process.execPath, [tsc, '-p', 'studio/tsconfig.json'], { stdio: 'inherit', cwd: root });
  const common = { bundle: true, minify: true, logLevel: 'warning', absWorkingDir: root };
  await esbuild.build({
    ...common,
    entryPoints: ['studio/src/main.ts'],
    outfile: path.join(out, 'studio.js'),
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
  });
  await esbuild.build({ ...common, entryPoints: ['studio/studio.css'], outfile: path.join(out, 'studio.css') });
  copyFileSync(path.join(root, 'studio', 'index.html'), path.join(out, 'index.html'));
  return true;
}

if (studioOnly) {
  if (!(await buildStudio())) throw new Error('esbuild, a dev dependency, is not installed: no studio page to build');
  process.exit(0);
}

// From nothing: a module whose source was moved or removed would otherwise stay in dist/, still importable.
rmSync(dist, { recursive: true, force: true });
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
  const file = path.join(entry.parentPath, entry.name);
  const out = path.join(dist, path.relative(src, file)).replace(/\.ts$/, '.js');
  const name = path.basename(out);
  let { code, sourceMap } = transform(readFileSync(file, 'utf8'), {
    transforms: ['typescript'],
    // Class fields, optional chaining and the like are the target's own (ES2022, Node 20): left as written.
    disableESTransforms: true,
    filePath: path.relative(path.dirname(out), file),
    sourceMapOptions: { compiledFilename: name },
  });
  for (const [specifier, file] of Object.entries(ONE_FILE)) {
    const relative = path.relative(path.dirname(out), path.join(dist, file));
    code = code.replace(importOf(specifier), `$1$2${relative.startsWith('.') ? relative : `./${relative}`}$2`);
  }
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${code}\n//# sourceMappingURL=${name}.map\n`);
  writeFileSync(`${out}.map`, JSON.stringify({ ...sourceMap, sources: [path.relative(path.dirname(out), file)] }));
}

for (const [specifier, file] of Object.entries(ONE_FILE)) {
  mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
  writeFileSync(path.join(dist, file), oneFilePackage(specifier, root));
}

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.log('dist/: JavaScript only (typescript, a dev dependency, is not installed: no declarations)');
}
if (tsc)
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--emitDeclarationOnly'], {
    stdio: 'inherit',
    cwd: root,
  });

if (!(await buildStudio(tsc))) console.log('dist/studio/: not built (esbuild, a dev dependency, is not installed)');
