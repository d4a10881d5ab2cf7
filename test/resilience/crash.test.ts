/**
 * Crash and scale, on PostgreSQL (DATABASE_URL; skipped without it). Platforms run as child
 * processes (platform-process.ts) sharing one fresh schema:
 * (a) E6 callbacks queued while the miniapp server is down survive a SIGKILL of the platform;
 * (b) two instances deliver every transition exactly once, with the same event id on retries;
 * (c) RESILIENCE_LONG=1 only: 60 s of E1 at 50 connections, no errors, no memory growth trend.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loadDocument } from '../../src/contract/documents.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, type TestDatabase } from '../support/databases.js';
import { startChild, type ChildServer } from './support/childProcess.js';
import { fakeHostapp, fakeMiniapp, MINIAPP_PATHS, type FakePartner, type Received } from './support/fakePartner.js';
import { eventually } from './support/platformHarness.js';
import { registryFile, miniappAuthorization, PARTIES } from './support/registry.js';
import { completeOrder, createOrderPayment } from './support/requests.js';

const postgres = backends.find((backend) => backend.name === 'postgres')!;
const long = process.env.RESILIENCE_LONG === '1';
/** The error codes a client may send the same request again for (the contract's x-retryable). */
const retryable = (loadDocument('platform').components!.schemas!.ErrorCode as { 'x-retryable': string[] })['x-retryable'];
const PLATFORM_PROCESS = fileURLToPath(new URL('./platform-process.ts', import.meta.url));
const FULL_COLLECTIONS = fileURLToPath(new URL('./support/fullCollections.mjs', import.meta.url));
const STATUSES = ['paid', 'failed', 'cancelled'] as const;

if (postgres.skip) console.warn('crash.test.ts skipped: set DATABASE_URL to a PostgreSQL database to run the crash and scale tests');

