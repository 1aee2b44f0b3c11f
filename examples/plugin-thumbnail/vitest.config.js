import { defineConfig } from 'vitest/config';

// `npm test` here: the tests start mediaflow and run ffmpeg, which takes longer than vitest's 5 s default.
export default defineConfig({ test: { include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 } });
