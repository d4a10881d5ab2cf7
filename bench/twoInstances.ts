/**
 * Two Minibridge instances on one PostgreSQL schema behind the bench's round-robin proxy
 * (proxy/roundRobin.ts), against one instance behind the same proxy: E1, E2 and the E6 drain,
 * each checked for correctness (every accepted E1 recorded once and its key done, every E2
 * answering about the payment asked, both instances serving; every queued E6 delivered exactly
 * once and recorded once) and their sum reported. On two cores a correctness-and-overhead
 * check, not a scaling figure.
 */
import pg from 'pg';
import type autocannon from 'autocannon';
import type { ChildServer } from '../test/resilience/support/childProcess.js';
import { settings, type BenchContext } from './context.js';
import { arrivalCount, arrivalsAt, countArrivals, resetArrivals } from './fakes/miniapp.js';
import { completeOrders, createOrders, waitUntilAsync } from './flows.js';
import { load } from './load.js';
import { e2Path } from './paths.js';
import { openBenchDatabase } from './postgres.js';
import type { TwoInstanceRow } from './report.js';
import { E1_PATH, allMiniapps, e1Body, miniappHeaders } from './scenario.js';

/** What the database holds after the E1 runs, against what the load generator sent and was answered. */
export interface E1Ledger {
  /** miniapp_order_ids sent (an E1 cut off unanswered when the load stops may still be recorded). */
  sent: ReadonlySet<string>;
  /** miniapp_order_ids answered 200 with an order_payment_id. */
  accepted: ReadonlySet<string>;
  /** Order payments recorded per miniapp_order_id. */
  recorded: ReadonlyMap<string, number>;
  /** Idempotency keys left pending (a reservation never completed). */
  pendingKeys: number;
}

export function e1Problems(ledger: E1Ledger): string[] {
  const lost = [...ledger.accepted].filter((id) => !ledger.recorded.has(id)).length;
  const unknown = [...ledger.recorded.keys()].filter((id) => !ledger.sent.has(id)).length;
  const twice = [...ledger.recorded.values()].filter((count) => count > 1).length;
  return [
    ...(lost > 0 ? [`${lost} accepted E1 not recorded (lost writes)`] : []),
    ...(unknown > 0 ? [`${unknown} payments recorded for orders never sent`] : []),
    ...(twice > 0 ? [`${twice} orders recorded twice`] : []),
    ...(ledger.pendingKeys > 0 ? [`${ledger.pendingKeys} idempotency keys left pending`] : []),
  ];
}

/** What arrived and what the database recorded after a drain of `queued` E6s. */
export interface DrainLedger {
  queued: number;
  /** Distinct events that arrived at the miniapp server, and arrivals beyond the first of an event. */
  distinct: number;
  duplicates: number;
  /** Deliveries recorded delivered, and attempts recorded. */
  delivered: number;
  attempts: number;
}

export function drainProblems(ledger: DrainLedger): string[] {
  const problems: string[] = [];
  if (ledger.duplicates > 0) problems.push(`${ledger.duplicates} E6 delivered twice`);
  if (ledger.distinct < ledger.queued) problems.push(`${ledger.queued - ledger.distinct} queued E6 never arrived`);
  if (ledger.distinct > ledger.queued) problems.push(`${ledger.distinct - ledger.queued} E6 arrived that were never queued`);
  if (ledger.delivered !== ledger.distinct) problems.push(`${ledger.distinct} E6 arrived but ${ledger.delivered} recorded delivered`);
  if (ledger.attempts !== ledger.delivered) problems.push(`${ledger.attempts} attempts recorded for ${ledger.delivered} deliveries`);
  return problems;
}

/** Each instance must have served: a proxy that sent everything to one would prove nothing. */
export function splitProblems(split: readonly number[]): string[] {
  return split.length > 1 && split.some((served) => served === 0) ? [`an instance served nothing (${split.join(' + ')})`] : [];
}

