/**
 * E6 answers whose description the store could not keep: a miniapp server that answers HTTP 200
 * with bytes the JSON parser refuses quotes them back in the parser's message, a NUL among them,
 * which PostgreSQL cannot store in text. The attempt must still be recorded as failed (with its
 * schedule), and the delivery given up at the horizon like any other (ADR 0008).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import type { RetrySchedule } from '../../src/platform/delivery/retrySchedule.js';
import { describeOnBackends } from '../support/databases.js';
import { DeliveryRig } from './support/deliveryRig.js';

const schedule = operation('receiveOrderCompletion').extensions['x-retry-schedule'] as unknown as RetrySchedule;
const NUL_APP = 'ma_answers_nul';
const PLAIN_APP = 'ma_answers_plain';

describeOnBackends('E6 answers quoted back in errors', (backend) => {
  describe('HTTP 200 with a raw NUL byte for a body', () => {
    const rig = new DeliveryRig([NUL_APP, PLAIN_APP]);
    beforeAll(async () => {
      rig.behaviours.set(NUL_APP, { status: 200, raw: '\0' });
      await rig.start({ random: () => 0.5, backend: backend.name });
    }, 60_000);
    afterAll(() => rig.stop(), 30_000);

    it('is recorded as a failed attempt with its retry, then the delivery dies at the horizon', async () => {
      const id = await rig.enqueue(NUL_APP);
      const plain = await rig.enqueue(PLAIN_APP);
      await rig.worker.tick();
      await rig.worker.settled();
      expect(await rig.store.outbox.get(plain)).toMatchObject({ status: 'delivered', attempts_made: 1 });
      const first = (await rig.store.outbox.get(id))!;
      expect(first).toMatchObject({ status: 'pending', attempts_made: 1 });
      expect(new Date(first.next_attempt_at!).getTime() - rig.clock.now().getTime()).toBe(schedule.firstDelayMs);
      expect(first.attempts).toHaveLength(1);
      expect(first.attempts[0]).toMatchObject({ attempt: 1, outcome: 'failed', http_status: 200 });
      expect(first.attempts[0]!.error).toMatch(/not UTF-8 JSON/);
      expect(first.attempts[0]!.error).not.toContain('\0');

      // Past the horizon the next failure ends the schedule: dead, not tried again a lease later.
      rig.clock.advance(schedule.horizonMs + 1);
      expect((await rig.worker.tick()).map((c) => [c.delivery.delivery_id, c.attempt])).toEqual([[id, 2]]);
      await rig.worker.settled();
      expect(await rig.store.outbox.get(id)).toMatchObject({ status: 'dead', attempts_made: 2 });
      expect(await rig.worker.tick()).toEqual([]);
    }, 60_000);
  });
});
