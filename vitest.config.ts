import { defineConfig } from 'vitest/config';

/**
 * The suites start servers, PGlite, PostgreSQL schemas, Prism and Chromium on a shared 2-core
 * machine. vitest's defaults (5 s per test, 10 s per hook) are shorter than a cold start there, so
 * the limits are set here once; a test that needs longer says so itself. No test asserts on
 * wall-clock time: these limits only bound how long a stuck test may hang.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
