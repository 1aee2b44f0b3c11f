import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Vitest keeps each file's last duration here and starts the longest first, so the two workers end together
  // (docs/performance.md, "The test suite"). Beside the fixture cache, not in node_modules, which `npm ci` empties.
  cacheDir: path.join(os.tmpdir(), 'mediaflow-vitest-cache'),
  test: {
    // The example plugins' own tests run too: they load their plugin as a user does (MEDIAFLOW_PLUGINS).
    include: ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    // ffmpeg jobs are CPU-bound; two workers match the two cores CI has.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
