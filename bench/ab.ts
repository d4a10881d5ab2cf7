/**
 * A/B of two or more Minibridge builds on one machine, alternated so the machine's mood falls on
 * all of them: `tsx bench/ab.ts <entry.mjs> <entry.mjs> ...`, each entry a script that starts a
 * platform and prints `READY <url>` (contenders/compiledPlatform.mjs of a checkout, with its
 * dist/ built). Per round and build: a 3 s warm-up, a saturated run (AB_SATURATED seconds, 6),
 * then AB_PACED_RATE req/s (600) for 5 s; the platform process's CPU per E1 from /proc for each.
 * Needs DATABASE_URL. bench/results/ab-round-0035.md was measured by these steps.
 *
 * AB_PATH=payment measures the whole payment instead (bench/paths.ts's paymentPath: E1, then E5,
 * then the E6 arriving at the fake miniapp server): per round and build a 2 s warm-up and an
 * AB_SATURATED-second run, payments per second and CPU per payment of the platform process plus
 * its PostgreSQL backends (its connections' application_name), no paced run.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from '../test/resilience/support/childProcess.js';
import { cpuSeconds } from './cpu.js';
import { startFakeMiniapp } from './fakes/miniapp.js';
import { load, paced } from './load.js';
import { paymentPath } from './paths.js';
import type { Contender } from './rounds.js';
import { observePostgres, openBenchDatabase } from './postgres.js';
import { E1_PATH, e1BodyTemplate, miniappHeaders, writeRegistry } from './scenario.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const entries = process.argv.slice(2);
if (entries.length < 2 || !process.env.DATABASE_URL) throw new Error('usage: DATABASE_URL=... tsx bench/ab.ts <entry.mjs> <entry.mjs> ...');
const rounds = Number(process.env.AB_ROUNDS ?? 3);
const wholePayment = process.env.AB_PATH === 'payment';
if (process.env.AB_PATH !== undefined && !wholePayment) throw new Error('AB_PATH: only "payment" (or unset, for E1)');
const registry = join(mkdtempSync(join(os.tmpdir(), 'minibridge-ab-')), 'registry.json');
const miniapp = await startFakeMiniapp();
const hostapp = await startChild(join(here, 'fakes/hostapp.ts'));
writeRegistry(registry, hostapp.url, miniapp.url);

interface Figures {
  saturated: number[];
  saturatedCpu: number[];
  pacedCpu: number[];
}
const results = new Map<string, Figures>(entries.map((entry) => [entry, { saturated: [], saturatedCpu: [], pacedCpu: [] }]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const entry of entries) {
      const database = await openBenchDatabase(process.env.DATABASE_URL);
      if (!database) throw new Error('PostgreSQL is unreachable');
      // Its own application_name, so only this build's PostgreSQL backends are counted.
      const applicationName = `bench-ab-${round}-${entries.indexOf(entry)}`;
      const databaseUrl = new URL(database.url);
      databaseUrl.searchParams.set('application_name', applicationName);
      const platform = await startChild(entry, {
        loader: 'node',
        env: {
          MINIBRIDGE_REGISTRY: registry,
          MINIBRIDGE_RATE_LIMIT: '100000000',
          MINIBRIDGE_RATE_BURST: '100000000',
          LOG_LEVEL: 'warn',
          MINIBRIDGE_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
          DATABASE_URL: databaseUrl.toString(),
          MINIBRIDGE_DATA_DIR: '',
        },
        readyTimeoutMs: 60_000,
      });
      try {
        if (wholePayment) {
          const path = paymentPath({ connections: 50, miniappUrl: miniapp.url, drainTimeoutMs: 30_000 });
          const contender: Contender = { name: 'minibridge', role: 'subject', note: entry, url: platform.url, pid: platform.pid };
          await path.run(contender, 2);
          const observer = await observePostgres(process.env.DATABASE_URL);
          try {
            const backends = await observer.backendPids(applicationName);
            const cpu = () => (cpuSeconds(platform.pid) ?? 0) + backends.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
            const before = cpu();
            const run = await path.run(contender, Number(process.env.AB_SATURATED ?? 6));
            if (run.problems) throw new Error(run.problems.join('; '));
            const cpuPerPayment = ((cpu() - before) * 1000) / Math.max(1, run.ops);
            const figures = results.get(entry)!;
            figures.saturated.push(run.opsPerSecond);
            figures.saturatedCpu.push(cpuPerPayment);
            console.log(
              `round ${round + 1} ${entry}: ${run.opsPerSecond.toFixed(0)} payment/s, ${cpuPerPayment.toFixed(3)} ms CPU per payment (platform + its ${backends.length} backends)`,
            );
          } finally {
            await observer.close();
          }
          continue;
        }
        const base = { url: platform.url + E1_PATH, headers: miniappHeaders, body: e1BodyTemplate(), connections: 50 };
        const cpuOver = async <T extends { requests: number }>(run: () => Promise<T>): Promise<[T, number]> => {
          const before = cpuSeconds(platform.pid) ?? 0;
          const result = await run();
          return [result, (((cpuSeconds(platform.pid) ?? 0) - before) * 1000) / Math.max(1, result.requests)];
        };
        await load({ ...base, durationSeconds: 3 });
        const [saturated, saturatedCpu] = await cpuOver(() => load({ ...base, durationSeconds: Number(process.env.AB_SATURATED ?? 6) }));
        const [, pacedCpu] = await cpuOver(() => paced({ ...base, durationSeconds: 5, rate: Number(process.env.AB_PACED_RATE ?? 600) }));
        const figures = results.get(entry)!;
        figures.saturated.push(saturated.requestsPerSecond);
        figures.saturatedCpu.push(saturatedCpu);
        figures.pacedCpu.push(pacedCpu);
        console.log(
          `round ${round + 1} ${entry}: ${saturated.requestsPerSecond.toFixed(0)} E1/s, ${saturatedCpu.toFixed(3)} ms CPU per E1 saturated, ${pacedCpu.toFixed(3)} paced`,
        );
      } finally {
        await platform.stop();
        await database.drop();
      }
    }
  }
} finally {
  await hostapp.stop();
  await miniapp.close();
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [entry, figures] of results)
  if (wholePayment)
    console.log(
      `median ${entry}: ${median(figures.saturated).toFixed(0)} payment/s, ${median(figures.saturatedCpu).toFixed(3)} ms CPU per payment`,
    );
  else
    console.log(
      `median ${entry}: ${median(figures.saturated).toFixed(0)} E1/s, ${median(figures.saturatedCpu).toFixed(3)} ms CPU per E1 saturated, ${median(figures.pacedCpu).toFixed(3)} paced`,
    );
