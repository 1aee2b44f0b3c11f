#!/usr/bin/env node
// The CLI runs the compiled code in dist/ (built by `npm install` through the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('mediaflow: dist/ is missing; run `npm run build` (npm install does it) first.\n');
  process.exit(1);
}
const { main } = await import(entry.href);
await main();
