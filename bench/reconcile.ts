/**
 * Reconciliation under load (ADR 0039): E1 on an instance whose reconciler sweeps a backlog of
 * stale payments, against E1 on the same instance's twin whose reconciler is off, interleaved
 * like every path; and the stale payments the sweep settled per second, against the per-host-app
 * cap the contract publishes (`x-reconciliation.perSecond` on E4): the sweep should run at its cap
 * and E1 should barely notice it.
 */
import pg from 'pg';
import { reconcileBudget } from '../src/platform/payments/lifecycle.js';
import { settings, type BenchContext } from './context.js';
import { createOrders } from './flows.js';
import type { PathResult } from './report.js';
import type { Contender } from './rounds.js';
import { writeRegistry } from './scenario.js';
import { pairedRatio } from './stats.js';

export interface ReconcileResult {
  /** Stale payments each instance started with. */
  stale: number;
  /**
   * Payments the sweeping instance settled by reconciliation per second over the whole E1
   * measurement, less one burst (the budget lets a second's worth go at once, reconcileBudget).
   */
  settledPerSecond: number;
  /** The contract's cap on status queries per second per host app (one host app here). */
  capPerSecond: number;
  /** E1 on both instances, interleaved; its ratio is the sweeping instance's to the idle one's. */
  e1: PathResult;
}

export interface ReconcileRig {
  /** Measures one path over the contenders in interleaved rounds (run.ts's measurePath). */
  measure(contenders: Contender[]): Promise<PathResult>;
  /** A fresh schema for one contender, named in its connections' application_name. */
  schemaFor(applicationName: string): Promise<{ url: string; schema: string }>;
  contender(
    name: string,
    role: Contender['role'],
    note: string,
    server: { url: string; pid: number; peakRssBytes(): number | undefined },
    postgres?: { applicationName: string; schema: string },
  ): Contender;
}

async function sql<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

export async function reconcilePhase(context: BenchContext, rig: ReconcileRig): Promise<ReconcileResult> {
  const { processes, log, workDir, minibridgeEnv } = context;
  const stale = settings.reconcileStale;
  // A host app that answers every E4 `paid`: each ask of the sweep settles its payment (and sends its E6).
  const hostapp = await processes.other('fakes/hostapp.ts', { BENCH_E4_STATUS: 'paid' });
  const registry = `${workDir}/registry-reconcile.json`;
  writeRegistry(registry, hostapp.url, context.miniapp.url);
  const sweepDb = await rig.schemaFor('bench-reconcile-sweep');
  const idleDb = await rig.schemaFor('bench-reconcile-idle');
  const env = (url: string, reconciler: 'on' | 'off') =>
    minibridgeEnv({ url }, { MINIBRIDGE_REGISTRY: registry, MINIBRIDGE_RECONCILER: reconciler, MINIBRIDGE_RECONCILER_POLL_MS: '250' });
  const sweeping = await processes.platform(env(sweepDb.url, 'on'), true);
  const idle = await processes.platform(env(idleDb.url, 'off'), true);
  try {
    // The same history in both: `stale` payments made through E1, then made due at once.
    for (const [server, db] of [
      [sweeping, sweepDb],
      [idle, idleDb],
    ] as const) {
      log(`reconcile: ${stale} payments through E1 into ${db.schema}`);
      await createOrders(server.url, stale, 32, `stale-${db.schema}`);
    }
    // Made due at once in both; only the sweeping instance runs a reconciler.
    for (const db of [sweepDb, idleDb])
      await sql(db.url, "UPDATE order_payments SET reconcile_next_at = now() WHERE payment_status = 'in_process'");
    const settled = async () =>
      Number((await sql<{ n: string }>(sweepDb.url, "SELECT count(*) AS n FROM order_payments WHERE settled_by = 'reconciliation'"))[0]!.n);
    const before = await settled();
    const started = performance.now();
    const e1 = await rig.measure([
      rig.contender('minibridge-sweeping', 'subject', `reconciler on, ${stale} stale payments due`, sweeping, {
        applicationName: 'bench-reconcile-sweep',
        schema: sweepDb.schema,
      }),
      rig.contender('minibridge-idle', 'reference', `reconciler off, the same ${stale} payments`, idle, {
        applicationName: 'bench-reconcile-idle',
        schema: idleDb.schema,
      }),
    ]);
    const seconds = (performance.now() - started) / 1000;
    const { perSecond, burst } = reconcileBudget();
    const settledPerSecond = Math.max(0, (await settled()) - before - burst) / seconds;
    const [subject, reference] = e1.contenders;
    e1.ratios.push({
      of: subject!.name,
      to: reference!.name,
      metric: 'throughput',
      value: pairedRatio(
        subject!.samples.map((s) => s.opsPerSecond),
        reference!.samples.map((s) => s.opsPerSecond),
      ),
    });
    log(`reconcile: ${settledPerSecond.toFixed(1)} settled/s over ${seconds.toFixed(0)} s`);
    return { stale, settledPerSecond, capPerSecond: perSecond, e1 };
  } finally {
    for (const server of [sweeping, idle, hostapp]) await processes.stop(server);
  }
}
