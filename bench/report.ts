import type { Machine } from './machine.js';
import type { PathId } from './paths.js';
import type { ReconcileResult } from './reconcile.js';
import type { Role, Sample } from './rounds.js';
import { spread, type Agreement, type Spread } from './stats.js';

/** One contender of a path: what each round measured. */
export interface ContenderRounds {
  name: string;
  role: Role;
  note: string;
  samples: Sample[];
  peakRssMiB?: number;
  /** p99 of every paced request of every round together, when the path has paced runs. */
  pacedP99PooledMs?: number;
}

/**
 * A ratio of two contenders of a path, taken per round: its median, range and pairs. Where
 * per-round pairs are too few samples each, `across` says what `median` holds instead, the range
 * still per round: `pooled`, the ratio of the figures taken over all rounds' requests together
 * (a tail percentile: one round's 800 requests put its p99 on 8 of them); `medians`, the ratio of
 * the two contenders' medians over the rounds.
 */
export type RatioFigure = Spread & { pairs: number[]; across?: 'pooled' | 'medians' };

export interface RatioResult {
  of: string;
  to: string;
  metric: 'throughput' | 'cpu' | 'paced p99 added';
  value: RatioFigure;
}

export interface PathResult {
  id: PathId;
  title: string;
  unit: string;
  contenders: ContenderRounds[];
  ratios: RatioResult[];
}

/** E6 queued with the delivery loop off, then drained by one instance with it on. */
export interface DrainRound {
  count: number;
  ms: number;
  perSecond: number;
  duplicates: number;
  missing: number;
  cpuMsPerOp?: Sample['cpuMsPerOp'];
  walBytesPerOp?: number;
  storedBytesPerOp?: number;
  connections?: number;
}

export interface E6Result {
  /** From E5's answer to the E6's arrival, first attempts, E5s 8 at a time; per contender, per round. */
  latency: Record<string, { p50Ms: number; p99Ms: number; count: number }[]>;
  drain: Record<string, DrainRound[]>;
  /** E1 and E5 measured on their own while queueing (delivery off): what each costs alone. */
  queued: Record<string, { e1: Sample[]; e5: Sample[] }>;
}

/** One check of the two-instance run: one instance, then two behind the round-robin proxy. */
export interface TwoInstanceRow {
  what: string;
  unit: string;
  one: number;
  two: number;
  /** Answers (or E6s) each of the two instances gave. */
  split: number[];
  problems: string[];
}

export interface ReadyResult {
  /** The reference: spawn → /readyz 200 of the compiled entry on an existing PostgreSQL schema (bench/README.md). */
  postgresMs: number[];
  /** The same on an existing PGlite directory; paired run by run with the reference. */
  pgliteMs: number[];
  /** A fresh clone's first `npm start`: spawn → /readyz 200, and peak RSS when ready. */
  fresh: { readyMs: number[]; peakRssMiB: number[] };
}

/** What one operation costs Minibridge, from this run: the capacity model's input (docs/operations/capacity.md). */
export interface OperationCost {
  operation: string;
  platformCpuMs: number;
  postgresCpuMs: number;
  /** WAL per operation, the smallest round (the server is shared: other sessions only add). */
  walBytes: number;
  /** Growth of the schema per operation, median of rounds. */
  storedBytes: number;
  /** Where the figure comes from. */
  source: string;
}

export interface CapacityFigures {
  operations: OperationCost[];
  /** PostgreSQL connections one instance opened at most under load, and its pool's bound. */
  connectionsPerInstance: { observed: number; pool: number };
  /** E6 one instance drained per second, median of rounds. */
  e6PerSecond: number;
}

export interface Target {
  name: string;
  goal: string;
  /** The verdict's figure: the median of rounds and its range. */
  measured: string;
  /** The absolute figure beside it, for information. */
  absolute: string;
  met: boolean | undefined;
  /** The ratio itself, for bench/compare.ts. */
  ratio?: Spread;
}

export interface BenchResults {
  schema: 2;
  machine: Machine;
  commit: string;
  settings: Record<string, unknown>;
  paths: PathResult[];
  e6?: E6Result;
  twoInstances?: TwoInstanceRow[];
  ready?: ReadyResult;
  /** Reconciliation: E1 while a sweep runs, and the sweep's rate against its cap (its E1 table is among the paths). */
  reconcile?: Omit<ReconcileResult, 'e1'>;
  capacity?: CapacityFigures;
  targets: Target[];
  /** Compared with an earlier full run (BENCH_COMPARE, or the previous latest.json). */
  agreement?: { with: string; rows: Agreement[] };
  notes: string[];
}

