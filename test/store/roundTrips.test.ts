import { beforeEach, expect, it } from 'vitest';
import { orderCompletionBody } from '../../src/platform/payments/settlement.js';
import { e1WriteBatching } from '../../src/platform/store/batch.js';
import { batchingFor } from '../../src/platform/store/db.js';
import { idempotencyKeys, type IdempotencyScope } from '../../src/platform/store/idempotency.js';
import { createStore, type ClaimedDelivery, type Store } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { hours, manualClock, newOrderPayment, refOf, seconds, transitionTo } from './fixtures.js';
import { recordingDb } from './recordingDb.js';
import { raceAgainstUncommitted } from './uncommitted.js';

// The hot paths' statements, pinned: each label is one round trip to the database.
const scope: IdempotencyScope = { app_id: 'ma_shop', client_id: 'ha_superapp', miniapp_order_id: 'mo_1', idempotency_key: 'key-1' };

describeEachBackend('round trips', (database, backend) => {
  let recording: ReturnType<typeof recordingDb>;
  let store: Store;
  /** The same database without recording, for writes a test sets up or races with. */
  let direct: Store;
  const clock = manualClock();

  beforeEach(() => {
    recording = recordingDb(database.db);
    store = createStore(recording.db, { clock: clock.now, idempotencyStaleAfterMs: seconds(30) });
    direct = createStore(database.db, { clock: clock.now });
  });

  it('E1: reserves fresh keys in one statement and records the payment in one more', async () => {
    const reserved = await store.idempotency.reserve(scope, 'h1');
    expect(recording.take()).toEqual(['store.idempotency.reserve']);
    if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);

    const payment = newOrderPayment({ miniapp_order_id: 'mo_1' });
    expect((await store.orderPayments.create(payment, reserved.reservation)).outcome).toBe('created');
    expect(recording.take()).toEqual(['store.orderPayments.record']);
    expect(await direct.orderPayments.history(refOf(payment))).toHaveLength(1);

    expect(await store.idempotency.reserve(scope, 'h1')).toEqual({ outcome: 'done', order_payment_id: payment.order_payment_id });
    expect(await store.idempotency.reserve(scope, 'h2')).toEqual({ outcome: 'conflict' });
    // A key in use: the reservation, then one read of why.
    expect(recording.take()).toEqual([
      'store.idempotency.reserve',
      'store.idempotency.readKeys',
      'store.idempotency.reserve',
      'store.idempotency.readKeys',
    ]);
  });

  // As many statements run alone as the batcher sends at once on this database (one: ADR 0031,
  // 0032); everything behind them shares the next.
  const batchStatements = () => batchingFor(database.db, e1WriteBatching).maxInFlight + 1;

  it('E1: batches concurrent one-key reservations and records: the first statements run alone, the rest share one', async () => {
    const scopes = Array.from({ length: 10 }, (_, index) => ({ ...scope, miniapp_order_id: `mo_batch_${index}`, idempotency_key: null }));
    const reserved = await Promise.all(scopes.map((one) => store.idempotency.reserve(one, 'h1')));
    expect(recording.take()).toEqual(Array(batchStatements()).fill('store.idempotency.reserve'));
    const payments = scopes.map((one) => newOrderPayment({ miniapp_order_id: one.miniapp_order_id }));
    const created = await Promise.all(
      payments.map((payment, index) => {
        const result = reserved[index]!;
        if (result.outcome !== 'reserved') throw new Error(result.outcome);
        return store.orderPayments.create(payment, result.reservation);
      }),
    );
    expect(created.map((result) => result.outcome)).toEqual(Array(10).fill('created'));
    expect(recording.take()).toEqual(Array(batchStatements()).fill('store.orderPayments.record'));
    // Each record marked its own key done, and only its own.
    for (const [index, one] of scopes.entries()) {
      expect(await direct.idempotency.reserve(one, 'h1')).toEqual({ outcome: 'done', order_payment_id: payments[index]!.order_payment_id });
      expect(await direct.orderPayments.history(refOf(payments[index]!))).toHaveLength(1);
    }
  });

  it('E1: requests read one per turn of the event loop, as from their sockets, still share statements', async () => {
    // Each request starts in its own callback, the way a server reads requests one socket at a
    // time. PGlite runs a statement without yielding, so each would commit alone before the next
    // is read unless its statement waits for the pending I/O first (ADR 0032).
    const scopes = Array.from({ length: 10 }, (_, index) => ({ ...scope, miniapp_order_id: `mo_turn_${index}`, idempotency_key: null }));
    const reserved = await Promise.all(
      scopes.map((one) => new Promise<void>((resolve) => setImmediate(resolve)).then(() => store.idempotency.reserve(one, 'h1'))),
    );
    expect(reserved.map((result) => result.outcome)).toEqual(Array(10).fill('reserved'));
    expect(recording.take()).toEqual(Array(batchStatements()).fill('store.idempotency.reserve'));
    for (const one of scopes) expect(await direct.idempotency.reserve(one, 'h2')).toEqual({ outcome: 'conflict' });
  });

  it('E1: the shared record statement decides a batch mixing new payments with ids on record, each as if alone', async () => {
    const onRecord = newOrderPayment({ miniapp_order_id: 'mo_on_record' });
    const taken = newOrderPayment({ miniapp_order_id: 'mo_taken' });
    for (const payment of [onRecord, taken]) expect((await direct.orderPayments.create(payment, null)).outcome).toBe('created');
    clock.advance(seconds(5));
    const payments = [
      newOrderPayment({ miniapp_order_id: 'mo_mixed_1' }),
      newOrderPayment({ miniapp_order_id: 'mo_mixed_2' }),
      // A retried E3 answered with the id on record for this order, having told the host app a later expiry.
      { ...onRecord, expires_at: new Date(onRecord.expires_at.getTime() + hours(1)) },
      // The host app answered another order with an id on record (ADR 0016).
      { ...taken, miniapp_order_id: 'mo_someone_else' },
      newOrderPayment({ miniapp_order_id: 'mo_mixed_3' }),
    ];
    const scopes = payments.map((payment) => ({ ...scope, miniapp_order_id: payment.miniapp_order_id, idempotency_key: null }));
    const reserved = await Promise.all(scopes.map((one) => direct.idempotency.reserve(one, 'h1')));
    const results = await Promise.all(
      payments.map((payment, index) => {
        const result = reserved[index]!;
        if (result.outcome !== 'reserved') throw new Error(result.outcome);
        return store.orderPayments.create(payment, result.reservation);
      }),
    );
    expect(recording.take()).toEqual(Array(batchStatements()).fill('store.orderPayments.record'));
    expect(results.map((result) => result.outcome)).toEqual(['created', 'created', 'already_exists', 'bound_elsewhere', 'created']);
    expect(results[3]!.orderPayment).toMatchObject({ order_payment_id: taken.order_payment_id, miniapp_order_id: 'mo_taken' });
    for (const index of [0, 1, 2, 4]) {
      const { order_payment_id } = payments[index]!;
      expect(await direct.idempotency.reserve(scopes[index]!, 'h1')).toEqual({ outcome: 'done', order_payment_id });
      expect(await direct.orderPayments.history(refOf(payments[index]!))).toHaveLength(1);
    }
    // Nothing written for another order: its key still pending, the payment on record as it was.
    expect(await direct.idempotency.reserve(scopes[3]!, 'h1')).toEqual({ outcome: 'in_progress' });
    expect(await direct.orderPayments.history(refOf(taken))).toHaveLength(1);
    expect((await direct.orderPayments.get(refOf(taken)))!.expires_at).toBe(taken.expires_at.toISOString());
    // The payment on record as this order keeps the later expiry (ADR 0039).
    expect((await direct.orderPayments.get(refOf(onRecord)))!.expires_at).toBe(payments[2]!.expires_at.toISOString());
  });

  it('E1: a batch holding one bad record fails it alone; the others are recorded', async () => {
    const payments = Array.from({ length: 6 }, (_, index) =>
      newOrderPayment({ miniapp_order_id: `mo_bad_${index}`, ...(index === 5 && { amount: 'not a number' }) }),
    );
    const results = await Promise.allSettled(payments.map((payment) => store.orderPayments.create(payment, null)));
    expect(results.map((result) => result.status)).toEqual([...Array(5).fill('fulfilled'), 'rejected']);
    for (const payment of payments.slice(0, 5)) expect(await direct.orderPayments.get(refOf(payment))).not.toBeNull();
  });

  it('E1: answers in_progress when only one of two keys is free, keeping neither: the reservation, a read, the release', async () => {
    await direct.idempotency.reserve({ ...scope, idempotency_key: null }, 'h1');
    expect(await store.idempotency.reserve(scope, 'h1')).toEqual({ outcome: 'in_progress' });
    expect(recording.take()).toEqual(['store.idempotency.reserve', 'DELETE', 'store.idempotency.readKeys']);
    // The fresh Idempotency-Key was not kept.
    expect((await direct.idempotency.reserve({ ...scope, miniapp_order_id: null }, 'h9')).outcome).toBe('reserved');
  });

  it('E1: takes over an abandoned key in the same one statement, reserving the fresh key with it', async () => {
    await direct.idempotency.reserve({ ...scope, idempotency_key: null }, 'h1');
    clock.advance(seconds(30));
    const result = await store.idempotency.reserve(scope, 'h2');
    expect(result.outcome).toBe('reserved');
    expect(recording.take()).toEqual(['store.idempotency.reserve']);
    expect(await direct.idempotency.reserve(scope, 'h2')).toEqual({ outcome: 'in_progress' });
    expect(await direct.idempotency.reserve({ ...scope, miniapp_order_id: null }, 'h2')).toEqual({ outcome: 'in_progress' });
  });

  it('E5: reads, then applies the change, its history and its delivery in one statement', async () => {
    const payment = newOrderPayment();
    await direct.orderPayments.create(payment, null);
    expect((await store.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody)).outcome).toBe('applied');
    expect(recording.take()).toEqual(['store.orderPayments.read', 'store.orderPayments.apply']);
    expect((await store.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody)).outcome).toBe('unchanged');
    expect(recording.take()).toEqual(['store.orderPayments.read']);
  });

  it('E5: concurrent transitions share their reads and their writes', async () => {
    const payments = Array.from({ length: 12 }, () => newOrderPayment());
    for (const payment of payments) await direct.orderPayments.create(payment, null);
    recording.take();
    const results = await Promise.all(
      payments.map((payment) => store.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody)),
    );
    expect(results.map((result) => result.outcome)).toEqual(Array(12).fill('applied'));
    const sent = recording.take();
    const reads = sent.filter((label) => label === 'store.orderPayments.read').length;
    const writes = sent.filter((label) => label === 'store.orderPayments.apply').length;
    // A handful of statements for twelve requests: those in flight at once, and the ones behind them shared.
    expect(reads).toBeLessThanOrEqual(5);
    expect(writes).toBeLessThanOrEqual(5);
    expect(await direct.outbox.countPending()).toBe(12);
  });

  it('E5: decides again when another transition lands between the read and the write', async () => {
    const payment = newOrderPayment();
    await direct.orderPayments.create(payment, null);
    recording.before('store.orderPayments.apply', async () => {
      expect((await direct.orderPayments.transition(transitionTo(payment, 'cancelled'), orderCompletionBody)).outcome).toBe('applied');
    });

    const result = await store.orderPayments.transition(
      transitionTo(payment, 'paid', { custom_attributes: '{"late":true}' }),
      orderCompletionBody,
    );

    expect(result).toMatchObject({ outcome: 'conflict', orderPayment: { payment_status: 'cancelled', custom_attributes: null } });
    expect(recording.take()).toEqual(['store.orderPayments.read', 'store.orderPayments.apply', 'store.orderPayments.read']);
    expect((await direct.orderPayments.history(refOf(payment))).map((h) => h.to_status)).toEqual(['in_process', 'cancelled']);
    expect(await direct.outbox.countPending()).toBe(1);
  });

  it('E6: claims a batch in one locked transaction (ADR 0008: per-miniapp bound across instances) and records each attempt in one statement', async () => {
    const payment = newOrderPayment();
    await direct.orderPayments.create(payment, null);
    await direct.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody);
    const [claimed] = await store.outbox.claimDue({ limit: 10, leaseMs: seconds(30) });
    const recorded = await store.outbox.recordAttempt({
      delivery_id: claimed!.delivery.delivery_id,
      lease_id: claimed!.lease_id,
      started_at: clock.now(),
      duration_ms: 3,
      result: { outcome: 'delivered', http_status: 200 },
    });
    expect(recorded).toMatchObject({ status: 'delivered', attempts_made: 1 });
    expect(recording.take()).toEqual(['BEGIN', 'store.outbox.claimLock', 'store.outbox.claimDue', 'COMMIT', 'store.outbox.recordBatch']);
    expect((await direct.outbox.get(claimed!.delivery.delivery_id))?.attempts).toHaveLength(1);
  });

  it("E6: whether anything is due is one statement without the claim's lock (an idle poll), and says what a claim would find", async () => {
    expect(await store.outbox.anyDue()).toBe(false);
    expect(recording.take()).toEqual(['store.outbox.anyDue']);
    const payment = newOrderPayment();
    await direct.orderPayments.create(payment, null);
    await direct.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody);
    expect(await store.outbox.anyDue()).toBe(true);
    // Leased: not due for another claim until the lease ends.
    const [claimed] = await direct.outbox.claimDue({ limit: 10, leaseMs: seconds(30) });
    expect(await store.outbox.anyDue()).toBe(false);
    // Failed, its retry an hour away: not due until then.
    await direct.outbox.recordAttempt({
      delivery_id: claimed!.delivery.delivery_id,
      lease_id: claimed!.lease_id,
      started_at: clock.now(),
      duration_ms: 3,
      result: { outcome: 'failed', http_status: 503, error: 'HTTP 503', retry_at: new Date(clock.now().getTime() + hours(1)) },
    });
    expect(await store.outbox.anyDue()).toBe(false);
    clock.advance(hours(1) - 1);
    expect(await store.outbox.anyDue()).toBe(false);
    clock.advance(1);
    expect(await store.outbox.anyDue()).toBe(true);
    expect(recording.take()).toEqual(Array(5).fill('store.outbox.anyDue'));
    // Delivered: never due again.
    const [again] = await direct.outbox.claimDue({ limit: 10, leaseMs: seconds(30) });
    expect(again?.delivery.delivery_id).toBe(claimed!.delivery.delivery_id);
    await direct.outbox.recordAttempt({
      delivery_id: again!.delivery.delivery_id,
      lease_id: again!.lease_id,
      started_at: clock.now(),
      duration_ms: 3,
      result: { outcome: 'delivered', http_status: 200 },
    });
    clock.advance(seconds(60));
    expect(await store.outbox.anyDue()).toBe(false);
  });

  it('E6: records the attempts that end together, and hands their slots on, in one statement; those ending meanwhile share the next (ADR 0033)', async () => {
    for (let i = 0; i < 20; i++) {
      const payment = newOrderPayment();
      await direct.orderPayments.create(payment, null);
      await direct.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody);
      clock.advance(1);
    }
    const claimed = await store.outbox.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerMiniapp: 10 });
    recording.take();
    const record = (c: ClaimedDelivery) =>
      store.outbox.recordAndHandOff(
        {
          delivery_id: c.delivery.delivery_id,
          lease_id: c.lease_id,
          started_at: clock.now(),
          duration_ms: 3,
          result: { outcome: 'delivered', http_status: 200 },
        },
        { leaseMs: seconds(30) },
      );
    // Four end together; six more end while their statement is on its way.
    let later: ReturnType<typeof record>[] = [];
    recording.before('store.outbox.recordBatch', async () => {
      later = claimed.slice(4).map(record);
    });
    const answers = [...(await Promise.all(claimed.slice(0, 4).map(record))), ...(await Promise.all(later))];
    expect(recording.take()).toEqual(['store.outbox.recordBatch', 'store.outbox.recordBatch']);
    expect(answers.map((answer) => [answer.delivery?.delivery_id, answer.successors.length])).toEqual(
      claimed.map((c) => [c.delivery.delivery_id, 1]),
    );
    for (const c of claimed) expect((await direct.outbox.get(c.delivery.delivery_id))?.attempts).toHaveLength(1);
    expect(await direct.outbox.countPending()).toBe(10);
  });

  // Only PostgreSQL has concurrent sessions; PGlite runs one statement at a time.
  const postgresOnly = backend.name !== 'postgres';

  it.skipIf(postgresOnly)('E1: waits for a key inserted by another uncommitted reservation, then answers in_progress', async () => {
    const holder = await database.connect();
    const [orderKey] = idempotencyKeys({ ...scope, idempotency_key: null });
    const result = await raceAgainstUncommitted(
      holder,
      database.db,
      (tx) =>
        tx
          .query(
            `INSERT INTO idempotency_keys (key, request_hash, state, reservation_id, reserved_at)
           VALUES ($1, 'h1', 'pending', gen_random_uuid(), $2)`,
            [orderKey!.key, clock.now()],
          )
          .then(() => undefined),
      () => store.idempotency.reserve(scope, 'h1'),
    );
    await holder.close();

    expect(result).toEqual({ outcome: 'in_progress' });
    expect(recording.take()).toEqual(['store.idempotency.reserve', 'DELETE', 'store.idempotency.readKeys']);
    // All or none: the Idempotency-Key was not kept.
    expect((await direct.idempotency.reserve({ ...scope, miniapp_order_id: null }, 'h9')).outcome).toBe('reserved');
  });

  /** Races create against the same order_payment_id committed after the statement's snapshot, for `raced` (amount 1.00). */
  async function createAgainstLateCommit(raced: { miniapp_order_id: string | null }) {
    const reserved = await direct.idempotency.reserve(scope, 'h1');
    if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);
    const recorded = newOrderPayment({ miniapp_order_id: 'mo_1', amount: '1.00' });
    const holder = await database.connect();
    const result = await raceAgainstUncommitted(
      holder,
      database.db,
      (tx) =>
        tx
          .query(
            `INSERT INTO order_payments (order_payment_id, app_id, client_id, miniapp_order_id, hostapp_user_id, amount_text,
             amount, currency, order_json, payment_status, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, '1.00', 1.00, $6, $7, 'in_process', $8, $8)`,
            [
              recorded.order_payment_id,
              recorded.app_id,
              recorded.client_id,
              raced.miniapp_order_id,
              recorded.hostapp_user_id,
              recorded.currency,
              recorded.order_json,
              clock.now(),
            ],
          )
          .then(() => undefined),
      () => store.orderPayments.create(recorded, reserved.reservation),
    );
    await holder.close();
    return { result, recorded };
  }

  it.skipIf(postgresOnly)("E1: finds the same order on record when it is committed after the statement's snapshot", async () => {
    const { result, recorded } = await createAgainstLateCommit({ miniapp_order_id: 'mo_1' });
    expect(result).toMatchObject({ outcome: 'already_exists', orderPayment: { amount: '1.00' } });
    // The statement waited for the other commit and could not see it; the next round judges it.
    expect(recording.take()).toEqual(['store.orderPayments.record', 'store.orderPayments.record']);
    expect(await direct.idempotency.reserve(scope, 'h1')).toEqual({ outcome: 'done', order_payment_id: recorded.order_payment_id });
  });

  it.skipIf(postgresOnly)('E1: marks nothing done when another order committed after the snapshot holds the id', async () => {
    const { result } = await createAgainstLateCommit({ miniapp_order_id: 'mo_someone_else' });
    expect(result).toMatchObject({ outcome: 'bound_elsewhere', orderPayment: { miniapp_order_id: 'mo_someone_else' } });
    expect(recording.take()).toEqual(['store.orderPayments.record', 'store.orderPayments.record']);
    expect(await direct.idempotency.reserve(scope, 'h1')).toEqual({ outcome: 'in_progress' });
  });
});