describe.skipIf(postgres.skip)('crash and scale on PostgreSQL', () => {
  let database: TestDatabase;
  let databaseUrl: string;
  const registryPath = join(os.tmpdir(), `minibridge-crash-registry-${process.pid}.json`);
  const children: ChildServer[] = [];

  beforeAll(async () => {
    database = await postgres.open();
    const [{ schema }] = (await database.db.query<{ schema: string }>('SELECT current_schema() AS schema')) as [{ schema: string }];
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop(2_000)));
    await database?.dispose();
  }, 60_000);

  const platform = async (nodeFlags: string[] = []): Promise<ChildServer> => {
    const child = await startChild(PLATFORM_PROCESS, {
      nodeFlags,
      env: {
        MINIBRIDGE_REGISTRY: registryPath,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
        MINIBRIDGE_RATE_LIMIT: '1000000',
        MINIBRIDGE_RATE_BURST: '1000000',
      },
      readyTimeoutMs: 60_000,
    });
    children.push(child);
    return child;
  };
  const partners = async (miniapp: FakePartner = fakeMiniapp()) => {
    const hostapp = await fakeHostapp().start();
    await miniapp.start();
    writeFileSync(registryPath, JSON.stringify(registryFile(hostapp.url, miniapp.url)));
    return { hostapp, miniapp };
  };
  const byEventId = (requests: Received[]) => {
    const counts = new Map<string, Received[]>();
    for (const request of requests) {
      const id = String(request.headers['x-minibridge-event-id']);
      counts.set(id, [...(counts.get(id) ?? []), request]);
    }
    return counts;
  };
  const pendingOrDead = async () =>
    (await database.db.query<{ count: number }>("SELECT count(*)::int AS count FROM deliveries WHERE status <> 'delivered'"))[0]!.count;

  it('(a) callbacks queued while the miniapp server is down survive a SIGKILL, each delivered once', async () => {
    await database.truncate();
    const { hostapp, miniapp } = await partners();
    const miniappPort = Number(new URL(miniapp.url).port);
    await miniapp.stop();
    const first = await platform();
    const count = 40;
    const orders: string[] = [];
    for (let index = 0; index < count; index++) {
      const created = await createOrderPayment(first.url, `crash-a-${index}`);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      orders.push(String(created.body.order_payment_id));
    }
    await Promise.all(orders.map(async (id, index) => expect((await completeOrder(first.url, id, STATUSES[index % 3])).status).toBe(200)));
    // The first attempts fail (connection refused); the retries are seconds away when the process dies.
    await eventually(
      async () => (await database.db.query<{ count: number }>('SELECT count(*)::int AS count FROM delivery_attempts'))[0]!.count >= count,
      30_000,
      'the failed first attempts',
    );
    first.process.kill('SIGKILL');
    await first.stop();
    expect(await pendingOrDead()).toBe(count);

    await miniapp.start(miniappPort);
    const second = await platform();
    await eventually(
      () => byEventId(miniapp.requests(MINIAPP_PATHS.completeOrder)).size >= count,
      60_000,
      'every callback after the restart',
    );
    await eventually(async () => (await pendingOrDead()) === 0, 30_000, 'every delivery recorded as delivered');
    const received = miniapp.requests(MINIAPP_PATHS.completeOrder);
    const perEvent = byEventId(received);
    expect(perEvent.size).toBe(count);
    expect([...perEvent.values()].map((requests) => requests.length)).toEqual(new Array(count).fill(1));
    const delivered = new Set(received.map((request) => (request.body as { hostapp_order_payment_id: string }).hostapp_order_payment_id));
    expect([...delivered].sort()).toEqual([...orders].sort());
    await second.stop();
    await Promise.all([hostapp.stop(), miniapp.stop()]);
  }, 180_000);

  it('(b) two instances on one database deliver every transition exactly once, retries keep the event id', async () => {
    await database.truncate();
    const failures = 12;
    const miniapp = fakeMiniapp();
    miniapp.behave(MINIAPP_PATHS.completeOrder, { kind: 'failFirst', times: failures });
    const { hostapp } = await partners(miniapp);
    const instances = await Promise.all([platform(), platform()]);
    const count = 80;
    const orders = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const created = await createOrderPayment(instances[index % 2]!.url, `crash-b-${index}`);
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        return String(created.body.order_payment_id);
      }),
    );
    // Each order is completed through the other instance than the one that created it.
    await Promise.all(
      orders.map(async (id, index) =>
        expect((await completeOrder(instances[(index + 1) % 2]!.url, id, STATUSES[index % 3])).status).toBe(200),
      ),
    );
    await eventually(async () => (await pendingOrDead()) === 0, 90_000, 'every transition delivered');

    const received = miniapp.requests(MINIAPP_PATHS.completeOrder);
    const acknowledged = received.slice(failures);
    const perEvent = byEventId(acknowledged);
    expect(perEvent.size).toBe(count);
    expect([...perEvent.values()].every((requests) => requests.length === 1)).toBe(true);
    // Retried transitions: every attempt carried the same event id, numbered 1, 2, ...
    const perOrder = new Map<string, Received[]>();
    for (const request of received) {
      const order = (request.body as { hostapp_order_payment_id: string }).hostapp_order_payment_id;
      perOrder.set(order, [...(perOrder.get(order) ?? []), request]);
    }
    expect(perOrder.size).toBe(count);
    const retried = [...perOrder.values()].filter((requests) => requests.length > 1);
    expect(retried.length).toBeGreaterThan(0);
    for (const requests of perOrder.values()) {
      expect(new Set(requests.map((request) => request.headers['x-minibridge-event-id'])).size).toBe(1);
      expect(requests.map((request) => request.headers['x-minibridge-delivery-attempt'])).toEqual(
        requests.map((_, index) => String(index + 1)),
      );
    }
    await Promise.all(instances.map((instance) => instance.stop()));
    await Promise.all([hostapp.stop(), miniapp.stop()]);
  }, 180_000);

  it.skipIf(!long)(
    '(c) 60 s of E1 at 50 connections: no errors, no memory growth trend (RESILIENCE_LONG=1)',
    async () => {
      await database.truncate();
      const { hostapp, miniapp } = await partners();
      const instance = await platform(['--expose-gc', '--import', FULL_COLLECTIONS]);
      const samples: Array<{ t: number; rss: number; heap: number }> = [];
      const started = performance.now();
      const sampler = setInterval(async () => {
        const metrics = await fetch(`${instance.url}/metrics`)
          .then((response) => response.text())
          .catch(() => '');
        const heap = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN);
        samples.push({ t: (performance.now() - started) / 1000, rss: instance.rssBytes() ?? Number.NaN, heap });
      }, 1_000);
      const body = JSON.stringify({
        app_id: PARTIES.appId,
        client_id: PARTIES.clientId,
        order: { currency: 'VND', amount: '125000.50', miniapp_order_id: 'soak-[<id>]' },
      });
      // Every answer other than 2xx, by status and error_code, for the verdict and its message.
      const refused = new Map<string, number>();
      const result = await autocannon({
        url: `${instance.url}/api/v1/orders/create-order-payment/`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: miniappAuthorization },
        body,
        idReplacement: true,
        connections: 50,
        duration: 60,
        requests: [
          {
            onResponse: (status: number, answer: string) => {
              if (status >= 200 && status < 300) return;
              const code = /"error_code":"([A-Z_]+)"/.exec(String(answer))?.[1] ?? 'no error_code';
              refused.set(`${status} ${code}`, (refused.get(`${status} ${code}`) ?? 0) + 1);
            },
          },
        ],
      });
      clearInterval(sampler);
      const steady = samples.filter((sample) => sample.t >= 20 && Number.isFinite(sample.rss) && Number.isFinite(sample.heap));
      const rssSlope = slope(steady.map((sample) => [sample.t, sample.rss / 2 ** 20]));
      // The heap in use is a sawtooth (it climbs until a collection), so its plain slope depends
      // on where the last collection fell: the leak signal is the floor the collections leave, the
      // lowest sample of each 10-second window, rising. The platform runs a full collection every
      // second (FULL_COLLECTIONS), so each window's floor is what is live, not where V8's last
      // major collection happened to fall.
      const heapSlope = slope(
        floors(
          steady.map((sample) => [sample.t, sample.heap / 2 ** 20]),
          10,
        ),
      );
      const summary = `${result.requests.total} requests, ${result.non2xx} non-2xx (${JSON.stringify(Object.fromEntries(refused))}), ${result.errors} errors, ${result.timeouts} time-outs; RSS slope ${rssSlope.toFixed(3)} MiB/s, heap floor slope ${heapSlope.toFixed(3)} MiB/s over ${steady.length} samples`;
      console.log(`soak: ${summary}`);
      expect(result.requests.total, summary).toBeGreaterThan(0);
      // No error and no time-out. An answer other than 2xx only as the platform sheds load on a
      // machine the other suites share: a code the contract marks retryable (x-retryable, e.g. a
      // 503 when a statement outlived its time-out, ADR 0037), never a 500, and rarely.
      expect([result.errors, result.timeouts], summary).toEqual([0, 0]);
      const shed = (answer: string) => {
        const [status, code] = answer.split(' ');
        return retryable.includes(code!) && (Number(status) < 500 || status === '503');
      };
      expect(
        [...refused.keys()].filter((answer) => !shed(answer)),
        summary,
      ).toEqual([]);
      expect(result.non2xx, summary).toBeLessThanOrEqual(result.requests.total / 1000);
      expect(steady.length, summary).toBeGreaterThanOrEqual(30);
      // Generous: a leak of a few KiB per request at this rate shows up as whole MiB per second.
      expect(heapSlope, summary).toBeLessThan(0.5);
      expect(rssSlope, summary).toBeLessThan(1);
      await instance.stop();
      await Promise.all([hostapp.stop(), miniapp.stop()]);
    },
    180_000,
  );
});

/** Least-squares slope of y over x. */
/** The lowest point of each run of `size` consecutive points (a last, shorter run included when at least half full). */
function floors(points: Array<[number, number]>, size: number): Array<[number, number]> {
  const lows: Array<[number, number]> = [];
  for (let start = 0; start + size / 2 <= points.length; start += size) {
    const window = points.slice(start, start + size);
    lows.push(window.reduce((low, point) => (point[1] < low[1] ? point : low)));
  }
  return lows;
}

function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const numerator = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const denominator = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return denominator === 0 ? 0 : numerator / denominator;
}