const fixed = (value: number | undefined, digits = 1) => (value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));

/** `median (min–max)` of a figure over rounds. */
export function ranged(values: readonly (number | undefined)[], digits = 0): string {
  const figure = spread(values.filter((value): value is number => value !== undefined));
  if (figure.n === 0) return 'n/a';
  return figure.n === 1
    ? fixed(figure.median, digits)
    : `${fixed(figure.median, digits)} (${fixed(figure.min, digits)}–${fixed(figure.max, digits)})`;
}

export function ratioText(figure: (Spread & { across?: RatioFigure['across'] }) | undefined, digits = 2): string {
  if (!figure || figure.n === 0) return 'n/a';
  const perRound = `per round ${fixed(figure.min, digits)}–${fixed(figure.max, digits)}`;
  if (figure.across === 'pooled') return `${fixed(figure.median, digits)}× (${figure.n} rounds pooled; ${perRound})`;
  if (figure.across === 'medians') return `${fixed(figure.median, digits)}× (medians of ${figure.n} rounds; ${perRound})`;
  const range = figure.n > 1 ? ` (${fixed(figure.min, digits)}–${fixed(figure.max, digits)}, ${figure.n} rounds)` : '';
  return `${fixed(figure.median, digits)}×${range}`;
}

function cpuCell(samples: Sample[]): string {
  const process = samples.map((s) => s.cpuMsPerOp?.process);
  const postgres = samples.map((s) => s.cpuMsPerOp?.postgres);
  if (process.every((value) => value === undefined)) return 'n/a';
  if (postgres.every((value) => value === undefined)) return ranged(process, 3);
  const total = samples.map((s) => (s.cpuMsPerOp?.postgres === undefined ? undefined : s.cpuMsPerOp.process + s.cpuMsPerOp.postgres));
  return `${ranged(total, 3)} = ${ranged(process, 3)} + ${ranged(postgres, 3)}`;
}

