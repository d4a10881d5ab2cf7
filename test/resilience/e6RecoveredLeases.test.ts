/**
 * A lease whose statement's answer the database lost is found again once it is back (ADR 0037)
 * and its attempt started then. The lease must still cover that attempt as any lease does (ADR
 * 0008: at least twice the E6 time-out): found with a few seconds left, it ran out while its
 * attempt was still open, and the next claim sent the same delivery again alongside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryLimits } from '../../src/platform/delivery/deliveryLimits.js';
import { createStore, DatabaseUnavailableError, type Store } from '../../src/platform/store/index.js';
import { describeOnBackends } from '../support/databases.js';
import { DeliveryRig, until } from './support/deliveryRig.js';

const APP = 'ma_hangs';
const { timeoutMs } = deliveryLimits();

/** The rig's store over its database, but the answers of its next `count` statements are lost after they committed. */
function answersLost(rig: DeliveryRig, count: number): Store {
  let left = count;
  const lose = async <T>(statement: () => Promise<T>): Promise<T> => {
    const result = await statement();
    if (left-- > 0) throw new DatabaseUnavailableError('the database connection failed');
    return result;
  };
  const db = rig.store.db;
  return createStore(
    { ...db, query: (sql, params) => lose(() => db.query(sql, params)), transaction: (fn) => lose(() => db.transaction(fn)) },
    { clock: rig.clock.now },
  );
}

describeOnBackends('E6 recovered leases', (backend) => {
  describe('a claim whose answer was lost, found again late in its lease', () => {
    const rig = new DeliveryRig([APP]);
    beforeAll(async () => {
      rig.behaviours.set(APP, 'hang');
      await rig.start({ random: () => 0.5, backend: backend.name });
    }, 60_000);
    afterAll(() => rig.stop(), 30_000);

    it('is leased again for its attempt, so no claim sends the delivery a second time while it is open', async () => {
      const { leaseMs } = rig.platform.config.worker;
      const id = await rig.enqueue(APP);
      (rig.platform as { store: Store }).store = answersLost(rig, 1);
      await expect(rig.worker.tick()).rejects.toBeInstanceOf(DatabaseUnavailableError);

      // The database answers again with less of the lease left than one attempt may take.
      rig.clock.advance(leaseMs - timeoutMs / 2);
      expect((await rig.worker.tick()).map((c) => [c.delivery.delivery_id, c.attempt])).toEqual([[id, 1]]);
      await until(() => rig.arrivals.length === 1, 10_000, 'the recovered attempt to arrive');

      // Still open at the miniapp within the E6 time-out, past where the old lease ended.
      rig.clock.advance(timeoutMs / 2 + 1_000);
      expect(await rig.worker.tick()).toEqual([]);
      expect(rig.openNow(APP)).toBe(1);
      expect(rig.arrivals.map((a) => a.attempt)).toEqual([1]);

      // The attempt ends (failed) and is recorded under the lease it was made under.
      rig.releaseHanging();
      await rig.worker.settled();
      expect(await rig.store.outbox.get(id)).toMatchObject({ status: 'pending', attempts_made: 1 });
      expect((await rig.store.outbox.get(id))!.attempts.map((a) => [a.attempt, a.http_status])).toEqual([[1, 503]]);
    }, 60_000);
  });
});
