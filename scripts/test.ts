/**
 * `npm test`, once Chromium is ensured (the import below runs first): the checks (`npm run check`,
 * `npm run check:breaking`) and the suites (`vitest run`) side by side, not one after the other
 * (ADR 0044). The suites leave
 * about a quarter of two cores idle while they wait on sockets, Chromium and timers; the checks
 * are CPU work (tsc, ESLint, Prettier, Spectral, optic) that fills it. The checks run at a lower
 * priority, so the suites, some of which keep time budgets, see the machine much as they did alone.
 *
 * vitest writes to the terminal as it runs; each check's report is held and printed whole when it
 * ends. Exits 1 when any of the three fails, after all three have ended, with one line naming
 * them. Arguments go to vitest (`npm test -- test/contract`); the checks run all the same.
 */
// First, Chromium (the browser suites never skip): present, nothing; missing, installed or the run stops.
import './ensure-chromium.js';
import path from 'node:path';
import { repoRoot } from './lib/paths.js';
import { toolPath } from './lib/run-tool.js';
import { runHeld, runInherited } from './lib/side-by-side.js';

/** The checks' niceness: below the suites', so they take the cores the suites leave. */
const CHECK_NICENESS = 19;

const check = (name: string, script: string) =>
  runHeld(name, toolPath('tsx'), [path.join('scripts', script)], { cwd: repoRoot, niceness: CHECK_NICENESS });

const outcomes = await Promise.all([
  check('npm run check', 'check.ts'),
  check('npm run check:breaking', 'check-breaking.ts'),
  runInherited('vitest', toolPath('vitest'), ['run', ...process.argv.slice(2)], repoRoot),
]);
const failed = outcomes.filter((outcome) => !outcome.ok).map((outcome) => outcome.name);
if (failed.length > 0) {
  console.error(`\nnpm test failed: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`\nnpm test: ${outcomes.map((outcome) => outcome.name).join(', ')} passed`);
