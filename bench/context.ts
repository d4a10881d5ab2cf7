/** What every phase of the bench shares: its settings (environment knobs, bench/README.md), processes and helpers. */
import type { ChildServer } from '../test/resilience/support/childProcess.js';
import type { PostgresObserver } from './postgres.js';
import type { Processes } from './processes.js';

const quick = process.env.BENCH_QUICK === '1';
const setting = (name: string, normal: number, short: number) => (process.env[name] ? Number(process.env[name]) : quick ? short : normal);

export const settings = {
  quick,
  connections: setting('BENCH_CONNECTIONS', 50, 50),
  /**
   * Interleaved rounds per path: each contender measured once per round. Seven: with five, one
   * round's ratio moved a path's median by up to 10% between two back-to-back runs of one commit.
   */
  rounds: setting('BENCH_ROUNDS', 7, 2),
  /** Measured seconds of one contender in one round. */
  durationSeconds: setting('BENCH_DURATION', 4, 2),
  /** Warm-up seconds before each measured run. */
  warmupSeconds: setting('BENCH_WARMUP', 1, 0.5),
  /** Warm-up seconds before a contender's first round of a path (JIT, pools, caches). */
  firstWarmupSeconds: setting('BENCH_FIRST_WARMUP', 3, 1),
  pacedRate: setting('BENCH_PACED_RATE', 200, 200),
  /** Seconds of the paced run after each measured E1 run of the contenders it is judged on. */
  pacedSeconds: setting('BENCH_PACED_DURATION', 4, 2),
  /**
   * Idle seconds between a measured E1 run and its paced run: the collections and flushes a
   * saturated run leaves behind finish there instead of stalling the paced requests.
   */
  pacedSettleSeconds: setting('BENCH_PACED_SETTLE', 2, 1),
  /** Payments created through each contender for E2 to poll. */
  e2Payments: setting('BENCH_E2_PAYMENTS', 1000, 300),
  e6LatencyCount: setting('BENCH_E6_LATENCY_N', 500, 200),
  /** E6s queued per drain round (and E1s, E5s measured on their own for the capacity model). */
  e6DrainCount: setting('BENCH_E6_DRAIN_N', 2000, 500),
  /** Rounds of the E6 latency and drain measurements. */
  e6Rounds: setting('BENCH_E6_ROUNDS', 5, 1),
  readyRuns: setting('BENCH_READY_RUNS', 5, 1),
  /** Stale payments the reconciliation sweep starts with (ADR 0039). */
  reconcileStale: setting('BENCH_RECONCILE_STALE', 10_000, 2_000),
  /** How long a run may wait for its last E6 before calling it lost. */
  drainTimeoutMs: setting('BENCH_DRAIN_TIMEOUT_MS', 60_000, 60_000),
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
};
export type Settings = typeof settings;

export interface BenchContext {
  processes: Processes;
  /** Undefined when PostgreSQL is unreachable (its parts are then skipped, with a note). */
  observer: PostgresObserver | undefined;
  databaseUrl: string;
  hostapp: ChildServer;
  miniapp: ChildServer;
  workDir: string;
  /** Environment of a Minibridge instance on `database`. */
  minibridgeEnv(database: { url: string } | { dir: string }, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  notes: string[];
  log(message: string): void;
  /** The bench's own processes and PostgreSQL backends: what is not other sessions' work (rounds.accounted). */
  ours(): Promise<number[]>;
}
