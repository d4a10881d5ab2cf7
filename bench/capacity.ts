/**
 * The capacity model (docs/operations/capacity.md): from the per-operation costs a run measured
 * (bench/results/latest.json, `capacity`, or the results file named), how many instances and what PostgreSQL a peak needs.
 *
 *   npx tsx bench/capacity.ts [results.json]   rewrites the worked example's tables in the document
 *
 * The arithmetic is here once, tested in test/bench/capacity.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deliveryLimits } from '../src/platform/delivery/deliveryLimits.js';
import { defaultMaxConnections } from '../src/platform/store/db.js';
import type { BenchResults, CapacityFigures, E6Result, OperationCost, PathResult } from './report.js';
import type { Sample } from './rounds.js';
import { median } from './stats.js';

/** The operations the model prices, by the name the document uses. */
export type Operation = 'E1' | 'E2' | 'E5' | 'E6' | 'E8' | 'miniapp event';

function cost(operation: Operation, samples: readonly Sample[], source: string): OperationCost {
  return {
    operation,
    platformCpuMs: median(samples.map((s) => s.cpuMsPerOp?.process ?? NaN)),
    postgresCpuMs: median(samples.map((s) => s.cpuMsPerOp?.postgres ?? NaN)),
    walBytes: Math.min(...samples.map((s) => s.walBytesPerOp ?? Infinity)),
    storedBytes: median(samples.map((s) => s.storedBytesPerOp ?? NaN)),
    source,
  };
}

/** The per-operation costs of Minibridge on PostgreSQL, from the paths and the E6 phase of one run. */
export function capacityFigures(paths: readonly PathResult[], e6: E6Result | undefined): CapacityFigures | undefined {
  const subject = (id: PathResult['id']) => paths.find((p) => p.id === id)?.contenders.find((c) => c.role === 'subject')?.samples;
  const operations: OperationCost[] = [];
  const add = (operation: Operation, samples: Sample[] | undefined, source: string) =>
    samples && samples.length > 0 && operations.push(cost(operation, samples, source));
  add('E1', subject('e1'), 'E1 path, saturated rounds');
  add('E2', subject('e2'), 'E2 path (payment in process, E4 asked), saturated rounds');
  add('E5', e6?.queued['minibridge-postgres']?.e5, 'E5 alone, E6 delivery off (E6 phase)');
  const drain = e6?.drain['minibridge-postgres'];
  if (drain && drain.length > 0)
    add(
      'E6',
      drain.map((d) => ({ ...d, ops: d.count, opsPerSecond: d.perSecond, latencyP50Ms: NaN, latencyP99Ms: NaN, failures: 0 })),
      'E6 drain of a queued backlog, one instance (E6 phase)',
    );
  add('E8', subject('e8'), 'E8 path, saturated rounds');
  add('miniapp event', subject('miniapp-event'), 'miniapp event path, saturated rounds');
  if (operations.length === 0) return undefined;
  const connections = [
    ...paths.flatMap((p) => p.contenders.filter((c) => c.role === 'subject').flatMap((c) => c.samples.map((s) => s.connections ?? 0))),
    ...(e6?.queued['minibridge-postgres']?.e5 ?? []).map((s) => s.connections ?? 0),
    ...(drain ?? []).map((d) => d.connections ?? 0),
  ];
  return {
    operations,
    connectionsPerInstance: { observed: Math.max(0, ...connections), pool: defaultMaxConnections },
    e6PerSecond: median((drain ?? []).map((d) => d.perSecond)),
  };
}

/** A deployment's peak: operations per second, and the E6 backlog of its largest miniapp after an outage. */
export interface Demand {
  perSecond: Record<Operation, number>;
  /** Operations per second on an average day (for storage and WAL per day). */
  meanPerSecond: Record<Operation, number>;
  /** The share of all payments (so of E6s) going to the largest miniapp. */
  largestMiniappShare: number;
  /** How long that miniapp's server was down at the peak, its E6s queuing. */
  outageSeconds: number;
}

export interface Plan {
  /** Per operation: CPU seconds per second (cores) on the platform and on PostgreSQL, WAL bytes per second. */
  rows: { operation: Operation; perSecond: number; platformCores: number; postgresCores: number; walBytesPerSecond: number }[];
  platformCores: number;
  postgresCores: number;
  /** Instances to carry the peak at `utilisation` each, plus one to lose. */
  instances: number;
  postgresVcpus: number;
  walMiBPerSecond: number;
  storedGiBPerDay: number;
  connections: number;
  /** The largest miniapp's E6s: what x-max-in-flight lets through, what the peak sends, the backlog and its drain. */
  backlog: {
    /** x-max-in-flight ÷ the miniapp's answer time: the most E6/s one miniapp can be sent. */
    perMiniappLimitPerSecond: number;
    /** The miniapp's share of the peak's E6s, still arriving while the backlog drains. */
    livePerSecond: number;
    /** E6s queued during the outage. */
    queued: number;
    /** What the instances have left at the peak, loaded to drainUtilisation, in E6/s. */
    spareE6PerSecond: number;
    /** E6/s the backlog shrinks by: the tightest of the bounds, less the live E6s; 0 or less never drains. */
    netPerSecond: number;
    /** Which bound was the tightest. */
    decidedBy: string;
    seconds: number;
  };
}

