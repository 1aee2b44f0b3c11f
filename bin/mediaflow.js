#!/usr/bin/env node
// The CLI runs the compiled code in dist/ (built by `npm install` through the prepare script).
import { existsSync } from 'node:fs';

// A bare `--version` needs no operation: it skips loading them (and plugins), which is most of the start-up.
const versionOnly = process.argv.length === 3 && process.argv[2] === '--version';
const entry = new URL(versionOnly ? '../dist/cli/versions.js' : '../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('mediaflow: dist/ is missing; run `npm run build` (npm install does it) first.\n');
  process.exit(1);
}
const cli = await import(entry.href);
await (versionOnly ? cli.printVersions() : cli.main());
