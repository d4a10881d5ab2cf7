/**
 * The paths partners load, each as one load run against a contender (autocannon, `connections`
 * connections, for `seconds`): what is sent, what counts as one operation, and what must hold
 * afterwards for the run to count.
 */
import type autocannon from 'autocannon';
import { arrivalCount, arrivalsAt, resetArrivals, type Arrival } from './fakes/miniapp.js';
import { waitUntilAsync } from './flows.js';
import { load, type LoadResult } from './load.js';
import type { Contender, PathRun } from './rounds.js';
import {
  E1_PATH,
  E2_PATH,
  E5_PATH,
  E8_PATH,
  MINIAPP_EVENT_PATH,
  e1Body,
  e1BodyTemplate,
  e2Body,
  e5Body,
  hostappEventHeaders,
  hostappEventTemplate,
  hostappHeaders,
  miniappEventTemplate,
  miniappHeaders,
} from './scenario.js';

export type PathId = 'e1' | 'e2' | 'payment' | 'e8' | 'miniapp-event' | 'e1-sweep';

export interface Path {
  id: PathId;
  title: string;
  /** What one operation is, for the tables: "E1", "payment", … */
  unit: string;
  run(contender: Contender, seconds: number): Promise<PathRun>;
}

export interface PathOptions {
  connections: number;
  /** The fake miniapp server the E6s arrive at (payment path). */
  miniappUrl: string;
  /** How long to wait for a run's last E6 before calling it lost. */
  drainTimeoutMs: number;
}

function fromLoad(result: LoadResult, problems: string[] = []): PathRun {
  return {
    ops: result.requests,
    opsPerSecond: result.requestsPerSecond,
    latencyP50Ms: result.latencyP50Ms,
    latencyP99Ms: result.latencyP99Ms,
    failures: result.failures,
    ...(problems.length > 0 ? { problems } : {}),
  };
}

/** E1: every request a new order (a fresh miniapp_order_id), so idempotency never short-circuits. */
export function e1Path(options: PathOptions): Path {
  return {
    id: 'e1',
    title: 'E1: miniapp server → platform → host app E3 → back',
    unit: 'E1',
    run: async (contender, seconds) =>
      fromLoad(
        await load({
          url: contender.endpoint ?? contender.url + E1_PATH,
          headers: miniappHeaders,
          body: e1BodyTemplate(),
          connections: options.connections,
          durationSeconds: seconds,
        }),
      ),
  };
}

/**
 * E2 → E4: the poll a miniapp server makes while a payment is in process, over payments created
 * through the contender beforehand (`seeds`), each answered in_process by the host app. An answer
 * that does not report the payment asked about, in process, fails the request.
 */
export function e2Path(options: PathOptions, seeds: (contender: Contender) => readonly string[]): Path {
  return {
    id: 'e2',
    title: 'E2 → E4: a payment in process polled (platform → host app E4 → back)',
    unit: 'E2',
    async run(contender, seconds) {
      const ids = seeds(contender);
      let next = 0;
      let wrong = 0;
      const requests: autocannon.Request[] = [
        {
          method: 'POST',
          path: E2_PATH,
          headers: miniappHeaders,
          setupRequest: (request, context) => {
            const id = ids[next++ % ids.length]!;
            (context as { id?: string }).id = id;
            return { ...request, body: e2Body(id) };
          },
          onResponse: (status, body, context) => {
            const asked = (context as { id?: string }).id;
            if (status === 200 && !(body.includes(`"order_payment_id":"${asked}"`) && body.includes('"payment_status":"in_process"')))
              wrong++;
          },
        },
      ];
      const result = await load({ url: contender.url, requests, connections: options.connections, durationSeconds: seconds });
      return fromLoad(
        { ...result, failures: result.failures + wrong },
        wrong > 0 ? [`${wrong} E2 answers named another payment or status`] : [],
      );
    },
  };
}

/**
 * The whole payment: each connection sends an E1, then the E5 reporting the payment it created
 * paid; the run ends when the load has stopped and the E6 of every accepted E5 has arrived at the
 * fake miniapp server. One operation is one payment, its time from the first E1 to the last E6.
 * An E6 missing or arriving twice fails the run.
 */
