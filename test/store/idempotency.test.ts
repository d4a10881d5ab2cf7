import { beforeEach, describe, expect, it } from 'vitest';
import { idempotencyKeys, type IdempotencyScope } from '../../src/platform/store/idempotency.js';
import type { Db } from '../../src/platform/store/db.js';
import { createStore, DatabaseUnavailableError, type Reservation, type Store } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { hours, manualClock, newOrderPayment, seconds } from './fixtures.js';

const scope = (overrides: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
  app_id: 'ma_shop',
  client_id: 'ha_superapp',
  miniapp_order_id: 'mo_1',
  idempotency_key: 'key-1',
  ...overrides,
});

describe('idempotencyKeys', () => {
  it('names the miniapp order and the Idempotency-Key, each in its scope', () => {
    expect(idempotencyKeys(scope())).toEqual([
      { key: 'idem:ma_shop:key-1', expires: true },
      { key: 'order:ma_shop:ha_superapp:mo_1', expires: false },
    ]);
    expect(idempotencyKeys(scope({ idempotency_key: null, miniapp_order_id: null }))).toEqual([]);
  });

  it('keeps keys apart when identifiers contain the separator', () => {
    const [a] = idempotencyKeys(scope({ app_id: 'a:b', client_id: 'c', idempotency_key: null }));
    const [b] = idempotencyKeys(scope({ app_id: 'a', client_id: 'b:c', idempotency_key: null }));
    expect(a!.key).not.toBe(b!.key);
  });
});

