/**
 * Active reconciliation (ADR 0039), driven through the reconciler and the store with a clock
 * moved by hand, on each backend. The expected schedule is computed here from the contract's
 * `x-reconciliation`, not by the code under test. What it proves: a host app that never sends
 * E5 gets its payment settled by one E4 and one E6; one that answers `in_process` forever has
 * it asked on the published schedule, stuck after its expiry, asked slowly until the final
 * horizon and never decided by the platform; one that is down is backed off from and held to
 * the caps; E5s and E2-made E4s racing a reconciliation E4 make exactly one transition; and
 * every bad answer changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { orderCompletionBody } from '../../src/platform/payments/settlement.js';
import { operation } from '../../src/contract/operations.js';
import type { ReconcilePolicy } from '../../src/platform/payments/lifecycle.js';
import type { NewOrderPayment } from '../../src/platform/store/index.js';
import { refOf, transitionTo } from '../store/fixtures.js';
import { describeOnBackends } from '../support/databases.js';
import { RIG_HOSTAPPS, RIG_RECONCILE_AFTER_SECONDS, ReconcileRig } from './support/reconcileRig.js';

const policy = operation('getHostappPaymentStatus').extensions['x-reconciliation'] as unknown as ReconcilePolicy;
const [ONE, TWO] = RIG_HOSTAPPS;
const HOUR = 3_600_000;

/** The nominal wait after ask `n` (1-based) before expiry, straight from the contract. */
function fastDelay(n: number): number {
  let delay = policy.backoff.firstDelayMs;
  for (let i = 1; i < n; i++) delay = Math.min(delay * policy.backoff.multiplier, policy.backoff.maxDelayMs);
  return delay;
}