export function paymentPath(options: PathOptions): Path {
  let runs = 0;
  // Payment ids are the fake host app's, unique over the whole run: an E6 of an E5 cut off at the
  // end of one run may arrive during the next (another contender's, even) and is no phantom.
  const ledger: PaymentLedger = { sentEver: new Set(), arrivedEver: new Map() };
  return {
    id: 'payment',
    title: 'Whole payment: E1, then E5, then the E6 arriving at the miniapp server',
    unit: 'payment',
    async run(contender, seconds) {
      const tag = `pay-${process.pid}-${runs++}-`;
      let created = 0;
      /** E5s sent, and those answered 200: a sent E5 may be cut off unanswered when the load stops, yet be committed. */
      const sent = new Set<string>();
      const accepted = new Set<string>();
      const requests: autocannon.Request[] = [
        {
          method: 'POST',
          path: E1_PATH,
          headers: miniappHeaders,
          setupRequest: (request) => ({ ...request, body: e1Body(tag + created++) }),
          onResponse: (status, body, context) => {
            (context as { id?: string }).id =
              status === 200 ? (JSON.parse(body) as { order_payment_id: string }).order_payment_id : undefined;
          },
        },
        {
          method: 'POST',
          path: E5_PATH,
          headers: hostappHeaders,
          // No payment from the E1 (it failed): start again with a new E1.
          setupRequest: (request, context) => {
            const id = (context as { id?: string }).id;
            if (id) {
              sent.add(id);
              ledger.sentEver.add(id);
            }
            return (id ? { ...request, body: e5Body(id) } : undefined) as autocannon.Request;
          },
          onResponse: (status, _body, context) => {
            if (status === 200) accepted.add((context as { id: string }).id);
          },
        },
      ];
      await resetArrivals(options.miniappUrl);
      const started = performance.now();
      const result = await load({ url: contender.url, requests, connections: options.connections, durationSeconds: seconds });
      const problems: string[] = [];
      // Every accepted E5's E6, not only as many E6s: an earlier run's late ones are in the count too.
      const allArrived = async () => {
        if ((await arrivalCount(options.miniappUrl)).distinct < accepted.size) return false;
        const arrived = new Set((await arrivalsAt(options.miniappUrl)).map((arrival) => arrival.orderPaymentId));
        return [...accepted].every((id) => arrived.has(id));
      };
      await waitUntilAsync(allArrived, options.drainTimeoutMs).catch(() =>
        problems.push(`E6 still missing ${options.drainTimeoutMs} ms after the load stopped`),
      );
      const elapsedSeconds = (performance.now() - started) / 1000;
      const check = paymentProblems(ledger, sent, accepted, await arrivalsAt(options.miniappUrl));
      problems.push(...check.problems);
      return {
        ops: check.completed,
        opsPerSecond: check.completed / elapsedSeconds,
        latencyP50Ms: result.latencyP50Ms,
        latencyP99Ms: result.latencyP99Ms,
        failures: result.failures,
        ...(problems.length > 0 ? { problems } : {}),
      };
    },
  };
}

/** Every payment a path's runs sent an E5 for, and how many E6s each got, across its runs. */
export interface PaymentLedger {
  sentEver: Set<string>;
  arrivedEver: Map<string, number>;
}

/**
 * What the E6s that arrived during a payment run say, added to the path's ledger: every accepted
 * E5's payment has its E6, no payment gets two (over all the path's runs), and no E6 names a
 * payment no E5 was ever sent for. `completed` counts this run's payments whose E6 arrived.
 */
export function paymentProblems(
  ledger: PaymentLedger,
  sent: ReadonlySet<string>,
  accepted: ReadonlySet<string>,
  arrivals: readonly Pick<Arrival, 'orderPaymentId'>[],
): { completed: number; problems: string[] } {
  const here = new Set<string>();
  for (const { orderPaymentId } of arrivals) {
    here.add(orderPaymentId);
    ledger.arrivedEver.set(orderPaymentId, (ledger.arrivedEver.get(orderPaymentId) ?? 0) + 1);
  }
  const lost = [...accepted].filter((id) => !here.has(id)).length;
  const unknown = [...here].filter((id) => !ledger.sentEver.has(id)).length;
  const twice = [...here].filter((id) => ledger.arrivedEver.get(id)! > 1).length;
  const problems = [
    ...(lost > 0 ? [`${lost} accepted E5 without an E6`] : []),
    ...(unknown > 0 ? [`${unknown} E6 for payments no E5 was sent for`] : []),
    ...(twice > 0 ? [`${twice} payments got more than one E6`] : []),
  ];
  return { completed: [...here].filter((id) => sent.has(id)).length, problems };
}

/** An event forwarded synchronously to the recipient's E7: E8 (host app → miniapp) or the miniapp's event operation. */
export function eventPath(options: PathOptions, direction: 'e8' | 'miniapp-event'): Path {
  const e8 = direction === 'e8';
  return {
    id: direction,
    title: e8
      ? 'E8 → E7: a host app event forwarded to the miniapp server'
      : "Miniapp event → E7: a miniapp's event forwarded to the host app server",
    unit: 'event',
    run: async (contender, seconds) =>
      fromLoad(
        await load({
          url: contender.url + (e8 ? E8_PATH : MINIAPP_EVENT_PATH),
          headers: e8 ? hostappEventHeaders : miniappHeaders,
          body: e8 ? hostappEventTemplate : miniappEventTemplate,
          connections: options.connections,
          durationSeconds: seconds,
          // The recipient's answer, passed back unchanged.
          verifyBody: (body) => body === '{"received":true}',
        }),
      ),
  };
}
