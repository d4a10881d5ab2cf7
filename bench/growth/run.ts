/**
 * The growth bench (ADR 0041), runnable alone: `npm run bench:growth` (export `runGrowth`).
 *
 * - **E1 on history**: E1 throughput on a database seeded with GROWTH_PAYMENTS payments
 *   (bench/growth/seed.ts; default 5,000,000) against the same on an empty one. Target ≥ 0.9×.
 * - **E6 drain on history**: GROWTH_DRAIN payments created and reported paid, then the time until
 *   every E6 arrived, seeded against empty. Target ≥ 0.9×.
 * - **E1 during a purge**: E1 on a seeded database whose oldest ~20 % are past the 90-day periods
 *   (about a million rows per kind at 5 million payments) with the records worker purging, against
 *   the same run without it (on its own seeded copy). Target ≥ 0.9×.
 *
 * Contenders are interleaved in rounds (bench/rounds.ts: A B, B A, …), each instance started fresh
 * for its run (so a purge runs only during its own contender's run), with a warm-up before the
 * measured run; the verdict is the median of the per-round ratios (bench/stats.ts). Statement
 * days are closed on the seeded databases beforehand, so the purge contender purges and does
 * nothing else. Results: bench/results/growth-latest.md (also printed).
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openDb } from '../../src/platform/store/db.js';
import { createStore } from '../../src/platform/store/index.js';
import { pool } from '../flows.js';
import { load } from '../load.js';
import { openBenchDatabase } from '../postgres.js';
import { roundOrder, pairedRatio } from '../stats.js';
import { E1_PATH, E5_PATH, e1Body, e1BodyTemplate, e5Body, hostappHeaders, miniappHeaders } from '../scenario.js';
import { growthPayments, seedGrowth, startFakes, startGrowthPlatform } from './seed.js';

/** The bench's own reads and the day closes over millions of rows: no request's statement time-out. */
const benchTimeouts = { connectMs: 10_000, statementMs: 30 * 60_000 };

export interface GrowthOptions {
  payments: number;
  rounds: number;
  seconds: number;
  connections: number;
  drain: number;
  databaseUrl: string;
  /**
   * GROWTH_WAIT_FOR: a file whose existence starts the measurements once the seeding is done, so
   * the (long, unmeasured) seeding can run while the machine is busy and the measurements when it
   * is the bench's alone.
   */
  waitFor: string | undefined;
  log: (line: string) => void;
}

export interface GrowthResult {
  e1OnHistory: ReturnType<typeof pairedRatio>;
  drainOnHistory: ReturnType<typeof pairedRatio>;
  e1DuringPurge: ReturnType<typeof pairedRatio>;
  purgedRows: number;
}

export function growthOptions(env = process.env): GrowthOptions {
  const whole = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number`);
    return value;
  };
  return {
    payments: growthPayments(env),
    rounds: whole('GROWTH_ROUNDS', 3),
    seconds: whole('GROWTH_SECONDS', 10),
    connections: whole('GROWTH_CONNECTIONS', 20),
    drain: whole('GROWTH_DRAIN', 500),
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    waitFor: env.GROWTH_WAIT_FOR || undefined,
    log: (line) => process.stdout.write(`${line}\n`),
  };
}

interface Target {
  name: string;
  url: string;
  records: boolean;
}

/** One contender's run on a fresh instance: E1 ops/s. */
async function e1Run(target: Target, options: GrowthOptions): Promise<number> {
  const fakes = await startFakes();
  const platform = await startGrowthPlatform(target.url, fakes, { records: target.records });
  try {
    const run = (seconds: number) =>
      load({
        url: platform.url + E1_PATH,
        headers: miniappHeaders,
        body: e1BodyTemplate(),
        connections: options.connections,
        durationSeconds: seconds,
      });
    await run(Math.max(1, Math.round(options.seconds / 3)));
    const result = await run(options.seconds);
    if (result.failures > 0) options.log(`  ${target.name}: ${result.failures} E1 failures`);
    return result.requestsPerSecond;
  } finally {
    await platform.close();
    await fakes.close();
  }
}

/** One contender's E6 drain: payments created, all reported paid at once, E6s per second until the last arrived. */
async function drainRun(target: Target, options: GrowthOptions, round: number): Promise<number> {
  const fakes = await startFakes();
  const platform = await startGrowthPlatform(target.url, fakes);
  try {
    const ids: string[] = [];
    await pool(options.drain, options.connections, async (index) => {
      const response = await fetch(platform.url + E1_PATH, {
        method: 'POST',
        headers: miniappHeaders,
        body: e1Body(`drain-${target.name}-${round}-${index}-${Date.now()}`),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${target.name}: E1 answered ${response.status}: ${text}`);
      ids.push((JSON.parse(text) as { order_payment_id: string }).order_payment_id);
    });
    const before = fakes.e6();
    const started = performance.now();
    await pool(ids.length, options.connections, async (index) => {
      await fetch(platform.url + E5_PATH, { method: 'POST', headers: hostappHeaders, body: e5Body(ids[index]!) }).then((r) => r.text());
    });
    const deadline = Date.now() + 120_000;
    while (fakes.e6() - before < ids.length) {
      if (Date.now() > deadline) throw new Error(`${target.name}: ${ids.length - (fakes.e6() - before)} E6s never arrived`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return ids.length / ((performance.now() - started) / 1000);
  } finally {
    await platform.close();
    await fakes.close();
  }
}

