/**
 * The reconciler's loop when idle (ADR 0050): a poll that nothing woke first asks whether any
 * payment is due (one read, no lock) and claims only when one is; a wake-up (an ask finished and
 * freed its host app's slot) claims at once without asking. Real timers for the loop, the rig's
 * clock moved by hand for what is due; every wait is bounded.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { TestBackend } from '../support/databases.js';
import { describeOnBackends } from '../support/databases.js';
import { RIG_RECONCILE_AFTER_SECONDS, ReconcileRig } from './support/reconcileRig.js';

/** A rig whose reconciler loop polls every `pollMs`, with the store's asks and claims counted. */
async function countingRig(backend: TestBackend['name'], pollMs: number) {
  const rig = await new ReconcileRig().start({ backend });
  (rig.platform.config.reconciler as { pollMs: number }).pollMs = pollMs;
  const calls = { anyDue: 0, claimDue: 0 };
  const reconciliation = rig.store.reconciliation;
  const anyDue = reconciliation.anyDue.bind(reconciliation);
  const claimDue = reconciliation.claimDue.bind(reconciliation);
  reconciliation.anyDue = () => (calls.anyDue++, anyDue());
  reconciliation.claimDue = (options) => (calls.claimDue++, claimDue(options));
  return { rig, calls };
}

const askedWithin = (rig: ReconcileRig, orderPaymentId: string, timeout: number) =>
  expect.poll(() => rig.asksOf(orderPaymentId).length, { timeout, interval: 10 }).toBeGreaterThanOrEqual(1);

describeOnBackends('reconciler idle polls', (backend) => {
  describe('the loop', () => {
    it('polls with one read while nothing is due, and claims once a poll finds a payment due', async () => {
      const { rig, calls } = await countingRig(backend.name, 20);
      try {
        // In process but not due for another ten seconds of the rig's clock: every poll only asks.
        const [payment] = await rig.create(1);
        rig.reconciler.start();
        await expect.poll(() => calls.anyDue, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(5);
        // The first round claims (nothing is known yet); the polls after it found nothing due.
        expect(calls.claimDue).toBe(1);
        expect(rig.requests).toEqual([]);
        // Due now, with nothing to wake the loop (as a payment another instance recorded): a poll finds it.
        rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
        await askedWithin(rig, payment!.order_payment_id, 10_000);
        expect(calls.claimDue).toBeGreaterThanOrEqual(2);
      } finally {
        await rig.stop();
      }
    }, 60_000);

    it('a wake-up claims at once, without asking first', async () => {
      // A poll interval far longer than the test: only wake-ups move the loop.
      const { rig, calls } = await countingRig(backend.name, 600_000);
      try {
        rig.reconciler.start();
        await expect.poll(() => calls.claimDue, { timeout: 10_000, interval: 10 }).toBe(1);
        const [payment] = await rig.create(1);
        rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
        // Due, but nothing woke the loop and no poll is due: the payment waits.
        await sleep(200);
        expect(rig.asksOf(payment!.order_payment_id)).toEqual([]);
        rig.reconciler.wake();
        await askedWithin(rig, payment!.order_payment_id, 10_000);
        expect(calls.anyDue).toBe(0);
        expect(calls.claimDue).toBeGreaterThanOrEqual(2);
      } finally {
        await rig.stop();
      }
    }, 60_000);
  });
});