/**
 * How far each instance's one JavaScript thread, and PostgreSQL's cores, are planned to be
 * loaded at the peak: the rest absorbs bursts within a second, GC and the E6 backlog.
 */
export const utilisation = 0.6;
/** How far the instances may be loaded while they drain a backlog on top of the peak. */
export const drainUtilisation = 0.9;
/** The answer time of a miniapp server's E6 endpoint the backlog bound assumes. */
export const miniappAnswerMs = 50;
/** PostgreSQL's default max_connections. */
export const postgresDefaultConnections = 100;

export function plan(figures: CapacityFigures, demand: Demand): Plan {
  const costOf = (operation: Operation) => figures.operations.find((op) => op.operation === operation);
  const rows = (Object.keys(demand.perSecond) as Operation[]).map((operation) => {
    const perSecond = demand.perSecond[operation];
    const op = costOf(operation);
    if (!op) throw new Error(`the run measured no ${operation}`);
    return {
      operation,
      perSecond,
      platformCores: (perSecond * op.platformCpuMs) / 1000,
      postgresCores: (perSecond * op.postgresCpuMs) / 1000,
      walBytesPerSecond: perSecond * op.walBytes,
    };
  });
  const sum = (pick: (row: Plan['rows'][number]) => number) => rows.reduce((total, row) => total + pick(row), 0);
  const platformCores = sum((row) => row.platformCores);
  const postgresCores = sum((row) => row.postgresCores);
  const instances = Math.max(1, Math.ceil(platformCores / utilisation)) + 1;
  const storedBytesPerDay = (Object.keys(demand.meanPerSecond) as Operation[]).reduce(
    (total, operation) => total + demand.meanPerSecond[operation] * (costOf(operation)?.storedBytes ?? 0) * 86_400,
    0,
  );
  // What the instances have left at the peak, loaded to drainUtilisation, drains the backlog at the E6 cost per delivery.
  const e6Cost = costOf('E6')!.platformCpuMs;
  const spareE6PerSecond = Math.max(0, instances * drainUtilisation - platformCores) * (1000 / e6Cost);
  const perMiniappLimitPerSecond = deliveryLimits().maxInFlightPerMiniapp * (1000 / miniappAnswerMs);
  const livePerSecond = demand.largestMiniappShare * demand.perSecond.E6;
  const queued = Math.round(livePerSecond * demand.outageSeconds);
  // One miniapp's slots stay on the instance that holds them (ADR 0033): no faster than one instance drains.
  const bounds: [string, number][] = [
    ["the miniapp's x-max-in-flight", perMiniappLimitPerSecond],
    ["one instance's drain rate", figures.e6PerSecond],
    ["the instances' spare cores", spareE6PerSecond],
  ];
  const [decidedBy, tightest] = bounds.reduce((a, b) => (b[1] < a[1] ? b : a));
  const netPerSecond = tightest - livePerSecond;
  return {
    rows,
    platformCores,
    postgresCores,
    instances,
    postgresVcpus: Math.max(2, 2 ** Math.ceil(Math.log2(postgresCores / utilisation))),
    walMiBPerSecond: sum((row) => row.walBytesPerSecond) / 2 ** 20,
    storedGiBPerDay: storedBytesPerDay / 2 ** 30,
    connections: instances * figures.connectionsPerInstance.pool,
    backlog: {
      perMiniappLimitPerSecond,
      livePerSecond,
      queued,
      spareE6PerSecond,
      netPerSecond,
      decidedBy,
      seconds: netPerSecond > 0 ? queued / netPerSecond : Number.POSITIVE_INFINITY,
    },
  };
}

/**
 * The worked example: 10 million payments a day, a peak ten times the mean, each payment polled
 * five times; the largest miniapp takes a fifth of the payments and its server is down for
 * fifteen minutes at the peak.
 */
export function superAppDemand(): Demand {
  const meanPayments = 10_000_000 / 86_400;
  const rates = (payments: number): Record<Operation, number> => ({
    E1: payments,
    E2: 5 * payments,
    E5: payments,
    E6: payments,
    // One event each way per payment (an order status update out, a profile change in): an assumption to replace with yours.
    E8: payments,
    'miniapp event': payments,
  });
  return { perSecond: rates(10 * meanPayments), meanPerSecond: rates(meanPayments), largestMiniappShare: 0.2, outageSeconds: 15 * 60 };
}

