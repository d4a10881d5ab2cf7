/**
 * E6 on its own, Minibridge against its durable limit, alternated round by round:
 *
 * - Latency: on the instances the paths ran on (delivery on), payments created, then reported
 *   paid 8 at a time; from each E5's answer to its E6's first arrival.
 * - Drain: in a schema of its own, an instance with delivery off queues `e6DrainCount` E6s (their
 *   E1s and E5s measured on their own, after a quarter as many unmeasured to warm the instance:
 *   what each costs without E6 work beside it), the queued
 *   deliveries are parked (made due tomorrow), an instance with delivery on is started, and the
 *   measurement begins when they are made due again: its CPU, WAL and schema growth are the
 *   drain's alone, its start-up excluded. Every E6 must arrive once.
 */
import pg from 'pg';
import type autocannon from 'autocannon';
import type { ChildServer } from '../test/resilience/support/childProcess.js';
import { settings, type BenchContext } from './context.js';
import { arrivalCount, arrivalsAt, countArrivals, resetArrivals } from './fakes/miniapp.js';
import { completeOrders, createOrders, percentile, waitUntilAsync } from './flows.js';
import { load } from './load.js';
import { openBenchDatabase } from './postgres.js';
import { withApplicationName } from './processes.js';
import type { DrainRound, E6Result } from './report.js';
import { accounted, type Contender, type PathRun, type Sample } from './rounds.js';
import { E1_PATH, E5_PATH, e1Body, e5Body, hostappHeaders, miniappHeaders } from './scenario.js';
import { roundOrder } from './stats.js';

type Kind = 'minibridge-postgres' | 'durable-limit';

function runOf(result: Awaited<ReturnType<typeof load>>): PathRun {
  return {
    ops: result.requests,
    opsPerSecond: result.requestsPerSecond,
    latencyP50Ms: result.latencyP50Ms,
    latencyP99Ms: result.latencyP99Ms,
    failures: result.failures,
  };
}

/** `count` E1s, then the E5 of each payment they created, through autocannon at `connections`. */
async function queue(
  contender: Contender,
  context: BenchContext,
  count: number,
  tag: string,
  measured: boolean,
): Promise<{ e1: Sample; e5: Sample; ids: string[] }> {
  const account = (run: () => Promise<PathRun>): Promise<Sample> =>
    measured ? accounted(contender, context.observer, run, context.ours) : run();
  const ids: string[] = [];
  let created = 0;
  const e1Requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: E1_PATH,
      headers: miniappHeaders,
      setupRequest: (request) => ({ ...request, body: e1Body(tag + created++) }),
      onResponse: (status, body) => {
        if (status === 200) ids.push((JSON.parse(body) as { order_payment_id: string }).order_payment_id);
      },
    },
  ];
  const e1 = await account(async () =>
    runOf(await load({ url: contender.url, requests: e1Requests, amount: count, connections: settings.connections, durationSeconds: 600 })),
  );
  let next = 0;
  const e5Requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: E5_PATH,
      headers: hostappHeaders,
      setupRequest: (request) => ({ ...request, body: e5Body(ids[next++ % ids.length]!) }),
    },
  ];
  const e5 = await account(async () =>
    runOf(
      await load({ url: contender.url, requests: e5Requests, amount: ids.length, connections: settings.connections, durationSeconds: 600 }),
    ),
  );
  return { e1, e5, ids };
}

/** Sets the due time of every pending delivery in `schema`: tomorrow (parked) or now. */
async function setDue(url: string, parked: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`UPDATE deliveries SET next_attempt_at = now() + $1::interval WHERE status = 'pending'`, [parked ? '1 day' : '0']);
  } finally {
    await client.end();
  }
}

