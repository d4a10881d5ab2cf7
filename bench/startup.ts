/**
 * Start-up, each run paired with a run of the reference: spawn → /readyz 200 of the compiled
 * entry a deployment runs (`node dist/src/main.js`) on an existing PostgreSQL schema, the same
 * process with the server database instead of the embedded one (bench/README.md says why). Then,
 * in the same run, a fresh clone's first `npm start` on a PGlite directory that does not exist
 * yet (spawn → /readyz 200, and its peak RSS then), and the compiled entry on an existing PGlite
 * directory.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledIsCurrent } from '../scripts/lib/compiled-is-current.mjs';
import { settings, type BenchContext } from './context.js';
import { openBenchDatabase } from './postgres.js';
import { freePort, waitForReady } from './processes.js';
import type { ReadyResult } from './report.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const COMPILED_MAIN = join(here, '../dist/src/main.js');
const START = join(here, '../scripts/start.mjs');
const ROOT = join(here, '..');

/** Spawn of `script` → /readyz 200; the peak RSS (VmHWM) of the serving process then. */
async function ready(script: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; peakRssMiB: number }> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const platform = spawn(process.execPath, [script], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => platform.once('exit', resolve));
  try {
    await waitForReady(`http://127.0.0.1:${port}`, 120_000);
    const ms = performance.now() - spawnedAt;
    const status = readFileSync(`/proc/${platform.pid}/status`, 'utf8');
    return { ms, peakRssMiB: Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) / 1024 };
  } finally {
    platform.kill('SIGTERM');
    await exited;
  }
}

/** `compiledAtStart`: the run began on a dist/ built from the sources (platformMode chose compiled). */
export async function startupPhase(context: BenchContext, compiledAtStart: boolean): Promise<ReadyResult> {
  if (!existsSync(COMPILED_MAIN)) execFileSync('npm', ['run', 'build'], { stdio: 'ignore', cwd: ROOT });
  const result: ReadyResult = { postgresMs: [], pgliteMs: [], fresh: { readyMs: [], peakRssMiB: [] } };
  const existing = join(context.workDir, 'startup-pglite');
  const database = context.observer ? await openBenchDatabase(context.databaseUrl) : undefined;
  if (!database) context.notes.push('Start-up: PostgreSQL is unreachable, so the reference was not measured and no start-up ratio was.');
  try {
    // The existing directory and schema: made (and migrated) by one start before any is measured.
    await ready(COMPILED_MAIN, context.minibridgeEnv({ dir: existing }));
    if (database) await ready(COMPILED_MAIN, context.minibridgeEnv({ url: database.url }));
    for (let run = 0; run < settings.readyRuns; run++) {
      context.log(`start-up run ${run + 1}: existing PostgreSQL (the reference), fresh clone, existing PGlite`);
      if (database) result.postgresMs.push((await ready(COMPILED_MAIN, context.minibridgeEnv({ url: database.url }))).ms);
      // `npm start` runs dist/ only while it matches the sources (scripts/start.mjs); a source
      // edited during the run sends it through tsx, about 70 MiB and 1.5 s more than a fresh
      // clone's start, so that figure would not be the fresh clone's.
      if (compiledAtStart && !compiledIsCurrent(ROOT))
        throw new Error(
          'the sources changed during the run, so npm start would no longer run the compiled dist/ a fresh clone runs: run the bench alone, after npm run build',
        );
      const fresh = await ready(START, context.minibridgeEnv({ dir: join(context.workDir, `fresh-${run}`) }));
      result.fresh.readyMs.push(fresh.ms);
      result.fresh.peakRssMiB.push(fresh.peakRssMiB);
      result.pgliteMs.push((await ready(COMPILED_MAIN, context.minibridgeEnv({ dir: existing }))).ms);
    }
  } finally {
    await database?.drop().catch(() => undefined);
  }
  return result;
}