const n = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The document's tables for `demand`, from `figures`. */
export function renderPlan(figures: CapacityFigures, demand: Demand, measuredAt: string, source = 'bench/results/latest.json'): string {
  const p = plan(figures, demand);
  return [
    `Per-operation costs measured by the run of ${measuredAt} (\`${source}\`):`,
    '',
    '| Operation | platform CPU ms | PostgreSQL CPU ms | WAL bytes | stored bytes | measured in |',
    '|---|---:|---:|---:|---:|---|',
    ...figures.operations.map(
      (op) =>
        `| ${op.operation} | ${n(op.platformCpuMs, 3)} | ${n(op.postgresCpuMs, 3)} | ${n(op.walBytes)} | ${n(op.storedBytes)} | ${op.source} |`,
    ),
    '',
    'At the peak:',
    '',
    '| Operation | per second | platform cores | PostgreSQL cores | WAL MiB/s |',
    '|---|---:|---:|---:|---:|',
    ...p.rows.map(
      (row) =>
        `| ${row.operation} | ${n(row.perSecond)} | ${n(row.platformCores, 2)} | ${n(row.postgresCores, 2)} | ${n(row.walBytesPerSecond / 2 ** 20, 2)} |`,
    ),
    `| **total** | | **${n(p.platformCores, 2)}** | **${n(p.postgresCores, 2)}** | **${n(p.walMiBPerSecond, 2)}** |`,
    '',
    `- **Instances: ${p.instances}** (${n(p.platformCores, 2)} cores of JavaScript at ${utilisation * 100}% each, rounded up, plus one to lose), each on its own core.`,
    `- **PostgreSQL: ${p.postgresVcpus} vCPUs** (${n(p.postgresCores, 2)} cores of backends at ${utilisation * 100}%), WAL at ${n(p.walMiBPerSecond, 1)} MiB/s at the peak, tables growing by at most ${n(p.storedGiBPerDay, 1)} GiB a day on an average day until the retention policy ages records (ADR 0041; by default the operational records after 90 days, the financial record after five years): budget the disk for 90 days of that plus five years of what the policy keeps (bytes per payment before and after it: \`bench/results/growth-bytes.md\`).`,
    p.connections + 10 <= postgresDefaultConnections
      ? `- **Connections: ${p.connections}** (${p.instances} × a pool of ${figures.connectionsPerInstance.pool}; ${figures.connectionsPerInstance.observed} seen open under load), within PostgreSQL's default \`max_connections\` (${postgresDefaultConnections}) with room for maintenance.`
      : `- **Connections: ${p.connections}** (${p.instances} × a pool of ${figures.connectionsPerInstance.pool}; ${figures.connectionsPerInstance.observed} seen open under load): more than PostgreSQL's default \`max_connections\` (${postgresDefaultConnections}) allows. Set it to at least ${p.connections + 10}, or put PgBouncer in transaction mode in front.`,
    `- **E6 of the largest miniapp** (${n(demand.largestMiniappShare * 100)}% of payments): ${n(p.backlog.livePerSecond)}/s at the peak, against the ${n(p.backlog.perMiniappLimitPerSecond)}/s that \`x-max-in-flight\` lets through at an answer time of ${miniappAnswerMs} ms${p.backlog.livePerSecond >= p.backlog.perMiniappLimitPerSecond ? ': **more than it can be sent**, so its E6s fall behind at every peak unless its server answers faster' : ''}. A ${n(demand.outageSeconds / 60)}-minute outage at the peak queues ${n(p.backlog.queued)} of them; the instances have about ${n(p.backlog.spareE6PerSecond)} E6/s left and one instance drained ${n(figures.e6PerSecond)}/s, so ${p.backlog.decidedBy} decides: the backlog shrinks by ${n(Math.max(0, p.backlog.netPerSecond))}/s while the peak goes on, ${Number.isFinite(p.backlog.seconds) ? `and is gone in about ${n(p.backlog.seconds / 60)} minutes` : '**and does not shrink until the peak ends**'}.`,
  ].join('\n');
}

const begin = '<!-- capacity:begin (bench/capacity.ts writes this part) -->';
const end = '<!-- capacity:end -->';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const file = process.argv[2] ?? join(here, 'results/latest.json');
  const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  if (!results.capacity)
    throw new Error('the results hold no capacity figures: run npm run bench with the e1, e2, e6, e8 and miniapp-event parts');
  const document = join(here, '../docs/operations/capacity.md');
  const text = readFileSync(document, 'utf8');
  const [before, rest] = text.split(begin);
  const after = rest?.split(end)[1];
  if (before === undefined || after === undefined) throw new Error(`${document} has no ${begin} … ${end} block`);
  writeFileSync(
    document,
    `${before}${begin}\n${renderPlan(results.capacity, superAppDemand(), results.machine.date, relative(join(here, '..'), resolve(file)))}\n${end}${after}`,
  );
  console.log(`capacity tables written to ${document}`);
}