export async function e6Phase(context: BenchContext, main: { minibridge: Contender; durable: Contender } | undefined): Promise<E6Result> {
  const { processes, log, miniapp, hostapp } = context;
  const result: E6Result = { latency: {}, drain: {}, queued: {} };
  const kinds: Kind[] = ['durable-limit', 'minibridge-postgres'];
  const schemas = new Map<Kind, { url: string; schema: string; drop(): Promise<void> }>();
  for (const kind of kinds) {
    const database = await openBenchDatabase(context.databaseUrl);
    if (!database) throw new Error('PostgreSQL is unreachable');
    schemas.set(kind, database);
    result.drain[kind] = [];
    result.latency[kind] = [];
    result.queued[kind] = { e1: [], e5: [] };
  }
  const start = (kind: Kind, role: 'queue' | 'drain'): Promise<ChildServer> => {
    const url = withApplicationName(schemas.get(kind)!.url, `bench-${role}-${kind}`);
    return kind === 'minibridge-postgres'
      ? processes.platform(context.minibridgeEnv({ url }, role === 'queue' ? { MINIBRIDGE_WORKER: 'off' } : {}))
      : processes.other('contenders/durableLimit.ts', {
          BENCH_HOSTAPP_URL: hostapp.url,
          BENCH_MINIAPP_URL: miniapp.url,
          BENCH_DATABASE_URL: url,
          BENCH_DELIVERY: role === 'queue' ? 'off' : 'on',
        });
  };
  const as = (kind: Kind, role: string, server: ChildServer): Contender => ({
    name: kind,
    role: kind === 'durable-limit' ? 'durable' : 'subject',
    note: role,
    url: server.url,
    pid: server.pid,
    postgres: { applicationName: `bench-${role}-${kind}`, schema: schemas.get(kind)!.schema },
  });

  /** E5s `count` payments on the instance the paths ran on, 8 at a time; each first E6's time from its E5's answer. */
  const latencies = async (kind: Kind, count: number, tag: string): Promise<number[]> => {
    const instance = kind === 'durable-limit' ? main!.durable : main!.minibridge;
    const ids = await createOrders(instance.url, count, 16, `${tag}-${kind}-${Date.now()}`);
    await resetArrivals(miniapp.url);
    const answeredAt = await completeOrders(instance.url, ids, 8);
    await waitUntilAsync(async () => (await arrivalCount(miniapp.url)).distinct >= count, settings.drainTimeoutMs, 'E6 (latency)');
    return (await arrivalsAt(miniapp.url))
      .filter((arrival) => arrival.attempt === 1 && answeredAt.has(arrival.orderPaymentId))
      .map((arrival) => arrival.at - answeredAt.get(arrival.orderPaymentId)!);
  };

  try {
    // A fifth as many first, unmeasured, on each instance: coming from the saturated paths, the
    // first round measured Minibridge's return to quiet (p50 5.3 ms against 3.7–4.1 ms in the
    // rounds after it, in two back-to-back runs of one commit) rather than its E6 latency.
    if (main) for (const kind of kinds) await latencies(kind, Math.ceil(settings.e6LatencyCount / 5), 'lat-warm');
    for (let round = 0; round < settings.e6Rounds; round++) {
      for (const kind of roundOrder(kinds, round)) {
        if (main) {
          const measured = await latencies(kind, settings.e6LatencyCount, `lat-${round}`);
          result.latency[kind]!.push({ p50Ms: percentile(measured, 50), p99Ms: percentile(measured, 99), count: measured.length });
        }

        const queueing = await start(kind, 'queue');
        // A quarter as many first, unmeasured: a fresh instance's first requests compile its code
        // (JIT, validators), which would be charged to the E1s and E5s measured.
        const queuer = as(kind, 'queue', queueing);
        const warm = await queue(queuer, context, Math.ceil(settings.e6DrainCount / 4), `warm-${kind}-${round}-${Date.now()}-`, false);
        const queued = await queue(queuer, context, settings.e6DrainCount, `drain-${kind}-${round}-${Date.now()}-`, true);
        await processes.stop(queueing);
        result.queued[kind]!.e1.push(queued.e1);
        result.queued[kind]!.e5.push(queued.e5);
        const expected = warm.e5.ops - warm.e5.failures + queued.e5.ops - queued.e5.failures;
        await setDue(schemas.get(kind)!.url, true);
        await resetArrivals(miniapp.url);
        const draining = await start(kind, 'drain');
        const problems: string[] = [];
        const sample = await accounted(
          as(kind, 'drain', draining),
          context.observer,
          async () => {
            await setDue(schemas.get(kind)!.url, false);
            await waitUntilAsync(
              async () => (await arrivalCount(miniapp.url)).distinct >= expected,
              settings.drainTimeoutMs,
              'E6 (drain)',
            ).catch(() => problems.push('E6 missing at the time-out'));
            const arrivals = await arrivalsAt(miniapp.url);
            const times = arrivals.map((a) => a.at);
            const ms = Math.max(...times) - Math.min(...times);
            return {
              ops: arrivals.length,
              opsPerSecond: ((arrivals.length - 1) / ms) * 1000,
              latencyP50Ms: NaN,
              latencyP99Ms: NaN,
              failures: 0,
            };
          },
          context.ours,
        );
        await processes.stop(draining);
        const arrived = countArrivals(await arrivalsAt(miniapp.url));
        const drained: DrainRound = {
          count: arrived.distinct,
          ms: ((arrived.distinct - 1) / sample.opsPerSecond) * 1000,
          perSecond: sample.opsPerSecond,
          duplicates: arrived.duplicates,
          missing: Math.max(0, expected - arrived.distinct),
          cpuMsPerOp: sample.cpuMsPerOp,
          walBytesPerOp: sample.walBytesPerOp,
          storedBytesPerOp: sample.storedBytesPerOp,
          connections: sample.connections,
        };
        result.drain[kind]!.push(drained);
        log(
          `e6 round ${round + 1} ${kind}: latency p50 ${result.latency[kind]!.at(-1)?.p50Ms.toFixed(1) ?? 'n/a'} ms; ${expected} queued (E5 ${(queued.e5.cpuMsPerOp?.process ?? NaN).toFixed(3)} ms CPU), drained ${drained.perSecond.toFixed(0)}/s, ${drained.duplicates} twice, ${drained.missing} missing${problems.length ? `; ${problems.join('; ')}` : ''}`,
        );
      }
    }
  } finally {
    for (const database of schemas.values()) await database.drop().catch(() => undefined);
  }
  return result;
}
