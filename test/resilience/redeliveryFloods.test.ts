/**
 * Redelivery storms against a slow miniapp (ADR 0038): however many redeliveries arrive, and
 * whatever their deliveries' state, the miniapp never has more than `x-max-in-flight` attempts
 * open, never two for one delivery, and every attempt it received is one the record shows.
 * The worker runs tick by tick on a hand-moved clock (DeliveryRig), so "nothing more was
 * claimed" is read from the claims, not waited for.
 */
import { afterEach, expect, test } from 'vitest';
import { redeliver } from '../../src/platform/delivery/redelivery.js';
import { deliveryLimits } from '../../src/platform/delivery/deliveryLimits.js';
import { describeOnBackends } from '../support/databases.js';
import { DeliveryRig, until } from './support/deliveryRig.js';

const operator = { type: 'operator' as const, id: null };

describeOnBackends('redelivery storms', (backend) => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.stop();
    rig = undefined;
  });

  test('forty deliveries, each redelivered three times while sixteen hang: never past the bound, never twice at once, every attempt recorded', async () => {
    const bound = deliveryLimits().maxInFlightPerMiniapp;
    rig = await new DeliveryRig(['ma_slow']).start({ backend: backend.name, random: () => 0.5 });
    rig.behaviours.set('ma_slow', 'hang');
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await rig.enqueue('ma_slow'));
    expect(await rig.worker.tick()).toHaveLength(bound);
    await until(() => rig!.openNow('ma_slow') === bound, 10_000, 'the bound of attempts open at the miniapp');

    // The storm: every delivery redelivered three times at once, in flight or waiting for a slot.
    const answers = await Promise.all(
      [...ids, ...ids, ...ids].map((deliveryId) => redeliver(rig!.platform, { deliveryId, actor: operator })),
    );
    expect(answers.every((delivery) => delivery.status === 'pending')).toBe(true);
    // No lease was cleared, so no claim has anything to give: the bound holds, and no delivery is attempted twice at once.
    expect(await rig.worker.tick()).toEqual([]);
    const leases = await rig.store.db.query<{ live: number }>(
      'SELECT count(*)::int AS live FROM deliveries WHERE app_id = $1 AND lease_until >= $2',
      ['ma_slow', rig.clock.now()],
    );
    expect(leases[0]!.live).toBe(bound);

    // The miniapp recovers: everything drains, the failed attempts retried on the schedule.
    rig.behaviours.set('ma_slow', 'answer');
    rig.releaseHanging();
    await until(() => rig!.worker.attemptsInFlight === 0, 20_000, 'the hanging attempts to be recorded');
    for (let round = 0; round < 10 && (await rig.store.outbox.countPending()) > 0; round++) {
      rig.clock.advance(60_000);
      await rig.worker.tick();
      await rig.worker.settled();
    }
    expect(await rig.store.outbox.countPending()).toBe(0);
    expect(rig.maxOpen.get('ma_slow')).toBe(bound);

    // The record agrees with what the miniapp saw: one recorded attempt per arrival, numbered in order.
    const recorded = await rig.store.db.query<{ event_id: string; attempts_made: number }>(
      'SELECT event_id, attempts_made FROM deliveries WHERE app_id = $1',
      ['ma_slow'],
    );
    const arrivals = new Map<string, number[]>();
    for (const arrival of rig.arrivals) arrivals.set(arrival.eventId, [...(arrivals.get(arrival.eventId) ?? []), arrival.attempt]);
    for (const { event_id, attempts_made } of recorded)
      expect(arrivals.get(event_id), event_id).toEqual(Array.from({ length: attempts_made }, (_, index) => index + 1));
    // The sixteen that hung were answered 503 and tried once more; the other twenty-four once.
    expect(rig.arrivals).toHaveLength(40 + bound);
  });

  test('a delivered callback redelivered forty times while the miniapp takes its time: one request open at once, each redelivery audited on both sides', async () => {
    rig = await new DeliveryRig(['ma_slow']).start({ backend: backend.name, random: () => 0.5 });
    const [deliveryId] = [await rig.enqueue('ma_slow')];
    await rig.worker.tick();
    await rig.worker.settled();
    expect(rig.arrivals).toHaveLength(1);

    rig.behaviours.set('ma_slow', 'hang');
    let open = 0;
    for (let i = 0; i < 40; i++) {
      await redeliver(rig.platform, { deliveryId: deliveryId!, actor: { type: 'hostapp', id: 'ha_superapp' } });
      open += (await rig.worker.tick()).length;
    }
    // The first redelivery queued one attempt; the thirty-nine after it joined that attempt.
    expect(open).toBe(1);
    await until(() => rig!.arrivals.length === 2, 10_000, 'the redelivered attempt');
    expect(rig.maxOpen.get('ma_slow')).toBe(1);
    expect(rig.arrivals.map((arrival) => arrival.attempt)).toEqual([1, 2]);
    for (const [type, id] of [
      ['miniapps', 'ma_slow'],
      ['hostapps', 'ha_superapp'],
    ] as const) {
      const audit = await rig.store.partners.auditPage(type, id, 100, undefined);
      const redeliveries = audit.entries.filter((entry) => entry.action === 'redeliver');
      expect(redeliveries, `${type}/${id}`).toHaveLength(40);
      expect(redeliveries.every((entry) => entry.actor.type === 'hostapp' && entry.actor.id === 'ha_superapp')).toBe(true);
    }
    rig.behaviours.set('ma_slow', 'answer');
    rig.releaseHanging();
  });
});