/**
 * E6s queued for the two-instance drain: enough that it lasts several of the worker's poll
 * intervals, so the instance that did not claim first claims too (a drain shorter than one poll is
 * all done by whichever instance polled first).
 */
const drainCount = Math.max(2000, settings.e6DrainCount);

export async function twoInstancesPhase(context: BenchContext): Promise<TwoInstanceRow[]> {
  const { processes, log, miniapp } = context;
  const database = await openBenchDatabase(context.databaseUrl);
  if (!database) throw new Error('PostgreSQL is unreachable');
  const sql = async <T extends pg.QueryResultRow>(text: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  };
  const count = async (text: string) => Number((await sql<{ n: string }>(text))[0]!.n);
  const instance = (worker: boolean) =>
    processes.platform(context.minibridgeEnv({ url: database.url }, worker ? {} : { MINIBRIDGE_WORKER: 'off' }));
  const proxyOver = (servers: ChildServer[]) =>
    processes.other('proxy/roundRobinProcess.ts', { BENCH_UPSTREAMS: servers.map((s) => s.url).join(',') });
  const served = async (proxy: ChildServer) => ((await (await fetch(`${proxy.url}/__proxy/served`)).json()) as { served: number[] }).served;
  const rows: TwoInstanceRow[] = [];

  try {
    log('two instances: E1 and E2, one instance then two behind the round-robin proxy');
    const a = await instance(false);
    const b = await instance(false);
    const one = await proxyOver([a]);
    const two = await proxyOver([a, b]);
    const sent = new Set<string>();
    const accepted = new Set<string>();
    const e1Requests = (tag: string): autocannon.Request[] => {
      let next = 0;
      return [
        {
          method: 'POST',
          path: E1_PATH,
          headers: miniappHeaders,
          setupRequest: (request, context) => {
            const order = `${tag}${next++}`;
            sent.add(order);
            (context as { order?: string }).order = order;
            return { ...request, body: e1Body(order) };
          },
          onResponse: (status, body, context) => {
            if (status === 200 && body.includes('"order_payment_id"')) accepted.add((context as { order: string }).order);
          },
        },
      ];
    };
    const e1Run = async (proxy: ChildServer, tag: string) =>
      (
        await load({
          url: proxy.url,
          requests: e1Requests(tag),
          connections: settings.connections,
          durationSeconds: settings.durationSeconds,
        })
      ).requestsPerSecond;
    await e1Run(two, 'two-warm-');
    const e1 = { one: await e1Run(one, 'two-e1-one-'), twoBefore: await served(two), two: await e1Run(two, 'two-e1-two-') };
    const e1Split = (await served(two)).map((n, i) => n - e1.twoBefore[i]!);
    // E1s cut off when the load stopped are still being answered by the instances: let them finish.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const recorded = await sql<{ miniapp_order_id: string; n: string }>(
      'SELECT miniapp_order_id, count(*) AS n FROM order_payments GROUP BY 1',
    );
    const ledger = {
      sent,
      accepted,
      recorded: new Map(recorded.map((row) => [row.miniapp_order_id, Number(row.n)])),
      pendingKeys: await count(`SELECT count(*) AS n FROM idempotency_keys WHERE state <> 'done'`),
    };
    rows.push({
      what: 'E1',
      unit: 'E1/s',
      one: e1.one,
      two: e1.two,
      split: e1Split,
      problems: [...e1Problems(ledger), ...splitProblems(e1Split)],
    });

    const seeds = await createOrders(two.url, settings.e2Payments, 32, `two-e2-${Date.now()}`);
    const e2 = e2Path({ connections: settings.connections, miniappUrl: miniapp.url, drainTimeoutMs: settings.drainTimeoutMs }, () => seeds);
    const e2One = await e2.run({ name: 'one', role: 'subject', note: '', url: one.url }, settings.durationSeconds);
    const e2Before = await served(two);
    const e2Two = await e2.run({ name: 'two', role: 'subject', note: '', url: two.url }, settings.durationSeconds);
    const e2Split = (await served(two)).map((n, i) => n - e2Before[i]!);
    rows.push({
      what: 'E2 (payment in process)',
      unit: 'E2/s',
      one: e2One.opsPerSecond,
      two: e2Two.opsPerSecond,
      split: e2Split,
      problems: [...(e2One.problems ?? []), ...(e2Two.problems ?? []), ...splitProblems(e2Split)],
    });
    for (const server of [one, two, a, b]) await processes.stop(server);

    log('two instances: E6 drain by one instance, then by two');
    const drains: { perSecond: number; split: number[]; problems: string[] }[] = [];
    for (const instances of [1, 2]) {
      // Spread over four miniapps, so that the slots of more than one are there to claim. The split
      // is reported, not required: a slot is handed on within the instance that holds it (ADR
      // 0033), so whichever instance claims a miniapp's slots first may drain its whole backlog.
      const queueing = await instance(false);
      for (const appId of allMiniapps) {
        const ids = await createOrders(
          queueing.url,
          Math.ceil(drainCount / allMiniapps.length),
          32,
          `two-drain-${instances}-${Date.now()}`,
          appId,
        );
        await completeOrders(queueing.url, ids, 32, appId);
      }
      await processes.stop(queueing);
      const queued = await count(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending'`);
      const deliveredBefore = await count(`SELECT count(*) AS n FROM deliveries WHERE status = 'delivered'`);
      const attemptsBefore = await count('SELECT count(*) AS n FROM delivery_attempts');
      await sql(`UPDATE deliveries SET next_attempt_at = now() + interval '1 day' WHERE status = 'pending'`);
      await resetArrivals(miniapp.url);
      const drainers = await Promise.all(Array.from({ length: instances }, () => instance(true)));
      await sql(`UPDATE deliveries SET next_attempt_at = now() WHERE status = 'pending'`);
      const problems: string[] = [];
      await waitUntilAsync(
        async () => (await arrivalCount(miniapp.url)).distinct >= queued,
        settings.drainTimeoutMs,
        'E6 (two instances)',
      ).catch(() => problems.push('E6 missing at the time-out'));
      // Leases are held while an attempt is in flight: a duplicate would show up after the last first arrival.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const split = await Promise.all(drainers.map(deliveredBy));
      for (const server of drainers) await processes.stop(server);
      const arrivals = await arrivalsAt(miniapp.url);
      const arrived = countArrivals(arrivals);
      const times = arrivals.map((arrival) => arrival.at);
      problems.push(
        ...drainProblems({
          queued,
          distinct: arrived.distinct,
          duplicates: arrived.duplicates,
          delivered: (await count(`SELECT count(*) AS n FROM deliveries WHERE status = 'delivered'`)) - deliveredBefore,
          attempts: (await count('SELECT count(*) AS n FROM delivery_attempts')) - attemptsBefore,
        }),
      );
      drains.push({ perSecond: ((arrivals.length - 1) / (Math.max(...times) - Math.min(...times))) * 1000, split, problems });
    }
    rows.push({
      what: `E6 drain (${drainCount} queued for ${allMiniapps.length} miniapps)`,
      unit: 'E6/s',
      one: drains[0]!.perSecond,
      two: drains[1]!.perSecond,
      split: drains[1]!.split,
      problems: [...drains[0]!.problems, ...drains[1]!.problems],
    });
    for (const row of rows)
      log(
        `two instances ${row.what}: one ${row.one.toFixed(0)}, two ${row.two.toFixed(0)} ${row.unit} (${row.split.join(' + ')}); ${row.problems.length === 0 ? 'correct' : row.problems.join('; ')}`,
      );
  } finally {
    await database.drop().catch(() => undefined);
  }
  return rows;
}

/** E6s an instance delivered, from its own /metrics (minibridge_e6_attempts_total{outcome="delivered"}). */
async function deliveredBy(server: ChildServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = /^minibridge_e6_attempts_total\{outcome="delivered"\} (\d+)/m.exec(text);
  return match ? Number(match[1]) : 0;
}
