import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The example plugins' own tests run too: they load their plugin as a user does (MEDIAFLOW_PLUGINS).
    include: ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    // ffmpeg jobs are CPU-bound; two workers match the two cores CI has.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
