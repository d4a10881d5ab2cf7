/**
 * Reconciliation on two instances sharing PostgreSQL, one killed mid-sweep (ADR 0039;
 * DATABASE_URL, skipped without it). A batch of payments the host app never reported is made
 * due at once; both instances reconcile it while the host app answers `paid` slowly, and one is
 * SIGKILLed with asks in flight. Every payment is settled once: one transition, one E6 each,
 * and the host app is asked once per payment but for the asks the killed instance had open,
 * which are asked again when their leases end (at most the published in-flight cap of them).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import type { ReconcilePolicy } from '../../src/platform/payments/lifecycle.js';
import { backends, openPlatformDatabase, type PlatformDatabase } from '../support/databases.js';
import { startChild, type ChildServer } from './support/childProcess.js';
import { FakePartner, fakeMiniapp, HOSTAPP_PATHS, MINIAPP_PATHS } from './support/fakePartner.js';
import { eventually } from './support/platformHarness.js';
import { registryFile } from './support/registry.js';
import { createOrderPayment } from './support/requests.js';

const postgres = backends.find((backend) => backend.name === 'postgres')!;
const PLATFORM_PROCESS = fileURLToPath(new URL('./platform-process.ts', import.meta.url));
const policy = operation('getHostappPaymentStatus').extensions['x-reconciliation'] as unknown as ReconcilePolicy;

if (postgres.skip) console.warn('reconcileInstances.test.ts skipped: set DATABASE_URL to a PostgreSQL database');

describe.skipIf(postgres.skip)('reconciliation on two instances through a SIGKILL (PostgreSQL)', () => {
  let database: PlatformDatabase;
  let db: pg.Client;
  const registryPath = join(os.tmpdir(), `minibridge-reconcile-registry-${process.pid}.json`);
  const children: ChildServer[] = [];
  let next = 0;
  // A host app that creates payments and answers every E4 `paid`, slowly, and never sends E5.
  const hostapp = new FakePartner({
    [HOSTAPP_PATHS.createOrderPayment]: () => ({ order_payment_id: `hop_reconcile_${process.pid}_${next++}` }),
    [HOSTAPP_PATHS.paymentStatus]: (request) => {
      const query = request.body as Record<string, string>;
      return { app_id: query.app_id, client_id: query.client_id, order_payment_id: query.order_payment_id, payment_status: 'paid' };
    },
  });
  const miniapp = fakeMiniapp();

  beforeAll(async () => {
    database = await openPlatformDatabase('postgres');
    db = new pg.Client({ connectionString: database.config.databaseUrl });
    await hostapp.start();
    await miniapp.start();
    writeFileSync(registryPath, JSON.stringify(registryFile(hostapp.url, miniapp.url)));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop(2_000)));
    await db?.end().catch(() => undefined);
    await Promise.all([hostapp.stop(), miniapp.stop()]);
    await database?.dispose();
  }, 60_000);

  const instance = async (reconciler: 'on' | 'off' = 'on') => {
    const child = await startChild(PLATFORM_PROCESS, {
      env: {
        MINIBRIDGE_REGISTRY: registryPath,
        DATABASE_URL: database.config.databaseUrl,
        MINIBRIDGE_SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
        LOG_LEVEL: 'warn',
        MINIBRIDGE_RATE_LIMIT: '1000000',
        MINIBRIDGE_RATE_BURST: '1000000',
        MINIBRIDGE_RECONCILER: reconciler,
        MINIBRIDGE_RECONCILER_POLL_MS: '100',
        MINIBRIDGE_WORKER_POLL_MS: '100',
      },
      readyTimeoutMs: 60_000,
    });
    children.push(child);
    return child;
  };

  it('settles each stale payment once, with one E6 each, while one instance is killed mid-sweep', async () => {
    const count = 60;
    // Payments made through an instance that does not reconcile, so none is asked before the test says.
    const maker = await instance('off');
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const created = await createOrderPayment(maker.url, `reconcile-${process.pid}-${index}`);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      ids.push(String(created.body.order_payment_id));
    }
    await maker.stop();
    hostapp.behave(HOSTAPP_PATHS.paymentStatus, { kind: 'slow', ms: 300 });
    await db.connect();
    // Due now, rather than after the host app's reconcile delay: the test does not wait it out.
    await db.query("UPDATE order_payments SET reconcile_next_at = now() - interval '1 second' WHERE payment_status = 'in_process'");

    const [doomed, survivor] = [await instance(), await instance()];
    await eventually(() => hostapp.count(HOSTAPP_PATHS.paymentStatus) >= 12, 30_000, 'asks under way on both instances');
    doomed!.process.kill('SIGKILL');
    await doomed!.stop();
    const askedAtKill = hostapp.count(HOSTAPP_PATHS.paymentStatus);

    const settled = async () =>
      (await db.query<{ count: number }>("SELECT count(*)::int AS count FROM order_payments WHERE payment_status = 'paid'")).rows[0]!.count;
    // Asks the killed instance had open come back when their leases end (six E4 time-outs).
    await eventually(async () => (await settled()) === count, 90_000, 'every payment settled');
    await eventually(
      async () =>
        (await db.query<{ count: number }>("SELECT count(*)::int AS count FROM deliveries WHERE status = 'delivered'")).rows[0]!.count ===
        count,
      60_000,
      'every E6 delivered',
    );
    expect(survivor!.process.exitCode).toBeNull();

    const rows = (
      await db.query<{ order_payment_id: string; settled_by: string; deliveries: number; history: number }>(
        `SELECT p.order_payment_id, p.settled_by,
           (SELECT count(*)::int FROM deliveries d WHERE d.order_payment_id = p.order_payment_id) AS deliveries,
           (SELECT count(*)::int FROM payment_status_history h WHERE h.order_payment_id = p.order_payment_id) AS history
         FROM order_payments p`,
      )
    ).rows;
    expect(rows.map((row) => row.order_payment_id).sort()).toEqual([...ids].sort());
    expect(rows.filter((row) => row.settled_by !== 'reconciliation' || row.deliveries !== 1 || row.history !== 2)).toEqual([]);
    // Each E6 reached the miniapp under one event id.
    const eventIds = new Set(
      miniapp.requests(MINIAPP_PATHS.completeOrder).map((request) => String(request.headers['x-minibridge-event-id'])),
    );
    expect(eventIds.size).toBe(count);
    // Once per payment, plus at most the asks the killed instance had open (the in-flight cap).
    const asks = hostapp.requests(HOSTAPP_PATHS.paymentStatus);
    const perPayment = new Map<string, number>();
    for (const request of asks) {
      const id = (request.body as { order_payment_id: string }).order_payment_id;
      perPayment.set(id, (perPayment.get(id) ?? 0) + 1);
    }
    expect(perPayment.size).toBe(count);
    expect(asks.length).toBeGreaterThanOrEqual(count);
    expect(asks.length - count).toBeLessThanOrEqual(policy.maxInFlight);
    expect(Math.max(...perPayment.values())).toBeLessThanOrEqual(2);
    expect(askedAtKill).toBeLessThan(count + policy.maxInFlight);
  }, 240_000);
});