/** Rounds of `measure` over two contenders, interleaved; the ratio of the first to the second per round. */
async function compare(
  title: string,
  [subject, baseline]: [Target, Target],
  options: GrowthOptions,
  measure: (target: Target, round: number) => Promise<number>,
) {
  const figures = new Map<string, number[]>([
    [subject.name, []],
    [baseline.name, []],
  ]);
  for (let round = 0; round < options.rounds; round++)
    for (const target of roundOrder([subject, baseline], round)) {
      const value = await measure(target, round);
      figures.get(target.name)!.push(value);
      options.log(`  ${title}, round ${round + 1}: ${target.name} ${value.toFixed(1)}/s`);
    }
  return pairedRatio(figures.get(subject.name)!, figures.get(baseline.name)!);
}

/**
 * Rows the purge has still to remove or redact. The E1 runs add payments of their own, not yet
 * redacted (and nothing else the purge counts): their number is taken out, so the difference
 * between two counts is what the purge did.
 */
async function countRows(url: string): Promise<number> {
  const db = await openDb({ databaseUrl: url, pgliteDataDir: 'memory://', timeouts: benchTimeouts });
  try {
    const [row] = await db.query<{ n: string }>(
      `SELECT ((SELECT count(*) FROM event_log WHERE payload_dropped_at IS NULL) + (SELECT count(*) FROM deliveries)
        - (SELECT count(*) FROM order_payments WHERE personal_redacted_at IS NOT NULL))::text AS n`,
    );
    return Number(row!.n);
  } finally {
    await db.close();
  }
}

/** Closes every statement day due, so a records worker started later only purges. */
async function closeDays(url: string): Promise<void> {
  const db = await openDb({ databaseUrl: url, pgliteDataDir: 'memory://', timeouts: benchTimeouts });
  try {
    const store = createStore(db);
    while (await store.statements.closeNextDay());
  } finally {
    await db.close();
  }
}

export async function runGrowth(options: GrowthOptions = growthOptions()): Promise<{ result: GrowthResult; report: string }> {
  const opened = await Promise.all([0, 1, 2].map(() => openBenchDatabase(options.databaseUrl)));
  if (opened.some((database) => !database)) throw new Error(`PostgreSQL at ${options.databaseUrl} is unreachable`);
  const [empty, seeded, purging] = opened as NonNullable<(typeof opened)[number]>[];
  try {
    options.log(`seeding ${options.payments} payments twice (history, and a copy to purge)`);
    await seedGrowth(seeded.url, options.payments, { log: options.log });
    await seedGrowth(purging.url, options.payments, { log: options.log });
    await Promise.all([closeDays(seeded.url), closeDays(purging.url)]);
    if (options.waitFor) {
      options.log(`seeded; measuring once ${options.waitFor} exists`);
      while (!existsSync(options.waitFor)) await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    const emptyTarget = { name: 'empty', url: empty.url, records: false };
    const historyTarget = { name: 'history', url: seeded.url, records: false };
    const purgeTarget = { name: 'purging', url: purging.url, records: true };
    const e1OnHistory = await compare('E1', [historyTarget, emptyTarget], options, (target) => e1Run(target, options));
    const drainOnHistory = await compare('E6 drain', [historyTarget, emptyTarget], options, (target, round) =>
      drainRun(target, options, round),
    );
    const due = await countRows(purging.url);
    const e1DuringPurge = await compare('E1 during purge', [purgeTarget, historyTarget], options, (target) => e1Run(target, options));
    const purgedRows = due - (await countRows(purging.url));
    const result = { e1OnHistory, drainOnHistory, e1DuringPurge, purgedRows };
    return { result, report: renderGrowth(result, options) };
  } finally {
    await Promise.all(opened.map((database) => database?.drop()));
  }
}

function renderGrowth(result: GrowthResult, options: GrowthOptions): string {
  const row = (name: string, ratio: GrowthResult['e1OnHistory'], target: number) =>
    `| ${name} | ${ratio.median.toFixed(2)}× | ${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)} | ≥ ${target}× | ${ratio.median >= target ? 'met' : 'NOT met'} |`;
  return [
    '# Growth bench',
    '',
    `${options.payments.toLocaleString('en')} payments of history, ${options.rounds} rounds interleaved, ${options.seconds} s per E1 run,`,
    `${options.connections} connections, E6 drain of ${options.drain} payments; ${new Date().toISOString().slice(0, 16)}Z.`,
    '',
    '| Ratio | Median | Range | Target | Verdict |',
    '|---|---:|---:|---:|---|',
    row('E1 on history ÷ E1 on an empty database', result.e1OnHistory, 0.9),
    row('E6 drain on history ÷ on an empty database', result.drainOnHistory, 0.9),
    row('E1 during the purge ÷ E1 without it', result.e1DuringPurge, 0.9),
    '',
    `Rows purged or redacted during the purge runs: ${result.purgedRows.toLocaleString('en')}.`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { report } = await runGrowth();
  writeFileSync(path.join(import.meta.dirname, '..', 'results', 'growth-latest.md'), report);
  process.stdout.write(report);
}