describeOnBackends('reconciliation', (backend) => {
  let rig: ReconcileRig;
  beforeEach(async () => {
    // random() = 0.5: every jitter lands on its nominal value.
    rig = await new ReconcileRig().start({ backend: backend.name, random: () => 0.5 });
  }, 60_000);
  afterEach(() => rig.stop(), 30_000);

  const row = async (payment: NewOrderPayment) =>
    (await rig.store.paymentRecords.get({ client_id: payment.client_id, order_payment_id: payment.order_payment_id }))!;
  const deliveries = async (payment: NewOrderPayment) =>
    rig.store.db.query<{ event_id: string }>('SELECT event_id FROM deliveries WHERE order_payment_id = $1', [payment.order_payment_id]);
  /**
   * The same order recorded again as a retried E3 does, its expiry `lifetimeSeconds` from now and
   * its schedule a new payment's (the host app answered with the payment on record); the new expiry.
   */
  const retriedWithLaterExpiry = async (payment: NewOrderPayment, lifetimeSeconds: number) => {
    const now = rig.clock.now().getTime();
    const expiresAt = new Date(now + lifetimeSeconds * 1000);
    const reconcileAt = new Date(Math.min(now + RIG_RECONCILE_AFTER_SECONDS * 1000, expiresAt.getTime() + policy.expiryGraceMs));
    const retried = await rig.store.orderPayments.create({ ...payment, expires_at: expiresAt, reconcile_at: reconcileAt }, null);
    expect(retried.outcome).toBe('already_exists');
    return expiresAt;
  };
  /** Makes the payment's asks (answered as the rig's behaviour says) until the next is due at or after `at`. */
  const askUntil = async (payment: NewOrderPayment, at: number) => {
    for (let ask = 0; ask < 10; ask++) {
      const due = Date.parse((await row(payment)).next_reconcile_at!);
      if (due >= at) return;
      rig.clock.advance(due - rig.clock.now().getTime());
      expect(await rig.round()).toBe(1);
    }
    throw new Error('still asking ten asks later');
  };

  it('a host app that never sends E5: asked after its reconcile delay, settled by its E4 answer, one E6, never asked again', async () => {
    const [payment] = await rig.create(1);
    rig.behaviours.set(payment!.order_payment_id, { kind: 'status', payment_status: 'paid' });
    expect(await rig.round()).toBe(0);
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000 - 1);
    expect(await rig.round()).toBe(0);
    rig.clock.advance(1);
    expect(await rig.round()).toBe(1);
    expect(rig.asksOf(payment!.order_payment_id)).toHaveLength(1);
    const settled = await row(payment!);
    expect(settled).toMatchObject({ payment_status: 'paid', settled_by: 'reconciliation', stuck: false, reconcile_asks: 1 });
    expect(settled.history.map((entry) => [entry.to_status, entry.source])).toEqual([
      ['in_process', 'E1'],
      ['paid', 'reconciliation'],
    ]);
    expect(settled.reconciliation).toEqual([expect.objectContaining({ outcome: 'settled', payment_status: 'paid' })]);
    expect(await deliveries(payment!)).toHaveLength(1);
    rig.clock.advance(30 * 24 * HOUR);
    expect(await rig.round()).toBe(0);
    expect(rig.asksOf(payment!.order_payment_id)).toHaveLength(1);
  });

  it('a host app that answers in_process forever: asked on the published schedule, stuck after expiry, asked slowly to the horizon, never decided', async () => {
    const lifetimeSeconds = 4 * 3600;
    const [payment] = await rig.create(1, ONE, lifetimeSeconds);
    const createdAt = rig.clock.now().getTime();
    const expiresAt = createdAt + lifetimeSeconds * 1000;
    const gaps: number[] = [];
    let last = createdAt;
    let stuckAt: number | undefined;
    for (let ask = 1; ask < 200; ask++) {
      const before = await row(payment!);
      if (before.next_reconcile_at === undefined) break;
      const due = Date.parse(before.next_reconcile_at);
      // Not a moment early.
      rig.clock.advance(due - rig.clock.now().getTime() - 1);
      expect(await rig.round()).toBe(0);
      rig.clock.advance(1);
      expect(await rig.round(), `ask ${ask}`).toBe(1);
      gaps.push(due - last);
      last = due;
      const after = await row(payment!);
      expect(after.payment_status).toBe('in_process');
      if (after.stuck && stuckAt === undefined) {
        stuckAt = due;
        expect(await rig.store.reconciliation.countStuck()).toBe(1);
        const listed = await rig.store.paymentRecords.list({ stuck: true, clientId: ONE, limit: 10 });
        expect(listed.payments.map((p) => p.order_payment_id)).toEqual([payment!.order_payment_id]);
        expect((await rig.store.paymentRecords.list({ stuck: true, appId: 'ma_rig', limit: 10 })).payments).toHaveLength(1);
        expect((await rig.store.paymentRecords.list({ stuck: false, clientId: ONE, limit: 10 })).payments).toEqual([]);
      }
    }
    // First after the host app's delay; then the back-off, capped, before expiry; the at-expiry ask a grace after it.
    expect(gaps[0]).toBe(RIG_RECONCILE_AFTER_SECONDS * 1000);
    const atExpiry = expiresAt + policy.expiryGraceMs;
    expect(stuckAt).toBe(atExpiry);
    const atExpiryAsk = gaps.findIndex((_, i) => createdAt + gaps.slice(0, i + 1).reduce((a, b) => a + b, 0) === atExpiry);
    const fast = gaps.slice(1, atExpiryAsk);
    fast.forEach((gap, index) => expect(gap, `gap after ask ${index + 1}`).toBe(fastDelay(index + 1)));
    expect(Math.max(...fast)).toBe(policy.backoff.maxDelayMs);
    // The at-expiry ask is no later than the back-off would have asked.
    expect(gaps[atExpiryAsk]).toBeLessThanOrEqual(fastDelay(atExpiryAsk));
    // After expiry: every interval until the horizon past expiry, then no more asks.
    const slow = gaps.slice(atExpiryAsk + 1);
    expect(slow).toHaveLength(Math.floor((policy.stuck.horizonMs - policy.expiryGraceMs) / policy.stuck.intervalMs));
    expect(new Set(slow)).toEqual(new Set([policy.stuck.intervalMs]));
    expect(last).toBeLessThanOrEqual(expiresAt + policy.stuck.horizonMs);
    expect(last + policy.stuck.intervalMs).toBeGreaterThan(expiresAt + policy.stuck.horizonMs);
    const final = await row(payment!);
    expect(final).toMatchObject({ payment_status: 'in_process', stuck: true });
    expect(final.next_reconcile_at).toBeUndefined();
    rig.clock.advance(365 * 24 * HOUR);
    expect(await rig.round()).toBe(0);
    expect(await deliveries(payment!)).toEqual([]);
    expect(rig.asksOf(payment!.order_payment_id)).toHaveLength(gaps.length);
  }, 120_000);

  it('an ask made just before the at-expiry ask and answered just after it is not the at-expiry ask: that one is still made, and only it makes the payment stuck', async () => {
    // With random() = 0.5 the asks fall at 10 s, 70 s, 190 s, 430 s, 910 s, 1,870 s, 3,790 s and
    // 7,390 s: a lifetime putting the at-expiry ask 2 s after the last of those.
    const lifetimeSeconds = 7_390 + 2 - policy.expiryGraceMs / 1000;
    const [payment] = await rig.create(1, ONE, lifetimeSeconds);
    const atExpiry = rig.clock.now().getTime() + lifetimeSeconds * 1000 + policy.expiryGraceMs;
    for (;;) {
      const due = Date.parse((await row(payment!)).next_reconcile_at!);
      if (due === atExpiry - 2_000) break;
      expect(due).toBeLessThan(atExpiry - 2_000);
      rig.clock.advance(due - rig.clock.now().getTime());
      expect(await rig.round()).toBe(1);
    }
    // Asked 2 s before the at-expiry ask; the host app answers in_process 3 s later, after it.
    rig.clock.advance(atExpiry - 2_000 - rig.clock.now().getTime());
    rig.behaviours.set(payment!.order_payment_id, { kind: 'hang' });
    const asked = rig.asksOf(payment!.order_payment_id).length;
    expect(await rig.reconciler.tick()).toHaveLength(1);
    await waitFor(() => rig.asksOf(payment!.order_payment_id).length === asked + 1);
    rig.clock.advance(3_000);
    rig.release({ kind: 'status', payment_status: 'in_process' });
    await rig.reconciler.settled();
    const after = await row(payment!);
    expect(after.stuck).toBe(false);
    expect(Date.parse(after.next_reconcile_at!)).toBeLessThanOrEqual(atExpiry);
    // The at-expiry ask: the host app has closed the payment it never took.
    rig.behaviours.set(payment!.order_payment_id, { kind: 'status', payment_status: 'cancelled' });
    expect(await rig.round()).toBe(1);
    expect(await row(payment!)).toMatchObject({ payment_status: 'cancelled', settled_by: 'reconciliation', stuck: false });
    expect(await deliveries(payment!)).toHaveLength(1);
  });

  it('a retried E3 that gives a stuck payment a later expiry: no longer stuck, and asked at its new expiry, as the host app was told', async () => {
    const lifetimeSeconds = 60;
    const [payment] = await rig.create(1, ONE, lifetimeSeconds);
    // Asked until the at-expiry ask finds it still in process: stuck.
    for (let ask = 0; ask < 10 && !(await row(payment!)).stuck; ask++) {
      rig.clock.advance(Date.parse((await row(payment!)).next_reconcile_at!) - rig.clock.now().getTime());
      expect(await rig.round()).toBe(1);
    }
    expect(await row(payment!)).toMatchObject({ payment_status: 'in_process', stuck: true });
    // The same order sent again (an E1 whose key had gone): E3 told the host app a later expiry,
    // and the host app answered with the payment on record.
    rig.clock.advance(60_000);
    const expiresAt = await retriedWithLaterExpiry(payment!, lifetimeSeconds);
    const extended = await row(payment!);
    expect(extended.expires_at).toBe(expiresAt.toISOString());
    // Its expiry is ahead: not stuck, and not counted as needing a person.
    expect(extended.stuck).toBe(false);
    expect(await rig.store.reconciliation.countStuck()).toBe(0);
    // Asked no later than a grace after its new expiry, where the slow schedule waited six hours.
    const atNewExpiry = expiresAt.getTime() + policy.expiryGraceMs;
    expect(Date.parse(extended.next_reconcile_at!)).toBeLessThanOrEqual(atNewExpiry);
    rig.behaviours.set(payment!.order_payment_id, { kind: 'status', payment_status: 'cancelled' });
    rig.clock.advance(atNewExpiry - rig.clock.now().getTime());
    await rig.round();
    expect(await row(payment!)).toMatchObject({ payment_status: 'cancelled', settled_by: 'reconciliation' });
  });

  it('an at-expiry ask answered in_process after a retried E3 extended the expiry meanwhile: not stuck, and asked at the new expiry', async () => {
    const lifetimeSeconds = 60;
    const [payment] = await rig.create(1, ONE, lifetimeSeconds);
    const atExpiry = rig.clock.now().getTime() + lifetimeSeconds * 1000 + policy.expiryGraceMs;
    await askUntil(payment!, atExpiry);
    // The at-expiry ask is open at the host app...
    rig.clock.advance(atExpiry - rig.clock.now().getTime());
    rig.behaviours.set(payment!.order_payment_id, { kind: 'hang' });
    const asked = rig.asksOf(payment!.order_payment_id).length;
    expect(await rig.reconciler.tick()).toHaveLength(1);
    await waitFor(() => rig.asksOf(payment!.order_payment_id).length === asked + 1);
    // ...when the same order is sent again and E3 tells the host app a later expiry.
    const expiresAt = await retriedWithLaterExpiry(payment!, lifetimeSeconds);
    // The host app answers the open ask in_process: judged against the earlier expiry, it is not
    // the at-expiry ask of the one the host app was last told.
    rig.release({ kind: 'status', payment_status: 'in_process' });
    await rig.reconciler.settled();
    const after = await row(payment!);
    expect(after).toMatchObject({ payment_status: 'in_process', stuck: false });
    expect(await rig.store.reconciliation.countStuck()).toBe(0);
    expect(Date.parse(after.next_reconcile_at!)).toBeLessThanOrEqual(expiresAt.getTime() + policy.expiryGraceMs);
  });

  it('a failed at-expiry ask does not make the payment stuck: it is asked again soon, on a growing delay, and the host app closing it is heard', async () => {
    const lifetimeSeconds = 60;
    const [payment] = await rig.create(1, ONE, lifetimeSeconds);
    const atExpiry = rig.clock.now().getTime() + lifetimeSeconds * 1000 + policy.expiryGraceMs;
    await askUntil(payment!, atExpiry);
    expect(Date.parse((await row(payment!)).next_reconcile_at!)).toBe(atExpiry);
    // The host app's E4 fails at the at-expiry ask and the two after it.
    rig.behaviours.set(payment!.order_payment_id, { kind: 'http', status: 503 });
    const gaps: number[] = [];
    for (let failed = 0; failed < 3; failed++) {
      const due = Date.parse((await row(payment!)).next_reconcile_at!);
      rig.clock.advance(due - rig.clock.now().getTime());
      expect(await rig.round()).toBe(1);
      const after = await row(payment!);
      expect(after.reconciliation.at(-1)).toMatchObject({ outcome: 'failed' });
      expect(after.stuck).toBe(false);
      gaps.push(Date.parse(after.next_reconcile_at!) - rig.clock.now().getTime());
    }
    expect(await rig.store.reconciliation.countStuck()).toBe(0);
    // With random() = 0.5 the delay is the time since the at-expiry ask, at least the back-off's first.
    expect(gaps).toEqual([policy.backoff.firstDelayMs, policy.backoff.firstDelayMs, 2 * policy.backoff.firstDelayMs]);
    // The host app is back and answers what it did at expiry: cancelled, one E6.
    rig.behaviours.set(payment!.order_payment_id, { kind: 'status', payment_status: 'cancelled' });
    rig.clock.advance(Date.parse((await row(payment!)).next_reconcile_at!) - rig.clock.now().getTime());
    expect(await rig.round()).toBe(1);
    expect(await row(payment!)).toMatchObject({ payment_status: 'cancelled', settled_by: 'reconciliation', stuck: false });
    expect(await deliveries(payment!)).toHaveLength(1);
  });

  it('a payment left unanswered for the slow interval after its expiry is stuck, and stays stuck on the slow schedule whatever its asks find', async () => {
    const lifetimeSeconds = 60;
    const [payment] = await rig.create(1, ONE, lifetimeSeconds);
    const atExpiry = rig.clock.now().getTime() + lifetimeSeconds * 1000 + policy.expiryGraceMs;
    rig.behaviours.set(payment!.order_payment_id, { kind: 'http', status: 503 });
    let asks = 0;
    while (!(await row(payment!)).stuck) {
      expect(++asks, 'asks before it is stuck').toBeLessThan(40);
      rig.clock.advance(Date.parse((await row(payment!)).next_reconcile_at!) - rig.clock.now().getTime());
      expect(await rig.round()).toBe(1);
    }
    // Stuck at the first failed ask a slow interval or more past the at-expiry ask, not before.
    const stuckAt = rig.clock.now().getTime();
    expect(stuckAt - atExpiry).toBeGreaterThanOrEqual(policy.stuck.intervalMs);
    expect(stuckAt - atExpiry).toBeLessThan(policy.stuck.intervalMs + policy.backoff.maxDelayMs * (1 + policy.backoff.jitter));
    expect(await rig.store.reconciliation.countStuck()).toBe(1);
    expect(Date.parse((await row(payment!)).next_reconcile_at!) - stuckAt).toBe(policy.stuck.intervalMs);
    // A later failure keeps it stuck, on the slow schedule.
    rig.clock.advance(policy.stuck.intervalMs);
    expect(await rig.round()).toBe(1);
    expect(await row(payment!)).toMatchObject({ payment_status: 'in_process', stuck: true });
    expect(Date.parse((await row(payment!)).next_reconcile_at!) - rig.clock.now().getTime()).toBe(policy.stuck.intervalMs);
  });

  it('a host app that is down is backed off from and held to the caps; another host app is asked meanwhile', async () => {
    const down = await rig.create(30, ONE);
    const fine = await rig.create(3, TWO);
    rig.defaultBehaviour = { kind: 'http', status: 503 };
    for (const payment of fine) rig.behaviours.set(payment.order_payment_id, { kind: 'status', payment_status: 'paid' });
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    // The first round asks at most maxInFlight of the down host app at once, and the other's three.
    await rig.round();
    const first = rig.requests.filter((request) => request.clientId === ONE).length;
    expect(first).toBe(policy.maxInFlight);
    expect(rig.maxOpen.get(ONE)).toBeLessThanOrEqual(policy.maxInFlight);
    for (const payment of fine) expect((await row(payment)).payment_status).toBe('paid');
    // Backing off: nothing more of the down host app until its pause (at most firstDelayMs) has passed.
    expect(await rig.round()).toBe(0);
    rig.clock.advance(policy.hostappBackoff.firstDelayMs);
    await rig.round();
    expect(rig.requests.filter((request) => request.clientId === ONE).length).toBe(first + policy.maxInFlight);
    // Failed asks change nothing and are asked again later.
    for (const payment of down) expect((await row(payment)).payment_status).toBe('in_process');
  });

  it('at most maxInFlight asks open to a host app that hangs, and at most perSecond started per second', async () => {
    const payments = await rig.create(40, ONE);
    rig.defaultBehaviour = { kind: 'hang' };
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    expect((await rig.reconciler.tick()).length).toBe(policy.maxInFlight);
    await waitFor(() => rig.openNow(ONE) === policy.maxInFlight);
    // Full: a second claim takes nothing of it.
    expect(await rig.reconciler.tick()).toEqual([]);
    rig.release({ kind: 'status', payment_status: 'in_process' });
    await rig.reconciler.settled();
    expect(rig.maxOpen.get(ONE)).toBe(policy.maxInFlight);

    // Answering at once, the budget binds: within one second of the clock no more than perSecond asks start.
    rig.defaultBehaviour = { kind: 'status', payment_status: 'in_process' };
    const before = rig.requests.length;
    for (let round = 0; round < 10; round++) await rig.round();
    const started = rig.requests.length - before;
    expect(started).toBeLessThanOrEqual(policy.perSecond);
    expect(started + policy.maxInFlight).toBeGreaterThanOrEqual(Math.min(policy.perSecond, payments.length));
  });

  it('a backlog beyond the per-second budget waits for it: once spent, nothing of that host app is claimed (and postponed) until it refills', async () => {
    await rig.create(policy.perSecond * 10, ONE);
    rig.defaultBehaviour = { kind: 'status', payment_status: 'in_process' };
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    let asked = 0;
    while (rig.requests.length < policy.perSecond && asked++ < policy.perSecond) await rig.round();
    // Spent, with the clock still: claims would only be postponed, so none are made.
    const claims: number[] = [];
    for (let round = 0; round < 5; round++) claims.push(await rig.round());
    expect(claims).toEqual([0, 0, 0, 0, 0]);
    // Refilled a second later: the backlog goes on.
    rig.clock.advance(1_000);
    expect(await rig.round()).toBeGreaterThan(0);
  });

  it('with every host app’s budget spent, no claim statement runs at all (it would cost a seek per host app and lease nothing)', async () => {
    for (const clientId of RIG_HOSTAPPS) await rig.create(policy.perSecond * 2, clientId);
    rig.defaultBehaviour = { kind: 'status', payment_status: 'in_process' };
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    let asked = 0;
    while (rig.requests.length < policy.perSecond * RIG_HOSTAPPS.length && asked++ < policy.perSecond * RIG_HOSTAPPS.length)
      await rig.round();
    await rig.round();
    const { reconciliation } = rig.store;
    const claimDue = reconciliation.claimDue;
    let claims = 0;
    reconciliation.claimDue = (options) => {
      claims++;
      return claimDue.call(reconciliation, options);
    };
    try {
      for (let round = 0; round < 5; round++) expect(await rig.round()).toBe(0);
      expect(claims).toBe(0);
      rig.clock.advance(1_000);
      expect(await rig.round()).toBeGreaterThan(0);
      expect(claims).toBe(1);
    } finally {
      reconciliation.claimDue = claimDue;
    }
  });

  it('an E5 (or an E2-made E4) that lands while a reconciliation E4 is in flight: one transition, one E6, the loser answered by the state machine', async () => {
    const [agree, contradict] = await rig.create(2);
    for (const payment of [agree!, contradict!]) rig.behaviours.set(payment.order_payment_id, { kind: 'hang' });
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    expect(await rig.reconciler.tick()).toHaveLength(2);
    await waitFor(() => rig.requests.length === 2);
    expect((await rig.store.orderPayments.transition(transitionTo(agree!, 'paid'), orderCompletionBody)).outcome).toBe('applied');
    expect(
      (await rig.store.orderPayments.transition({ ...transitionTo(contradict!, 'cancelled'), source: 'E4' }, orderCompletionBody)).outcome,
    ).toBe('applied');
    rig.release({ kind: 'status', payment_status: 'paid' });
    await rig.reconciler.settled();
    expect(await row(agree!)).toMatchObject({ payment_status: 'paid', settled_by: 'E5' });
    expect((await row(agree!)).reconciliation).toEqual([expect.objectContaining({ outcome: 'unchanged', payment_status: 'paid' })]);
    expect(await row(contradict!)).toMatchObject({ payment_status: 'cancelled', settled_by: 'E4' });
    expect((await row(contradict!)).reconciliation).toEqual([expect.objectContaining({ outcome: 'conflict', payment_status: 'paid' })]);
    for (const payment of [agree!, contradict!]) {
      expect(await deliveries(payment)).toHaveLength(1);
      expect((await row(payment)).history).toHaveLength(2);
    }
    // Settled: never asked again.
    rig.clock.advance(30 * 24 * HOUR);
    expect(await rig.round()).toBe(0);
  });

  it('a late E5 after reconciliation settled the payment is answered by the state machine, with no second E6', async () => {
    const [payment] = await rig.create(1);
    rig.behaviours.set(payment!.order_payment_id, { kind: 'status', payment_status: 'failed', payment_fail_reason: 'Declined' });
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    await rig.round();
    expect(await row(payment!)).toMatchObject({ payment_status: 'failed', payment_fail_reason: 'Declined', settled_by: 'reconciliation' });
    expect((await rig.store.orderPayments.transition(transitionTo(payment!, 'failed'), orderCompletionBody)).outcome).toBe('unchanged');
    expect((await rig.store.orderPayments.transition(transitionTo(payment!, 'paid'), orderCompletionBody)).outcome).toBe('conflict');
    expect(await deliveries(payment!)).toHaveLength(1);
  });

  it('every bad E4 answer changes nothing: about another payment, not JSON, an error code, ORDER_NOT_FOUND, HTTP 500', async () => {
    const payments = await rig.create(5);
    const behaviours = [
      { kind: 'other' },
      { kind: 'notJson' },
      { kind: 'error', error_code: 'SOMETHING_ELSE' },
      { kind: 'error', error_code: 'ORDER_NOT_FOUND' },
      { kind: 'http', status: 500 },
    ] as const;
    payments.forEach((payment, index) => rig.behaviours.set(payment.order_payment_id, behaviours[index]!));
    rig.clock.advance(RIG_RECONCILE_AFTER_SECONDS * 1000);
    expect(await rig.round()).toBe(5);
    const outcomes = await Promise.all(payments.map(async (payment) => (await row(payment)).reconciliation[0]));
    expect(outcomes.map((ask) => ask!.outcome)).toEqual(['failed', 'failed', 'failed', 'not_found', 'failed']);
    expect(outcomes[0]!.detail).toMatch(/order_payment_id .*-other, not/);
    expect(outcomes[1]!.detail).toMatch(/not UTF-8 JSON/);
    expect(outcomes[2]!.detail).toMatch(/SOMETHING_ELSE/);
    expect(outcomes[4]!.detail).toMatch(/HTTP 500/);
    for (const payment of payments) {
      const after = await row(payment);
      expect(after).toMatchObject({ payment_status: 'in_process', stuck: false, reconcile_asks: 1 });
      expect(Date.parse(after.next_reconcile_at!)).toBe(rig.clock.now().getTime() + fastDelay(1));
      expect(await deliveries(payment)).toEqual([]);
    }
    void refOf;
  });
});

describe('reconciliation schedule (nextAsk)', () => {
  it('is published in the contract with every figure the guide names', () => {
    expect(policy).toMatchObject({
      expiryGraceMs: expect.any(Number),
      backoff: {
        firstDelayMs: expect.any(Number),
        multiplier: expect.any(Number),
        maxDelayMs: expect.any(Number),
        jitter: expect.any(Number),
      },
      stuck: { intervalMs: expect.any(Number), jitter: expect.any(Number), horizonMs: expect.any(Number) },
      maxInFlight: expect.any(Number),
      perSecond: expect.any(Number),
      hostappBackoff: { firstDelayMs: expect.any(Number), maxDelayMs: expect.any(Number) },
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