describeEachBackend('idempotency', (database) => {
  let store: Store;
  const clock = manualClock();

  beforeEach(() => {
    store = createStore(database.db, { clock: clock.now, idempotencyStaleAfterMs: seconds(30) });
  });

  async function reserve(s: IdempotencyScope, hash: string): Promise<Reservation> {
    const result = await store.idempotency.reserve(s, hash);
    if (result.outcome !== 'reserved') throw new Error(`expected reserved, got ${result.outcome}`);
    return result.reservation;
  }

  async function completeWith(s: IdempotencyScope, hash: string): Promise<string> {
    const reservation = await reserve(s, hash);
    const payment = newOrderPayment({ app_id: s.app_id, client_id: s.client_id, miniapp_order_id: s.miniapp_order_id });
    await store.orderPayments.create(payment, reservation);
    return payment.order_payment_id;
  }

  it('keeps only the indexes its statements read: every index costs every E1 an entry per key it reserves', async () => {
    // The statements find a key by itself (the primary key) and an Idempotency-Key past its expiry
    // by idempotency_keys_expiry (ADR 0041). None indexes the state, so marking a key done can
    // stay a HOT update.
    const indexes = await database.db.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'idempotency_keys' ORDER BY indexname`,
    );
    expect(indexes.map((index) => index.indexname)).toEqual(['idempotency_keys_expiry', 'idempotency_keys_pkey']);
  });

  it('reserves new keys, then answers in_progress (same body) or conflict (other body) while pending', async () => {
    await reserve(scope(), 'h1');
    expect(await store.idempotency.reserve(scope(), 'h1')).toEqual({ outcome: 'in_progress' });
    expect(await store.idempotency.reserve(scope(), 'h2')).toEqual({ outcome: 'conflict' });
  });

  it('answers done with the order payment once created, conflict for another body', async () => {
    const orderPaymentId = await completeWith(scope(), 'h1');
    clock.advance(hours(1));
    expect(await store.idempotency.reserve(scope(), 'h1')).toEqual({ outcome: 'done', order_payment_id: orderPaymentId });
    expect(await store.idempotency.reserve(scope({ idempotency_key: null }), 'h1')).toEqual({
      outcome: 'done',
      order_payment_id: orderPaymentId,
    });
    expect(await store.idempotency.reserve(scope({ miniapp_order_id: null }), 'h1')).toEqual({
      outcome: 'done',
      order_payment_id: orderPaymentId,
    });
    expect(await store.idempotency.reserve(scope(), 'h2')).toEqual({ outcome: 'conflict' });
  });

  it('frees released keys so a retry reserves them again', async () => {
    const reservation = await reserve(scope(), 'h1');
    await store.idempotency.release(reservation);
    await reserve(scope(), 'h2');
  });

  it('reserves nothing when one key refuses the request', async () => {
    await completeWith(scope({ idempotency_key: null }), 'h1');
    expect(await store.idempotency.reserve(scope({ idempotency_key: 'fresh' }), 'h2')).toEqual({ outcome: 'conflict' });
    // The Idempotency-Key checked alongside was rolled back, so it is free for any body.
    await reserve(scope({ miniapp_order_id: null, idempotency_key: 'fresh' }), 'h3');
  });

  it('takes over a pending reservation abandoned for longer than the stale threshold', async () => {
    const abandoned = await reserve(scope(), 'h1');
    clock.advance(seconds(29));
    expect(await store.idempotency.reserve(scope(), 'h1')).toEqual({ outcome: 'in_progress' });
    clock.advance(seconds(1));
    const takeover = await reserve(scope(), 'h2');

    // The crashed request's late completion or release no longer touches the keys.
    await store.idempotency.release(abandoned);
    await store.orderPayments.create(newOrderPayment(), abandoned);
    expect(await store.idempotency.reserve(scope(), 'h2')).toEqual({ outcome: 'in_progress' });

    const payment = newOrderPayment();
    await store.orderPayments.create(payment, takeover);
    expect(await store.idempotency.reserve(scope(), 'h2')).toEqual({
      outcome: 'done',
      order_payment_id: payment.order_payment_id,
    });
  });

  it('forgets an Idempotency-Key after 24 hours but keeps a miniapp_order_id for good', async () => {
    const byHeader = scope({ miniapp_order_id: null });
    const byOrder = scope({ idempotency_key: null });
    await completeWith(byHeader, 'h1');
    const orderPaymentId = await completeWith(byOrder, 'h1');

    clock.advance(hours(24) - 1);
    expect((await store.idempotency.reserve(byHeader, 'h2')).outcome).toBe('conflict');
    clock.advance(1);
    expect((await store.idempotency.reserve(byHeader, 'h2')).outcome).toBe('reserved');

    clock.advance(hours(24 * 365));
    expect(await store.idempotency.reserve(byOrder, 'h1')).toEqual({ outcome: 'done', order_payment_id: orderPaymentId });
  });

  it('purges expired keys only', async () => {
    await completeWith(scope({ miniapp_order_id: null }), 'h1');
    await completeWith(scope({ idempotency_key: null }), 'h1');
    expect(await store.idempotency.purgeExpired()).toBe(0);
    clock.advance(hours(24));
    expect(await store.idempotency.purgeExpired()).toBe(1);
    const [row] = await database.db.query<{ count: number }>('SELECT count(*)::int AS count FROM idempotency_keys');
    expect(row?.count).toBe(1);
  });

  it('treats a request without keys as reserved with nothing to complete', async () => {
    const none = scope({ miniapp_order_id: null, idempotency_key: null });
    const result = await store.idempotency.reserve(none, 'h1');
    expect(result).toEqual({ outcome: 'reserved', reservation: { reservation_id: expect.any(String), keys: [] } });
  });

  it('gives a key to exactly one of two concurrent requests', async () => {
    const other = createStore(await database.connect(), { clock: clock.now });
    const results = await Promise.all([store.idempotency.reserve(scope(), 'h1'), other.idempotency.reserve(scope(), 'h1')]);
    expect(results.map((r) => r.outcome).sort()).toEqual(['in_progress', 'reserved']);
    await other.close();
  });

  it('gives a request its keys when its batch is retried after the reservation committed unseen', async () => {
    // The reservation statement committed but its answer was lost (the connection dropped, or the
    // client-side time-out fired after the server had committed): the batch is retried request by
    // request, and each request must get back the keys it holds, not be told that an E1 with its
    // keys is still waiting for the host app (its own), nor leave them pending until they go stale.
    let reservations = 0;
    const lossy: Db = {
      ...database.db,
      async query(sql, params) {
        const rows = await database.db.query(sql, params);
        if (typeof sql !== 'string' && sql.name === 'store.idempotency.reserve' && ++reservations === 2)
          throw new DatabaseUnavailableError('the connection was lost after the statement committed');
        return rows as never;
      },
    };
    const lossyStore = createStore(lossy, { clock: clock.now, idempotencyStaleAfterMs: seconds(30) });
    // The first statement is in flight, so the next two requests share the second.
    const first = lossyStore.idempotency.reserve(scope({ miniapp_order_id: 'mo_a', idempotency_key: null }), 'ha');
    const batch = [
      lossyStore.idempotency.reserve(scope({ miniapp_order_id: 'mo_b', idempotency_key: null }), 'hb'),
      lossyStore.idempotency.reserve(scope({ miniapp_order_id: 'mo_c', idempotency_key: 'key-c' }), 'hc'),
    ];
    expect((await first).outcome).toBe('reserved');
    const results = await Promise.all(batch);
    expect(results.map((result) => result.outcome)).toEqual(['reserved', 'reserved']);

    // Each holds its keys: completing it marks them done.
    const payment = newOrderPayment({ miniapp_order_id: 'mo_c' });
    await store.orderPayments.create(payment, (results[1] as { reservation: Reservation }).reservation);
    expect(await store.idempotency.reserve(scope({ miniapp_order_id: null, idempotency_key: 'key-c' }), 'hc')).toEqual({
      outcome: 'done',
      order_payment_id: payment.order_payment_id,
    });
  });
});
