/**
 * The embedded database fails under the platform (ADR 0037): PGlite fails where a file system
 * does. A full disk refuses writes while reads go on; a closed (or broken) PGlite refuses
 * everything. Either way the process stays up, every answer is the contract's (UNKNOWN_ERROR,
 * retryable), /readyz says what it can, and a disk with room again serves as before, E6 included.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { EmbeddedPglite as PGlite } from '../../src/platform/store/pgliteThread.js';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createPglite, pgliteDb } from '../../src/platform/store/db.js';
import { createStore, openStore } from '../../src/platform/store/index.js';
import { migrate } from '../../src/platform/store/migrate.js';
import { e1Body, PlatformHarness } from '../support/platformHarness.js';

describe('the platform on PGlite survives its database', () => {
  const harnesses: PlatformHarness[] = [];
  const cleanups: Array<() => void> = [];
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((harness) => harness.stop()));
    for (const cleanup of cleanups.splice(0)) cleanup();
  }, 60_000);

  let next = 0;
  /** A harness whose host app creates a payment per E3 and whose miniapp acknowledges every E6. */
  function partnered(): PlatformHarness {
    const harness = new PlatformHarness();
    harness.hostapp.on('/create-order-payment', (_request: unknown, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_fault_${++next}` })),
    );
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' });
    harnesses.push(harness);
    return harness;
  }

  async function completeAndExpectE6(harness: PlatformHarness): Promise<void> {
    const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(created.status, created.text).toBe(200);
    const id = created.body.order_payment_id as string;
    const completed = await harness.call(
      'completeOrder',
      { order_payment_id: id, app_id: 'ma_test', client_id: 'ha_test', payment_status: 'paid' },
      { authorization: harness.hostappBasic() },
    );
    expect(completed.status, completed.text).toBe(200);
    await harness.eventually(
      'the E6 delivered',
      async () => (await harness.deliveriesOf(id)).every((d) => d.status === 'delivered') && true,
    );
  }

  it('a closed PGlite: contract answers, /readyz 503 naming the database, no crash', async () => {
    let pglite: PGlite | undefined;
    const store = (async () => {
      pglite = await createPglite('memory://');
      const db = pgliteDb(pglite);
      await migrate(db);
      return createStore(db);
    })();
    const harness = await partnered().start({ store });
    await completeAndExpectE6(harness);

    await pglite!.close();
    const refused = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error_code: 'UNKNOWN_ERROR' });
    expect(refused.body.error_message).toMatch(/database/);
    const status = await harness.call(
      'getPaymentStatus',
      { order_payment_id: 'hop_1', app_id: 'ma_test', client_id: 'ha_test' },
      { authorization: harness.miniappAuth() },
    );
    expect(status.body).toMatchObject({ error_code: 'UNKNOWN_ERROR' });
    const ready = await harness.call('getReadiness', undefined);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'not_ready', checks: { database: 'failing' } });
    // The process keeps answering what needs no database.
    expect((await harness.call('getHealth', undefined)).status).toBe(200);
  });

  it('a full disk: writes refused with the contract error, reads go on, and it serves again once there is room', async (context) => {
    const mountPoint = mkdtempSync(join(os.tmpdir(), 'minibridge-full-disk-'));
    try {
      // A file system of its own, small enough to fill: only where the test may mount one (root).
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      rmSync(mountPoint, { recursive: true, force: true });
      console.warn('pgliteFaults.test.ts: the full-disk case is skipped: mounting a tmpfs needs root');
      context.skip();
    }
    cleanups.push(() => {
      execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
      rmSync(mountPoint, { recursive: true, force: true });
    });
    const dataDir = join(mountPoint, 'pglite');
    mkdirSync(dataDir);
    const harness = await partnered().start({ store: openStore({ pgliteDataDir: dataDir }) });
    await completeAndExpectE6(harness);
    const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    const waiting = created.body.order_payment_id as string;

    // Everything the disk has left goes to a file that is not the database's.
    const filler = join(mountPoint, 'filler');
    try {
      writeFileSync(filler, Buffer.alloc(96 * 1024 * 1024));
    } catch (error) {
      expect((error as { code?: string }).code).toBe('ENOSPC');
    }
    // Writes go on while the pages and log segments already on disk have room; the first that
    // needs more is refused, with the contract's retryable error, and so is every write after it.
    let refused: Awaited<ReturnType<PlatformHarness['call']>> | undefined;
    for (let index = 0; index < 2_000 && !refused; index++) {
      const answer = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
      if (answer.status !== 200) refused = answer;
    }
    expect(refused?.body).toMatchObject({ error_code: 'UNKNOWN_ERROR' });
    expect(refused?.body.error_message).toMatch(/disk is full/);
    // Reads need no room: the platform still answers what it has on record.
    const status = await harness.call(
      'getPaymentStatus',
      { order_payment_id: 'hop_unknown', app_id: 'ma_test', client_id: 'ha_test' },
      { authorization: harness.miniappAuth() },
    );
    expect(status.body).toMatchObject({ error_code: 'ORDER_NOT_FOUND' });
    expect(await harness.deliveriesOf(waiting)).toEqual([]);

    rmSync(filler);
    await completeAndExpectE6(harness);
    const retried = await harness.call(
      'completeOrder',
      { order_payment_id: waiting, app_id: 'ma_test', client_id: 'ha_test', payment_status: 'paid' },
      { authorization: harness.hostappBasic() },
    );
    expect(retried.status, retried.text).toBe(200);
    await harness.eventually('the retried E5 delivered', async () => {
      const deliveries = await harness.deliveriesOf(waiting);
      return deliveries.length === 1 && deliveries[0]!.status === 'delivered';
    });
    expect((await harness.call('getReadiness', undefined)).status).toBe(200);
  }, 120_000);
});
