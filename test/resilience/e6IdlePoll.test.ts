/**
 * The E6 worker's loop when idle (ADR 0046): a poll that nothing woke first asks whether anything
 * is due (one indexed read) and claims only when something is; a wake-up (a delivery queued, a
 * slot freed) claims at once without asking. Real timers; every wait is bounded.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { TestBackend } from '../support/databases.js';
import { describeOnBackends } from '../support/databases.js';
import { DeliveryRig } from './support/deliveryRig.js';

const APP = 'ma_idle';

/** A rig whose worker loop polls every `pollMs`, with the outbox's asks and claims counted. */
async function countingRig(backend: TestBackend['name'], pollMs: number) {
  const rig = await new DeliveryRig([APP], { pollMs, batchSize: 50, leaseMs: 60_000 }).start({ backend });
  rig.behaviours.set(APP, 'answer');
  const calls = { anyDue: 0, claimDue: 0 };
  const outbox = rig.store.outbox;
  const anyDue = outbox.anyDue.bind(outbox);
  const claimDue = outbox.claimDue.bind(outbox);
  outbox.anyDue = () => (calls.anyDue++, anyDue());
  outbox.claimDue = (options) => (calls.claimDue++, claimDue(options));
  return { rig, calls };
}

const deliveredWithin = (rig: DeliveryRig, deliveryId: string, timeout: number) =>
  expect.poll(async () => (await rig.store.outbox.get(deliveryId))?.status, { timeout, interval: 10 }).toBe('delivered');

describeOnBackends('E6 worker idle polls', (backend) => {
  describe('the loop', () => {
    it('polls with one read while nothing is due, and claims once a poll finds a delivery due', async () => {
      const { rig, calls } = await countingRig(backend.name, 20);
      try {
        rig.worker.start();
        // The first round claims (nothing is known yet); the polls after it only ask.
        await expect.poll(() => calls.anyDue, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(5);
        expect(calls.claimDue).toBe(1);
        // Queued without a wake-up, as another instance's write is: a poll finds it and claims it.
        const id = await rig.enqueue(APP);
        await deliveredWithin(rig, id, 10_000);
        expect(calls.claimDue).toBeGreaterThanOrEqual(2);
        expect(rig.arrivals.map((arrival) => arrival.appId)).toEqual([APP]);
      } finally {
        await rig.stop();
      }
    }, 60_000);

    it('a wake-up claims at once, without asking first', async () => {
      // A poll interval far longer than the test: only wake-ups move the loop.
      const { rig, calls } = await countingRig(backend.name, 600_000);
      try {
        rig.worker.start();
        await expect.poll(() => calls.claimDue, { timeout: 10_000, interval: 10 }).toBe(1);
        const id = await rig.enqueue(APP);
        // Nothing woke the worker and no poll is due: the delivery waits.
        await sleep(200);
        expect((await rig.store.outbox.get(id))?.status).toBe('pending');
        rig.worker.wake();
        await deliveredWithin(rig, id, 10_000);
        expect(calls.anyDue).toBe(0);
        expect(calls.claimDue).toBeGreaterThanOrEqual(2);
      } finally {
        await rig.stop();
      }
    }, 60_000);
  });
});
