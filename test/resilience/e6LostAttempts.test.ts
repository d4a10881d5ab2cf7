/**
 * An attempt whose outcome is never recorded (its instance stopped, or lost its database, while it
 * was open) is counted lost by the next lease, which is taken at once (ADR 0037). A failed attempt
 * past the schedule's horizon ends the delivery dead; a lost one must too, or a delivery whose
 * attempts keep being lost is sent at every lease's end for ever.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import type { RetrySchedule } from '../../src/platform/delivery/retrySchedule.js';
import { describeOnBackends } from '../support/databases.js';
import { DeliveryRig } from './support/deliveryRig.js';

const schedule = operation('receiveOrderCompletion').extensions['x-retry-schedule'] as unknown as RetrySchedule;
const APP = 'ma_acknowledges';

describeOnBackends('E6 lost attempts', (backend) => {
  describe('attempts whose outcome is never recorded', () => {
    const rig = new DeliveryRig([APP]);
    beforeAll(async () => {
      rig.behaviours.set(APP, 'answer');
      await rig.start({ random: () => 0.5, backend: backend.name });
    }, 60_000);
    afterAll(() => rig.stop(), 30_000);

    /** A lease taken as an instance would, its attempt never recorded (the instance stopped). */
    async function loseAnAttempt(): Promise<void> {
      const { leaseMs } = rig.platform.config.worker;
      expect(await rig.store.outbox.claimDue({ limit: 10, leaseMs })).toHaveLength(1);
      rig.clock.advance(leaseMs + 1);
    }

    it('within the horizon: the next attempt is made, numbered after the lost one', async () => {
      const id = await rig.enqueue(APP);
      await loseAnAttempt();
      const claimed = await rig.worker.tick();
      expect(claimed.map((c) => [c.delivery.delivery_id, c.attempt, c.follows_lost_attempt])).toEqual([[id, 2, true]]);
      await rig.worker.settled();
      expect(rig.arrivals.filter((a) => a.attempt === 2)).toHaveLength(1);
      const delivery = (await rig.store.outbox.get(id))!;
      expect(delivery).toMatchObject({ status: 'delivered', attempts_made: 2 });
      expect(delivery.attempts.map((a) => a.outcome)).toEqual(['failed', 'delivered']);
    });

    it('past the horizon: no attempt is made after a lost one; the delivery ends dead, as after a failed one', async () => {
      const id = await rig.enqueue(APP);
      const arrivals = rig.arrivals.length;
      await loseAnAttempt();
      rig.clock.advance(schedule.horizonMs);
      await loseAnAttempt();
      const claimed = await rig.worker.tick();
      expect(claimed.map((c) => [c.delivery.delivery_id, c.attempt, c.follows_lost_attempt])).toEqual([[id, 3, true]]);
      await rig.worker.settled();
      expect(rig.arrivals.length, 'requests to the miniapp').toBe(arrivals);
      const delivery = (await rig.store.outbox.get(id))!;
      expect(delivery).toMatchObject({ status: 'dead', attempts_made: 3 });
      expect(delivery.attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'failed']);
      expect(delivery.attempts.at(-1)!.error).toMatch(/^not made: the attempt before it was lost/);
      // Nothing more is claimed, however long the wait.
      rig.clock.advance(365 * 24 * 3_600_000);
      expect(await rig.worker.tick()).toEqual([]);
    });
  });
});
