import { beforeEach, expect, it } from 'vitest';
import { createStore, type Store } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, newOrderPayment, seconds } from './fixtures.js';

describeEachBackend('reconciliation claim', (database, backend) => {
  let store: Store;
  const clock = manualClock();

  beforeEach(() => {
    store = createStore(database.db, { clock: clock.now });
  });

  /** `count` payments of one host app, due one millisecond apart, oldest first. */
  async function duePayments(count: number) {
    const payments = [];
    for (let i = 0; i < count; i++) {
      const payment = newOrderPayment({ reconcile_at: clock.now() });
      await store.orderPayments.create(payment, null);
      payments.push(payment);
      clock.advance(1);
    }
    clock.advance(seconds(1));
    return payments;
  }

  it('leases the oldest due payments up to the host app’s cap, and locks no other row', async () => {
    const payments = await duePayments(12);
    const xmaxOf = async () =>
      new Map(
        (
          await database.db.query<{ order_payment_id: string; xmax: string }>(
            'SELECT order_payment_id, xmax::text AS xmax FROM order_payments',
          )
        ).map((row) => [row.order_payment_id, row.xmax]),
      );
    const before = await xmaxOf();
    const claimed = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 3 });
    expect(claimed.map((claim) => claim.order_payment_id)).toEqual(payments.slice(0, 3).map((p) => p.order_payment_id));
    // A row the claim only looked at keeps the row version and locker it had (xmax): the claim
    // ranks up to limit × cap candidates, and locking them all wrote a WAL record per candidate
    // and dirtied its page on every claim (ADR 0039).
    const after = await xmaxOf();
    const looked = payments.slice(3).map((p) => p.order_payment_id);
    expect(looked.map((id) => after.get(id))).toEqual(looked.map((id) => before.get(id)));
  });

  it.skipIf(backend.name !== 'postgres')('skips a due payment another transaction holds, without waiting for it', async () => {
    const payments = await duePayments(3);
    const other = await database.connect();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = other.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM order_payments WHERE order_payment_id = $1 FOR UPDATE', [payments[0]!.order_payment_id]);
      holding();
      await released;
    });
    try {
      await held;
      const claimed = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 8 });
      expect(claimed.map((claim) => claim.order_payment_id)).toEqual(payments.slice(1).map((p) => p.order_payment_id));
    } finally {
      release();
      await holder;
      await other.close();
    }
    const [again] = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 8 });
    expect(again?.order_payment_id).toBe(payments[0]!.order_payment_id);
  });
});
