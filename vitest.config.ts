import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files run side by side, one more than the machine has cores (ADR 0044): most suites wait on
 * sockets, child processes, Chromium and timers for part of their time, and the extra worker
 * fills those waits (on two cores, with `npm test`'s checks beside them: three workers 266 s,
 * two 323 s, four no better than three). vitest's default (cores − 1) ran the whole suite one
 * file at a time on a 2-core machine. With DATABASE_URL, one worker per core (below). Every
 * file is independent of the others: its own platform, database (`mb_t_<random>` on
 * PostgreSQL), ports (0) and temporary folders. MINIBRIDGE_TEST_WORKERS overrides the number (1
 * to run the files one at a time).
 *
 * The files of one worker share its process (`isolate: false`, ADR 0044): the modules, the
 * compiled contract validators, PGlite's WebAssembly and V8's warmed-up code are loaded once per
 * worker instead of once per file, about a fifth of the suite's CPU. Each file still owns what it
 * starts (platform, database, ports, folders) and closes it, and restores what it patches (spies,
 * environment variables, fake timers); module state in src/ is only derived from the contract, so
 * nothing one file does is seen by the next. A test module's own state (the fuzz pools) starts
 * empty with each file that uses it.
 *
 * The limits: the suites start servers, PGlite, PostgreSQL databases, Prism and Chromium on a
 * shared machine, and vitest's defaults (5 s per test, 10 s per hook) are shorter than a cold
 * start there, so they are set here once; a test that needs longer says so itself. No test
 * asserts on wall-clock time: these limits only bound how long a stuck test may hang.
 */
// With DATABASE_URL every platform suite also runs on PostgreSQL, whose server shares the same
// cores: there one worker per core, since a third worker starved its statements past the tests'
// 1.5 s time-out and the E1 soak past its answer time on a slow machine (ADR 0044).
const cores = availableParallelism();
const workers = Number(process.env['MINIBRIDGE_TEST_WORKERS'] ?? (process.env['DATABASE_URL'] ? cores : cores + 1));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    maxWorkers: workers,
    isolate: false,
    // Before every file: the worker's memory:// databases are recycled (test/support/memoryDatabases.ts).
    setupFiles: ['test/support/setup.ts'],
    // A file's concurrent tests all start together (vitest's default is 5 at a time): the files
    // that use describe.concurrent do so because their tests wait on servers and timers.
    maxConcurrency: 32,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