function pathTable(path: PathResult): string[] {
  const subject = path.contenders.find((c) => c.role === 'subject');
  const lines = [
    `### ${path.title}`,
    '',
    `| Contender | ${path.unit}/s | Minibridge ÷ this | p99 ms | CPU ms/${path.unit} (process + PostgreSQL) | WAL B/${path.unit} | stored B/${path.unit} | connections | peak RSS MiB | paced p99 ms | other work, cores | failures |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const contender of path.contenders) {
    const s = contender.samples;
    const versus =
      subject && contender !== subject
        ? ranged(
            s.map((sample, round) => subject.samples[round]!.opsPerSecond / sample.opsPerSecond),
            2,
          )
        : '–';
    const problems = s.flatMap((sample) => sample.problems ?? []);
    lines.push(
      `| ${contender.name} (${contender.note}) | ${ranged(s.map((x) => x.opsPerSecond))} | ${versus} | ${ranged(
        s.map((x) => x.latencyP99Ms),
        1,
      )} | ${cpuCell(s)} | ${ranged(s.map((x) => x.walBytesPerOp))} | ${ranged(s.map((x) => x.storedBytesPerOp))} | ${ranged(s.map((x) => x.connections))} | ${fixed(contender.peakRssMiB, 0)} | ${ranged(
        s.map((x) => x.pacedP99Ms),
        1,
      )} | ${s.reduce((sum, x) => sum + x.failures, 0)}${problems.length > 0 ? `; **${problems.join('; ')}**` : ''} |`,
    );
  }
  lines.push(
    '',
    ...path.ratios.map(
      (r) => `- ${r.metric}, ${r.of} ÷ ${r.to}: ${ratioText(r.value)}; per round ${r.value.pairs.map((p) => p.toFixed(2)).join(', ')}`,
    ),
    '',
  );
  return lines;
}

/** How much other work ran on the machine during the measured runs: 0 on a machine used alone. */
function disturbance(results: BenchResults): string[] {
  const foreign = results.paths
    .flatMap((p) => p.contenders.flatMap((c) => c.samples.map((s) => s.foreignCores)))
    .filter((v) => v !== undefined);
  if (foreign.length === 0) return [];
  const figure = spread(foreign);
  return [
    `Other work on the machine (other sessions' processes) during the measured runs: median ${fixed(figure.median, 2)} cores, at most ${fixed(figure.max, 2)} of ${results.machine.cores}. A run of record needs the machine to itself; ratios from a disturbed run move by more than ±10% from one run to the next.`,
    '',
  ];
}

export function markdown(results: BenchResults): string {
  const { machine } = results;
  const lines = [
    '# Minibridge benchmark: every path against its durable limit and its peer',
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}; Node ${machine.node}; ${machine.date}; load average at start ${machine.loadAverage.join(' / ')}; commit ${results.commit}.`,
    '',
    `Settings: ${Object.entries(results.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
    '',
    ...disturbance(results),
    '## Targets',
    '',
    'Each verdict is a ratio to a contender measured in the same run: the median of the rounds, its range beside it.',
    '',
    '| Target | Goal | Measured | For information | Met |',
    '|---|---|---|---|---|',
    ...results.targets.map(
      (t) =>
        `| ${t.name} | ${t.goal} | ${t.measured} | ${t.absolute} | ${t.met === undefined ? 'not measured' : t.met ? 'met' : '**missed**'} |`,
    ),
    '',
  ];
  if (results.agreement) {
    const agreeing = results.agreement.rows.filter((row) => row.agrees).length;
    lines.push(
      `## Agreement with ${results.agreement.with}`,
      '',
      `${agreeing} of ${results.agreement.rows.length} ratios within ±10%.`,
      '',
      '| Ratio | that run | this run | difference | within ±10% |',
      '|---|---:|---:|---:|---|',
      ...results.agreement.rows.map(
        (row) =>
          `| ${row.name} | ${fixed(row.first, 2)} | ${fixed(row.second, 2)} | ${fixed(row.difference * 100, 1)}% | ${row.agrees ? 'yes' : '**no**'} |`,
      ),
      '',
    );
  }
  lines.push('## Paths', '', ...results.paths.flatMap(pathTable));
  if (results.e6) {
    lines.push(
      '## E6: latency and drain, one instance',
      '',
      '| Contender | E5 → E6 p50 ms | p99 ms | E6/s drained | CPU ms/E6 (process + PostgreSQL) | duplicates | missing |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const name of Object.keys(results.e6.drain)) {
      const latency = results.e6.latency[name] ?? [];
      const drain = results.e6.drain[name]!;
      const cpu = drain.map((d) => (d.cpuMsPerOp ? d.cpuMsPerOp.process + (d.cpuMsPerOp.postgres ?? 0) : undefined));
      lines.push(
        `| ${name} | ${ranged(
          latency.map((l) => l.p50Ms),
          1,
        )} | ${ranged(
          latency.map((l) => l.p99Ms),
          1,
        )} | ${ranged(drain.map((d) => d.perSecond))} | ${ranged(cpu, 3)} | ${drain.reduce((n, d) => n + d.duplicates, 0)} | ${drain.reduce((n, d) => n + d.missing, 0)} |`,
      );
    }
    lines.push('');
  }
  if (results.twoInstances) {
    lines.push(
      '## Two instances behind a round-robin proxy, one PostgreSQL',
      '',
      'On two cores this is a correctness-and-overhead check, not a scaling figure: both instances, PostgreSQL and the load generator share the same two cores.',
      '',
      '| Check | one instance | two instances (sum) | two ÷ one | answers per instance | correct |',
      '|---|---:|---:|---:|---|---|',
      ...results.twoInstances.map(
        (row) =>
          `| ${row.what} | ${fixed(row.one, 0)} ${row.unit} | ${fixed(row.two, 0)} ${row.unit} | ${fixed(row.two / row.one, 2)}× | ${row.split.join(' + ')} | ${row.problems.length === 0 ? 'yes' : `**no: ${row.problems.join('; ')}**`} |`,
      ),
      '',
    );
  }
  if (results.capacity) {
    lines.push(
      '## Per-operation costs (the capacity model’s input, docs/operations/capacity.md)',
      '',
      '| Operation | platform CPU ms | PostgreSQL CPU ms | WAL bytes | stored bytes | from |',
      '|---|---:|---:|---:|---:|---|',
      ...results.capacity.operations.map(
        (op) =>
          `| ${op.operation} | ${fixed(op.platformCpuMs, 3)} | ${fixed(op.postgresCpuMs, 3)} | ${fixed(op.walBytes, 0)} | ${fixed(op.storedBytes, 0)} | ${op.source} |`,
      ),
      '',
      `PostgreSQL connections per instance: at most ${results.capacity.connectionsPerInstance.observed} seen open under load (pool bound ${results.capacity.connectionsPerInstance.pool})${Number.isFinite(results.capacity.e6PerSecond) ? `; E6 drained by one instance: ${fixed(results.capacity.e6PerSecond, 0)}/s` : ''}.`,
      '',
    );
  }
  lines.push('## Notes', '', ...results.notes.map((note) => `- ${note}`), '');
  return lines.join('\n');
}
