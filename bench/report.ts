import type { Machine } from './machine.js';
import type { LoadResult } from './load.js';

export interface ContenderResult {
  name: string;
  /** As fast as it answers, `connections` connections. */
  saturated: LoadResult;
  /** At a fixed offered rate, same connections: latency without queueing. */
  paced: LoadResult;
  peakRssMiB: number | undefined;
  /** CPU per request of the saturated run from /proc: the contender's process, and its PostgreSQL backends. */
  cpuMsPerRequest?: { process: number; postgres: number | undefined };
  note?: string;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean | undefined;
}

export interface BenchResults {
  machine: Machine;
  settings: Record<string, unknown>;
  direct: { saturated: LoadResult; paced: LoadResult };
  contenders: ContenderResult[];
  e6?: {
    latencyP50Ms: number;
    latencyP99Ms: number;
    latencyCount: number;
    callbacksPerSecond: number;
    drainCount: number;
    drainMs: number;
    duplicates: number;
  };
  /** Measured on the compiled entry (`via`); `tsx` holds the same through node --import tsx. */
  ready: {
    pgliteMs: number[];
    postgresMs?: number[];
    via: string;
    tsx: { pgliteMs: number[]; postgresMs?: number[] };
    /** A fresh clone's first `npm start` on PGlite: spawn → /readyz 200 and the peak RSS when ready. */
    fresh?: { readyMs: number[]; peakRssMiB: number[] };
  };
  buildSeconds?: { value: number; source: string };
  targets: Target[];
  notes: string[];
}

const fixed = (value: number | undefined, digits = 1) => (value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits));

function cpuCell(cpu: ContenderResult['cpuMsPerRequest']): string {
  if (!cpu) return 'n/a';
  return cpu.postgres === undefined
    ? fixed(cpu.process, 2)
    : `${fixed(cpu.process + cpu.postgres, 2)} (${fixed(cpu.process, 2)} + ${fixed(cpu.postgres, 2)})`;
}

export function markdown(results: BenchResults): string {
  const { machine } = results;
  const durable = results.contenders.find((c) => c.name === 'durable-limit');
  const peer = results.contenders.find((c) => c.name === 'peer');
  const lines = [
    '# Minibridge benchmark (E1: load generator → platform → fake host app E3 → back)',
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}; Node ${machine.node}; ${machine.date}; load average at start ${machine.loadAverage.join(' / ')}.`,
    '',
    `Settings: ${Object.entries(results.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
    '',
    '| Contender | E1 req/s | p50 ms | p99 ms | peak RSS MiB | × durable limit | × peer | CPU ms/E1 (process + PostgreSQL) | paced p99 ms | failures |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| direct E3 call (no forwarder) | ${fixed(results.direct.saturated.requestsPerSecond, 0)} | ${fixed(results.direct.saturated.latencyP50Ms)} | ${fixed(results.direct.saturated.latencyP99Ms)} | – | – | – | – | ${fixed(results.direct.paced.latencyP99Ms)} | ${results.direct.saturated.failures} |`,
    ...results.contenders.map((c) => {
      const rps = c.saturated.requestsPerSecond;
      return `| ${c.name}${c.note ? ` (${c.note})` : ''} | ${fixed(rps, 0)} | ${fixed(c.saturated.latencyP50Ms)} | ${fixed(c.saturated.latencyP99Ms)} | ${fixed(c.peakRssMiB, 0)} | ${durable ? fixed(rps / durable.saturated.requestsPerSecond, 2) : 'n/a'} | ${peer ? fixed(rps / peer.saturated.requestsPerSecond, 2) : 'n/a'} | ${cpuCell(c.cpuMsPerRequest)} | ${fixed(c.paced.latencyP99Ms)} | ${c.saturated.failures + c.paced.failures} |`;
    }),
    '',
    '| Target | Goal | Measured | Met |',
    '|---|---|---|---|',
    ...results.targets.map(
      (t) => `| ${t.name} | ${t.goal} | ${t.measured} | ${t.met === undefined ? 'not measured' : t.met ? 'met' : '**missed**'} |`,
    ),
    '',
    ...results.notes.map((note) => `- ${note}`),
    '',
  ];
  return lines.join('\n');
}
