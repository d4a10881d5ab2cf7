/**
 * Interleaved rounds and what each measured run costs. Every contender of a path is measured once
 * per round, the order reversed every other round (stats.roundOrder), so that the machine's drift
 * falls on all of them alike; the ratios are then taken per round (stats.pairedRatio).
 */
import { cpuSeconds, foreignCores, postgresIsLocal } from './cpu.js';
import type { PostgresObserver } from './postgres.js';
import { roundOrder } from './stats.js';

/** What a contender is to the verdicts: the one judged, its floor, its peer, or a reference figure. */
export type Role = 'subject' | 'durable' | 'peer' | 'reference';

export interface Contender {
  name: string;
  role: Role;
  note: string;
  /** Base URL; a path adds its operation's path. */
  url: string;
  /** A full URL the path loads instead (the direct host app call). */
  endpoint?: string;
  /** The process whose CPU counts; none for the direct call. */
  pid?: number;
  /** Its PostgreSQL connections' application_name and the schema it writes in. */
  postgres?: { applicationName: string; schema: string };
  peakRssBytes?: () => number | undefined;
}

/** What one run of a path against one contender did. */
export interface PathRun {
  ops: number;
  opsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  failures: number;
  /** Correctness problems found after the run (a lost or duplicated E6): the row fails. */
  problems?: string[];
}

/** One contender in one round: the run and what it cost. */
export interface Sample extends PathRun {
  /** CPU per operation from /proc: the contender's process, and its PostgreSQL backends when local. */
  cpuMsPerOp?: { process: number; postgres?: number };
  /** WAL written per operation, server-wide (other sessions' writes included: take the smallest). */
  walBytesPerOp?: number;
  /** Growth of the contender's schema (tables, indexes, TOAST) per operation. */
  storedBytesPerOp?: number;
  /** Its backends open at the end of the run. */
  connections?: number;
  /** p99 of the paced (open-loop, fixed-rate) run that followed, when the path has one. */
  pacedP99Ms?: number;
  /** Cores other work on the machine (other sessions' tests) used during the run: the run's disturbance. */
  foreignCores?: number;
}

let local: boolean | undefined;

/**
 * Runs `run` against `contender` and adds what it cost: CPU of its process and of its PostgreSQL
 * backends (those open at the start, and those opened during the run, whose whole life is in it),
 * WAL bytes and the growth of its schema, each per operation; with `ours` (the bench's own
 * processes and backends), the cores other work on the machine used meanwhile.
 */
export async function accounted(
  contender: Contender,
  observer: PostgresObserver | undefined,
  run: () => Promise<PathRun>,
  ours?: () => Promise<number[]>,
): Promise<Sample> {
  local ??= postgresIsLocal();
  const postgres = observer && contender.postgres ? { observer, ...contender.postgres } : undefined;
  const backendsBefore = new Map<number, number>();
  if (postgres && local)
    for (const pid of await postgres.observer.backendPids(postgres.applicationName)) backendsBefore.set(pid, cpuSeconds(pid) ?? 0);
  const walBefore = postgres ? await postgres.observer.walPosition() : 0n;
  const storedBefore = postgres ? await postgres.observer.schemaBytes(postgres.schema) : 0;
  const processBefore = contender.pid === undefined ? undefined : cpuSeconds(contender.pid);

  const measured = ours ? await foreignCores(ours, run) : { result: await run(), foreignCores: undefined };
  const result = measured.result;

  const processAfter = contender.pid === undefined ? undefined : cpuSeconds(contender.pid);
  const perOp = (total: number) => total / Math.max(1, result.ops);
  const sample: Sample = { ...result, ...(measured.foreignCores === undefined ? {} : { foreignCores: measured.foreignCores }) };
  if (processBefore !== undefined && processAfter !== undefined)
    sample.cpuMsPerOp = { process: perOp((processAfter - processBefore) * 1000) };
  if (postgres) {
    const backendsAfter = await postgres.observer.backendPids(postgres.applicationName);
    sample.connections = backendsAfter.length;
    if (local && sample.cpuMsPerOp) {
      let seconds = 0;
      for (const pid of new Set([...backendsBefore.keys(), ...backendsAfter])) {
        const now = cpuSeconds(pid);
        if (now !== undefined) seconds += now - (backendsBefore.get(pid) ?? 0);
      }
      sample.cpuMsPerOp.postgres = perOp(seconds * 1000);
    }
    sample.walBytesPerOp = perOp(Number((await postgres.observer.walPosition()) - walBefore));
    sample.storedBytesPerOp = perOp((await postgres.observer.schemaBytes(postgres.schema)) - storedBefore);
  }
  return sample;
}

/**
 * `rounds` rounds over `contenders`, in the order roundOrder gives; `measure` makes one
 * contender's warm-up and measured run. Returns each contender's samples, one per round.
 */
export async function interleave(
  contenders: readonly Contender[],
  rounds: number,
  measure: (contender: Contender, round: number) => Promise<Sample>,
): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(contenders.map((contender) => [contender.name, []]));
  for (let round = 0; round < rounds; round++)
    for (const contender of roundOrder(contenders, round)) samples.get(contender.name)!.push(await measure(contender, round));
  return samples;
}
