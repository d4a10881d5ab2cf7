/**
 * The E6 retry schedule, driven through the worker and the outbox with a clock moved by hand:
 * each delay, from the first past the doubling up to the cap and on to the 72-hour horizon,
 * must be what the contract's `x-retry-schedule` states. The expected delays are computed here
 * from the contract's numbers, not by the code under test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import { nextAttemptAt, type RetrySchedule } from '../../src/platform/delivery/retrySchedule.js';
import { describeOnBackends } from '../support/databases.js';
import { DeliveryRig } from './support/deliveryRig.js';

const schedule = operation('receiveOrderCompletion').extensions['x-retry-schedule'] as unknown as RetrySchedule;
const APP = 'ma_always_failing';

/** The nominal delay after failed attempt `attempt` (1-based), straight from the contract. */
function nominalDelay(attempt: number): number {
  let delay = schedule.firstDelayMs;
  for (let i = 1; i < attempt; i++) delay = Math.min(delay * schedule.multiplier, schedule.maxDelayMs);
  return delay;
}

describeOnBackends('E6 schedule', (backend) => {
  describe('E6 back-off through the worker (no jitter: random() = 0.5)', () => {
    const rig = new DeliveryRig([APP]);
    beforeAll(async () => {
      rig.behaviours.set(APP, 'fail');
      await rig.start({ random: () => 0.5, backend: backend.name });
    }, 60_000);
    afterAll(() => rig.stop(), 30_000);

    it('waits the first delay, doubles it up to the cap, stays at the cap, and ends dead at the horizon', async () => {
      expect(schedule.multiplier).toBeGreaterThan(1);
      expect(schedule.maxDelayMs).toBeGreaterThan(schedule.firstDelayMs * schedule.multiplier);
      const id = await rig.enqueue(APP);
      const createdAt = rig.clock.now().getTime();
      const delays: number[] = [];
      for (let attempt = 1; ; attempt++) {
        const claimed = await rig.worker.tick();
        expect(claimed.map((c) => [c.delivery.delivery_id, c.attempt])).toEqual([[id, attempt]]);
        await rig.worker.settled();
        const delivery = (await rig.store.outbox.get(id))!;
        expect(delivery.attempts_made).toBe(attempt);
        if (delivery.status === 'dead') {
          // The next attempt would have fallen past the horizon.
          expect(rig.clock.now().getTime() + nominalDelay(attempt)).toBeGreaterThan(createdAt + schedule.horizonMs);
          break;
        }
        expect(delivery.status).toBe('pending');
        const due = new Date(delivery.next_attempt_at!).getTime();
        delays.push(due - rig.clock.now().getTime());
        expect(delays.at(-1), `delay after attempt ${attempt}`).toBe(nominalDelay(attempt));
        // Not a moment early: one millisecond before it is due, nothing is claimed.
        rig.clock.advance(due - rig.clock.now().getTime() - 1);
        expect(await rig.worker.tick()).toEqual([]);
        rig.clock.advance(1);
      }
      expect(delays).toEqual(delays.map((_, i) => nominalDelay(i + 1)));
      expect(delays[1]).toBe(schedule.firstDelayMs * schedule.multiplier);
      const atCap = delays.filter((delay) => delay === schedule.maxDelayMs).length;
      expect(atCap).toBeGreaterThan(2);
      expect(Math.max(...delays)).toBe(schedule.maxDelayMs);

      // Redelivered once dead: a fresh schedule, whose back-off starts again from its first delay
      // (not from the cap its earlier attempts had reached), numbered on from the last attempt.
      const made = (await rig.store.outbox.get(id))!.attempts_made;
      const redeliveredAt = rig.clock.now().getTime();
      expect(await rig.store.outbox.requeue(id)).toMatchObject({ coalesced: false, delivery: { status: 'pending' } });
      for (let again = 1; again <= 3; again++) {
        const claimed = await rig.worker.tick();
        expect(claimed.map((c) => [c.attempt, c.schedule_attempt])).toEqual([[made + again, again]]);
        await rig.worker.settled();
        const delivery = (await rig.store.outbox.get(id))!;
        expect(delivery.status).toBe('pending');
        const due = new Date(delivery.next_attempt_at!).getTime();
        expect(due - rig.clock.now().getTime(), `delay after the redelivery's attempt ${again}`).toBe(nominalDelay(again));
        rig.clock.advance(due - rig.clock.now().getTime());
      }
      expect(rig.clock.now().getTime() - redeliveredAt).toBe(nominalDelay(1) + nominalDelay(2) + nominalDelay(3));
    }, 120_000);
  });
});
describe('E6 back-off schedule (nextAttemptAt)', () => {
  const start = new Date('2026-01-15T10:00:00.000Z');

  it('grows by the multiplier from the first delay and never passes the cap', () => {
    let capped = 0;
    for (let attempt = 1; attempt <= 40; attempt++) {
      const at = nextAttemptAt(schedule, attempt, start, start, () => 0.5)!;
      expect(at.getTime() - start.getTime()).toBe(nominalDelay(attempt));
      if (nominalDelay(attempt) === schedule.maxDelayMs) capped++;
    }
    expect(capped).toBeGreaterThan(20);
  });

  it('spreads each delay by ±jitter, after the cap', () => {
    for (const attempt of [1, 2, 5, 30]) {
      const low = nextAttemptAt(schedule, attempt, start, start, () => 0)!.getTime() - start.getTime();
      const high = nextAttemptAt(schedule, attempt, start, start, () => 1)!.getTime() - start.getTime();
      expect(low).toBeCloseTo(nominalDelay(attempt) * (1 - schedule.jitter), 6);
      expect(high).toBeCloseTo(nominalDelay(attempt) * (1 + schedule.jitter), 6);
    }
  });

  it('ends the schedule when the next attempt would fall past the horizon', () => {
    const late = new Date(start.getTime() + schedule.horizonMs - schedule.maxDelayMs / 2);
    expect(nextAttemptAt(schedule, 30, start, late, () => 0.5)).toBeNull();
    const early = new Date(start.getTime() + schedule.horizonMs - schedule.maxDelayMs * 2);
    expect(nextAttemptAt(schedule, 30, start, early, () => 0.5)).not.toBeNull();
  });
});
