import { beforeEach, expect, it } from 'vitest';
import { orderCompletionBody } from '../../src/platform/payments/settlement.js';
import fc from 'fast-check';
import {
  createStore,
  DatabaseUnavailableError,
  InvalidCursorError,
  lostAttemptError,
  type AttemptRecord,
  type ClaimedDelivery,
  type Store,
} from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { hours, manualClock, newOrderPayment, seconds, transitionTo } from './fixtures.js';

const lease = { limit: 10, leaseMs: seconds(30) };

describeEachBackend('outbox', (database) => {
  let store: Store;
  const clock = manualClock();

  beforeEach(() => {
    store = createStore(database.db, { clock: clock.now });
  });

  /** Creates order payments and completes them, one delivery each; returns their IDs oldest first. */
  async function makeDeliveries(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const payment = newOrderPayment();
      await store.orderPayments.create(payment, null);
      const result = await store.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody);
      if (result.outcome !== 'applied') throw new Error('transition not applied');
      ids.push(result.delivery.delivery_id);
      clock.advance(1);
    }
    return ids;
  }

  async function claimOne(): Promise<ClaimedDelivery> {
    const [claimed] = await store.outbox.claimDue({ ...lease, limit: 1 });
    if (!claimed) throw new Error('nothing to claim');
    return claimed;
  }

  it('claims due deliveries oldest first and leases them until the lease ends', async () => {
    const ids = await makeDeliveries(3);
    const claimed = await store.outbox.claimDue({ ...lease, limit: 2 });
    expect(claimed.map((c) => c.delivery.delivery_id)).toEqual(ids.slice(0, 2));
    expect(claimed.map((c) => c.attempt)).toEqual([1, 1]);
    expect(claimed[0]!.horizon_started_at).toBe(claimed[0]!.delivery.created_at);

    expect((await store.outbox.claimDue(lease)).map((c) => c.delivery.delivery_id)).toEqual([ids[2]]);
    expect(await store.outbox.claimDue(lease)).toEqual([]);
    clock.advance(lease.leaseMs + 1);
    expect(await store.outbox.claimDue(lease)).toHaveLength(3);
  });

  it('records a delivered attempt and stops delivering', async () => {
    const [id] = await makeDeliveries(1);
    const claimed = await claimOne();
    const startedAt = clock.now();
    clock.advance(120);

    const delivery = await store.outbox.recordAttempt({
      delivery_id: id!,
      lease_id: claimed.lease_id,
      started_at: startedAt,
      duration_ms: 120,
      result: { outcome: 'delivered', http_status: 200 },
    });

    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts_made: 1,
      next_attempt_at: null,
      delivered_at: clock.now().toISOString(),
      last_error: null,
    });
    expect((await store.outbox.get(id!))?.attempts).toEqual([
      { attempt: 1, started_at: startedAt.toISOString(), duration_ms: 120, outcome: 'delivered', http_status: 200 },
    ]);
    expect(await store.outbox.countPending()).toBe(0);
    clock.advance(hours(1));
    expect(await store.outbox.claimDue(lease)).toEqual([]);
  });

  it('retries a failed attempt at the time the worker chose, then marks it dead', async () => {
    const [id] = await makeDeliveries(1);
    const first = await claimOne();
    const retryAt = new Date(clock.now().getTime() + seconds(5));
    const afterFirst = await store.outbox.recordAttempt({
      delivery_id: id!,
      lease_id: first.lease_id,
      started_at: clock.now(),
      duration_ms: 10_000,
      result: { outcome: 'failed', error: 'timed out after 10 s', retry_at: retryAt },
    });
    expect(afterFirst).toMatchObject({
      status: 'pending',
      attempts_made: 1,
      next_attempt_at: retryAt.toISOString(),
      last_error: 'timed out after 10 s',
    });

    clock.advance(seconds(5) - 1);
    expect(await store.outbox.claimDue(lease)).toEqual([]);
    clock.advance(1);
    const second = await claimOne();
    expect(second.attempt).toBe(2);
    const dead = await store.outbox.recordAttempt({
      delivery_id: id!,
      lease_id: second.lease_id,
      started_at: clock.now(),
      duration_ms: 35,
      result: { outcome: 'failed', http_status: 500, error: 'HTTP 500', retry_at: null },
    });
    expect(dead).toMatchObject({ status: 'dead', attempts_made: 2, next_attempt_at: null, last_error: 'HTTP 500' });
    expect((await store.outbox.get(id!))?.attempts.map((a) => [a.attempt, a.outcome, a.http_status, a.error])).toEqual([
      [1, 'failed', undefined, 'timed out after 10 s'],
      [2, 'failed', 500, 'HTTP 500'],
    ]);
    expect(await store.outbox.countPending()).toBe(0);
  });

  it('refuses to record an attempt once the lease passed to another claimer, which numbers its attempt after the lost one (ADR 0037)', async () => {
    const [id] = await makeDeliveries(1);
    const leasedAt = clock.now();
    const slow = await claimOne();
    expect(slow.attempt).toBe(1);
    clock.advance(lease.leaseMs + 1);
    const fast = await claimOne();
    // Attempt 1 went out and was never recorded: the next one is attempt 2, and 1 is on record as lost.
    expect(fast.attempt).toBe(2);
    const lost = [1, 'failed', undefined, lostAttemptError, leasedAt.toISOString(), lease.leaseMs];
    const attemptsOf = async () =>
      (await store.outbox.get(id!))?.attempts.map((a) => [a.attempt, a.outcome, a.http_status, a.error, a.started_at, a.duration_ms]);
    expect(await store.outbox.get(id!)).toMatchObject({ status: 'pending', attempts_made: 1, last_error: lostAttemptError });
    expect(await attemptsOf()).toEqual([lost]);

    const attempt = { delivery_id: id!, started_at: clock.now(), duration_ms: 5 };
    expect(
      await store.outbox.recordAttempt({ ...attempt, lease_id: slow.lease_id, result: { outcome: 'delivered', http_status: 200 } }),
    ).toBeNull();
    expect(await store.outbox.get(id!)).toMatchObject({ status: 'pending', attempts_made: 1 });

    expect(
      await store.outbox.recordAttempt({ ...attempt, lease_id: fast.lease_id, result: { outcome: 'delivered', http_status: 200 } }),
    ).toMatchObject({ status: 'delivered', attempts_made: 2, last_error: null });
    expect(await attemptsOf()).toEqual([lost, [2, 'delivered', 200, undefined, attempt.started_at.toISOString(), 5]]);
    expect(
      await store.outbox.recordAttempt({ ...attempt, lease_id: fast.lease_id, result: { outcome: 'delivered', http_status: 200 } }),
    ).toBeNull();
  });

  /** The store over a database whose next `count` statements are sent and committed, then their answers lost with the connection. */
  function answersLost(count: number): Store {
    let left = count;
    const lose = async <T>(statement: () => Promise<T>): Promise<T> => {
      const result = await statement();
      if (left-- > 0) throw new DatabaseUnavailableError('the database connection failed');
      return result;
    };
    const db = database.db;
    return createStore(
      { ...db, query: (sql, params) => lose(() => db.query(sql, params)), transaction: (fn) => lose(() => db.transaction(fn)) },
      { clock: clock.now },
    );
  }

  it('finds the leases a claim took when the database lost its answer, so their attempts start at once (ADR 0037)', async () => {
    const ids = await makeDeliveries(3);
    const lossy = answersLost(1);
    await expect(lossy.outbox.claimDue({ ...lease, limit: 2 })).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // Nobody else may take them while the lease lasts, and the claimer gets them back, numbered.
    expect((await store.outbox.claimDue(lease)).map((c) => c.delivery.delivery_id)).toEqual([ids[2]]);
    const recovered = await lossy.outbox.recoverLeases(lease);
    expect(recovered.map((c) => [c.delivery.delivery_id, c.attempt])).toEqual([
      [ids[0], 1],
      [ids[1], 1],
    ]);
    expect(await lossy.outbox.recoverLeases(lease)).toEqual([]);
    // A recovered lease records like any other.
    expect(await lossy.outbox.recordAttempt(deliveredAttempt(recovered[0]!))).toMatchObject({ status: 'delivered', attempts_made: 1 });
    // A lease lost and already ended is not recovered: the next claim counts its attempt lost.
    await expect(lossy.outbox.claimDue(lease)).resolves.toEqual([]);
    const again = answersLost(1);
    clock.advance(lease.leaseMs + 1);
    await expect(again.outbox.claimDue({ ...lease, limit: 1 })).rejects.toBeInstanceOf(DatabaseUnavailableError);
    clock.advance(lease.leaseMs + 1);
    expect(await again.outbox.recoverLeases(lease)).toEqual([]);
  });

  it('finds the successors a hand-off leased when the database lost the answer of the record', async () => {
    await makeDeliveriesFor(['ma_a', 'ma_a', 'ma_a']);
    const bounded = { limit: 50, leaseMs: seconds(30), maxInFlightPerMiniapp: 1 };
    const [first] = await store.outbox.claimDue(bounded);
    const lossy = answersLost(1);
    // The record committed; its answer was lost. Tried again (as the worker does), it finds it made.
    await expect(lossy.outbox.recordAndHandOff(deliveredAttempt(first!), { leaseMs: seconds(30) })).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
    expect(await lossy.outbox.recordAndHandOff(deliveredAttempt(first!), { leaseMs: seconds(30) })).toEqual({
      delivery: null,
      successors: [],
    });
    expect(await store.outbox.get(first!.delivery.delivery_id)).toMatchObject({ status: 'delivered', attempts_made: 1 });
    const recovered = await lossy.outbox.recoverLeases(lease);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]!.delivery.delivery_id).not.toBe(first!.delivery.delivery_id);
    expect(await store.outbox.claimDue(bounded)).toEqual([]);
  });

  it('a claim skips a due delivery another statement holds rather than waiting on it (no claim/hand-off deadlock)', async ({ skip }) => {
    if (database.db.backend !== 'postgres') skip();
    const ids = await makeDeliveries(2);
    const holder = await database.connect();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holdingTransaction = holder.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM deliveries WHERE delivery_id = $1 FOR UPDATE', [ids[0]]);
      held();
      await released;
    });
    try {
      await holding;
      // The held row is skipped at once; the other is claimed.
      expect((await store.outbox.claimDue(lease)).map((c) => c.delivery.delivery_id)).toEqual([ids[1]]);
    } finally {
      release();
      await holdingTransaction;
      await holder.close();
    }
    expect((await store.outbox.claimDue(lease)).map((c) => c.delivery.delivery_id)).toEqual([ids[0]]);
  });

  it('records an attempt whose delivery a user erasure rewrote while the record waited on the row (the outcome is not thrown away as a lost lease)', async ({
    skip,
  }) => {
    if (database.db.backend !== 'postgres') skip();
    const [id] = await makeDeliveries(1);
    const claimed = await claimOne();
    const eraser = await database.connect();
    try {
      // What a user's erasure does to a pending delivery's body (retention's erasure statements), held open.
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => (commit = resolve));
      let updated!: () => void;
      const holding = new Promise<void>((resolve) => (updated = resolve));
      let eraserPid = 0;
      const erasure = eraser.transaction(async (tx) => {
        eraserPid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
        await tx.query(`UPDATE deliveries SET body = (body::jsonb - 'custom_attributes')::text WHERE delivery_id = $1`, [id]);
        updated();
        await committing;
      });
      await holding;
      const recording = store.outbox.recordAttempt(deliveredAttempt(claimed));
      // The record waits on the row the erasure holds; then the erasure commits.
      const watcher = await database.connect();
      try {
        for (let i = 0; ; i++) {
          const [row] = await watcher.query<{ waiting: number }>(
            'SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))',
            [eraserPid],
          );
          if (row!.waiting > 0) break;
          if (i > 200) {
            commit();
            throw new Error('the record never waited on the erasure');
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await watcher.close();
      }
      commit();
      await erasure;
      // Thrown away, the acknowledged attempt would be counted lost once its lease ended and the E6 sent again.
      expect(await recording).toMatchObject({ status: 'delivered', attempts_made: 1 });
      expect((await store.outbox.get(id!))!.attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'delivered']]);
    } finally {
      await eraser.close();
    }
  });

  it('lists deliveries newest first past the ninth: by sequence number, not by its text ("10" < "9")', async () => {
    const ids = await makeDeliveries(12);
    expect((await store.outbox.list({ limit: 12 })).deliveries.map((d) => d.delivery_id)).toEqual([...ids].reverse());
  });

  it('lists deliveries newest first, page by page, optionally by status', async () => {
    const ids = await makeDeliveries(5);
    const newestFirst = [...ids].reverse();

    const first = await store.outbox.list({ limit: 2 });
    expect(first.deliveries.map((d) => d.delivery_id)).toEqual(newestFirst.slice(0, 2));
    const second = await store.outbox.list({ limit: 2, cursor: first.next_cursor! });
    expect(second.deliveries.map((d) => d.delivery_id)).toEqual(newestFirst.slice(2, 4));
    const last = await store.outbox.list({ limit: 2, cursor: second.next_cursor! });
    expect(last).toEqual({ deliveries: [expect.objectContaining({ delivery_id: ids[0] })], next_cursor: null });
    expect((await store.outbox.list({ limit: 5 })).next_cursor).toBeNull();

    const claimed = await claimOne();
    await store.outbox.recordAttempt({
      delivery_id: claimed.delivery.delivery_id,
      lease_id: claimed.lease_id,
      started_at: clock.now(),
      duration_ms: 1,
      result: { outcome: 'delivered', http_status: 200 },
    });
    expect((await store.outbox.list({ limit: 10, status: 'delivered' })).deliveries.map((d) => d.delivery_id)).toEqual([ids[0]]);
    expect((await store.outbox.list({ limit: 10, status: 'pending' })).deliveries).toHaveLength(4);
    expect((await store.outbox.list({ limit: 10, status: 'dead' })).deliveries).toEqual([]);
  });

  it('rejects a cursor it did not issue', async () => {
    for (const cursor of ['abc', '-1', '0', '1 OR 1=1', '99999999999999999999']) {
      await expect(store.outbox.list({ limit: 1, cursor })).rejects.toBeInstanceOf(InvalidCursorError);
    }
  });

  it('gets one delivery with its attempts, or null', async () => {
    const [id] = await makeDeliveries(1);
    expect(await store.outbox.get(id!)).toMatchObject({ delivery_id: id, status: 'pending', attempts: [] });
    expect(await store.outbox.get('0b6e2f1c-8a43-4c55-9a7e-3f0e6f1c2d9b')).toBeNull();
    expect(await store.outbox.get('not-a-uuid')).toBeNull();
  });

  it('requeues a dead delivery now with a fresh 72-hour schedule', async () => {
    const [id] = await makeDeliveries(1);
    const claimed = await claimOne();
    await store.outbox.recordAttempt({
      delivery_id: id!,
      lease_id: claimed.lease_id,
      started_at: clock.now(),
      duration_ms: 1,
      result: { outcome: 'failed', error: 'refused', retry_at: null },
    });
    clock.advance(hours(80));

    const requeued = await store.outbox.requeue(id!);
    expect(requeued).toMatchObject({
      coalesced: false,
      delivery: { status: 'pending', attempts_made: 1, next_attempt_at: clock.now().toISOString() },
    });
    expect(await store.outbox.countPending()).toBe(1);
    const again = await claimOne();
    expect(again).toMatchObject({ attempt: 2, horizon_started_at: clock.now().toISOString() });
    expect(again.delivery.event_id).toBe(claimed.delivery.event_id);

    expect(await store.outbox.requeue('0b6e2f1c-8a43-4c55-9a7e-3f0e6f1c2d9b')).toBeNull();
    expect(await store.outbox.requeue('nope')).toBeNull();
  });

  it('a redelivery of a delivery in flight joins that attempt: its lease stands and it is not claimed twice (ADR 0038)', async () => {
    const [id] = await makeDeliveries(1);
    const claimed = await claimOne();
    for (let i = 0; i < 3; i++) expect(await store.outbox.requeue(id!)).toMatchObject({ coalesced: true, delivery: { status: 'pending' } });
    expect(await store.outbox.claimDue({ limit: 10, leaseMs: seconds(60) })).toEqual([]);
    expect(
      await store.outbox.recordAttempt({
        delivery_id: id!,
        lease_id: claimed.lease_id,
        started_at: clock.now(),
        duration_ms: 1,
        result: { outcome: 'delivered', http_status: 200 },
      }),
    ).toMatchObject({ status: 'delivered', attempts_made: 1 });
    // Once the attempt is recorded, a redelivery queues the next one, numbered after it.
    expect(await store.outbox.requeue(id!)).toMatchObject({ coalesced: false, delivery: { status: 'pending' } });
    expect(await claimOne()).toMatchObject({ attempt: 2, delivery: { delivery_id: id } });
    // A lease that ran out is an attempt that crashed, not one in flight: a redelivery clears it.
    clock.advance(seconds(61));
    expect(await store.outbox.requeue(id!)).toMatchObject({ coalesced: false });
  });

  it('a redelivery of a delivery already due keeps its place in the queue', async () => {
    const [first] = await makeDeliveries(2);
    const due = (await store.outbox.get(first!))!.next_attempt_at;
    clock.advance(seconds(5));
    expect((await store.outbox.requeue(first!))?.delivery.next_attempt_at).toBe(due);
    const claimed = await store.outbox.claimDue({ limit: 1, leaseMs: seconds(60) });
    expect(claimed.map((c) => c.delivery.delivery_id)).toEqual([first]);
  });

  it('gives every delivery to exactly one of two workers claiming in parallel', async () => {
    const ids = await makeDeliveries(60);
    const workers = [store, createStore(await database.connect(), { clock: clock.now })];
    const claims = await Promise.all(
      workers.map(async (worker) => {
        const mine: string[] = [];
        for (;;) {
          const batch = await worker.outbox.claimDue({ limit: 3, leaseMs: hours(1) });
          if (batch.length === 0) return mine;
          for (const claimed of batch) {
            mine.push(claimed.delivery.delivery_id);
            await worker.outbox.recordAttempt({
              delivery_id: claimed.delivery.delivery_id,
              lease_id: claimed.lease_id,
              started_at: clock.now(),
              duration_ms: 1,
              result: { outcome: 'delivered', http_status: 200 },
            });
          }
        }
      }),
    );
    expect(claims.flat().sort()).toEqual([...ids].sort());
    expect(await store.outbox.countPending()).toBe(0);
    await workers[1]!.close();
  });

  /** Creates one due delivery for each app_id given, in that order. */
  async function makeDeliveriesFor(appIds: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const app_id of appIds) {
      const payment = newOrderPayment({ app_id });
      await store.orderPayments.create(payment, null);
      const result = await store.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody);
      if (result.outcome !== 'applied') throw new Error('transition not applied');
      ids.push(result.delivery.delivery_id);
      clock.advance(1);
    }
    return ids;
  }

  it('leases no miniapp more than maxInFlightPerMiniapp deliveries, counting leases already held', async () => {
    await makeDeliveriesFor([...Array(6).fill('ma_slow'), 'ma_fast', 'ma_fast']);
    const bounded = { limit: 50, leaseMs: seconds(30), maxInFlightPerMiniapp: 2 };
    const first = await store.outbox.claimDue(bounded);
    const byApp = (claims: ClaimedDelivery[]) => claims.map((c) => c.delivery.app_id).sort();
    expect(byApp(first)).toEqual(['ma_fast', 'ma_fast', 'ma_slow', 'ma_slow']);
    // Both miniapps are at their bound while those leases last: nothing more is leased.
    expect(await store.outbox.claimDue(bounded)).toEqual([]);
    // Recording an attempt frees its slot; the next claim fills it and no more.
    const slow = first.find((c) => c.delivery.app_id === 'ma_slow')!;
    await store.outbox.recordAttempt({
      delivery_id: slow.delivery.delivery_id,
      lease_id: slow.lease_id,
      started_at: clock.now(),
      duration_ms: 1,
      result: { outcome: 'delivered', http_status: 200 },
    });
    expect(byApp(await store.outbox.claimDue(bounded))).toEqual(['ma_slow']);
    // Leases that ran out no longer count (their instance is gone): each miniapp gets two again.
    clock.advance(bounded.leaseMs + 1);
    expect(byApp(await store.outbox.claimDue(bounded))).toEqual(['ma_fast', 'ma_fast', 'ma_slow', 'ma_slow']);
  });

  it('keeps the per-miniapp bound across two claimers in parallel', async () => {
    await makeDeliveriesFor(Array.from({ length: 40 }, (_, i) => `ma_${i % 4}`));
    const claimers = [store, createStore(await database.connect(), { clock: clock.now })];
    const bounded = { limit: 3, leaseMs: hours(1), maxInFlightPerMiniapp: 2 };
    const rounds = await Promise.all(
      claimers.map(async (claimer) => [
        await claimer.outbox.claimDue(bounded),
        await claimer.outbox.claimDue(bounded),
        await claimer.outbox.claimDue(bounded),
      ]),
    );
    const leased = rounds.flat(2).map((c) => c.delivery.app_id);
    for (const app of ['ma_0', 'ma_1', 'ma_2', 'ma_3']) expect(leased.filter((id) => id === app)).toHaveLength(2);
    await claimers[1]!.close();
  });

  /** The record of a delivered attempt of `claimed`. */
  function deliveredAttempt(claimed: ClaimedDelivery): AttemptRecord {
    return {
      delivery_id: claimed.delivery.delivery_id,
      lease_id: claimed.lease_id,
      started_at: clock.now(),
      duration_ms: 2,
      result: { outcome: 'delivered', http_status: 200 },
    };
  }

  it('hands a recorded attempt’s slot to its own miniapp’s oldest due delivery, never to another miniapp’s (ADR 0033)', async () => {
    await makeDeliveriesFor(['ma_a', 'ma_b', 'ma_a', 'ma_b', 'ma_a']);
    const bounded = { limit: 50, leaseMs: seconds(30), maxInFlightPerMiniapp: 1 };
    const [a1, b1] = await store.outbox.claimDue(bounded);
    const pendingIds = async (app: string) =>
      (await store.outbox.list({ limit: 50, status: 'pending', appId: app })).deliveries.map((d) => d.delivery_id).reverse();
    const [, a2, a3] = await pendingIds('ma_a');
    const [, b2] = await pendingIds('ma_b');

    const handOff = { leaseMs: seconds(30) };
    const afterA1 = await store.outbox.recordAndHandOff(deliveredAttempt(a1!), handOff);
    expect(afterA1.delivery).toMatchObject({ delivery_id: a1!.delivery.delivery_id, status: 'delivered', attempts_made: 1 });
    expect(afterA1.successors.map((c) => [c.delivery.delivery_id, c.attempt])).toEqual([[a2, 1]]);
    expect(afterA1.successors[0]).toMatchObject({ lease_id: expect.any(String), body: expect.stringContaining('"payment_status"') });
    expect(afterA1.successors[0]!.horizon_started_at).toBe(afterA1.successors[0]!.delivery.created_at);
    // The slot changed hands: both miniapps are still at their bound, so a claim leases nothing.
    expect(await store.outbox.claimDue(bounded)).toEqual([]);

    // A failed attempt frees its slot too; its own retry is not due yet and is never its own successor.
    const failed = await store.outbox.recordAndHandOff(
      { ...deliveredAttempt(b1!), result: { outcome: 'failed', error: 'HTTP 500', http_status: 500, retry_at: clock.now() } },
      handOff,
    );
    expect(failed.delivery).toMatchObject({ status: 'pending', attempts_made: 1 });
    expect(failed.successors.map((c) => c.delivery.delivery_id)).toEqual([b2]);

    // The successor's lease is a lease like a claim's: it holds the slot and records the attempt.
    const afterA2 = await store.outbox.recordAndHandOff(deliveredAttempt(afterA1.successors[0]!), handOff);
    expect(afterA2.successors.map((c) => c.delivery.delivery_id)).toEqual([a3]);
    const afterA3 = await store.outbox.recordAndHandOff(deliveredAttempt(afterA2.successors[0]!), handOff);
    // Nothing of ma_a is due any more: the slot stays free for the next claim.
    expect(afterA3.successors).toEqual([]);
    expect(await store.outbox.countPending()).toBe(2);
    expect((await store.outbox.get(a3!))?.attempts).toHaveLength(1);
  });

  it('hands nothing on for a lost lease or one that had already run out (it held no slot)', async () => {
    await makeDeliveriesFor(['ma_a', 'ma_a', 'ma_a']);
    const bounded = { limit: 50, leaseMs: seconds(30), maxInFlightPerMiniapp: 1 };
    const handOff = { leaseMs: seconds(30) };
    const [first] = await store.outbox.claimDue(bounded);
    // The lease runs out and another claimer takes the delivery: the late record is refused and hands nothing on.
    clock.advance(bounded.leaseMs + 1);
    const [again] = await store.outbox.claimDue(bounded);
    expect(again!.delivery.delivery_id).toBe(first!.delivery.delivery_id);
    expect(await store.outbox.recordAndHandOff(deliveredAttempt(first!), handOff)).toEqual({ delivery: null, successors: [] });
    // The lease ran out but nobody took the delivery: the attempt is recorded, but its slot was
    // already free (a claim may have filled it), so it is not handed on.
    clock.advance(bounded.leaseMs + 1);
    const late = await store.outbox.recordAndHandOff(deliveredAttempt(again!), handOff);
    expect(again!.attempt).toBe(2);
    expect(late.delivery).toMatchObject({ status: 'delivered', attempts_made: 2 });
    expect(late.successors).toEqual([]);
    expect(await store.outbox.claimDue(bounded)).toHaveLength(1);
  });

  it('records attempts given at once each with its own outcome and hands each freed slot on once; one lease recorded twice counts once', async () => {
    await makeDeliveriesFor([...Array(8).fill('ma_a'), ...Array(6).fill('ma_b')]);
    // a1…a5 (ma_a's bound) and b1…b3; b3's lease is lost before its attempt is recorded.
    const claimed = await store.outbox.claimDue({ limit: 8, leaseMs: seconds(30), maxInFlightPerMiniapp: 5 });
    expect(claimed.map((c) => c.delivery.app_id)).toEqual([...Array(5).fill('ma_a'), ...Array(3).fill('ma_b')]);
    await database.db.query('UPDATE deliveries SET lease_id = NULL, lease_until = NULL WHERE delivery_id = $1', [
      claimed[7]!.delivery.delivery_id,
    ]);
    const handOff = { leaseMs: seconds(30) };
    const failing = (index: number) => index % 3 === 1;
    const records = claimed.map((c, index) =>
      failing(index)
        ? { ...deliveredAttempt(c), result: { outcome: 'failed' as const, error: `failure ${index}`, retry_at: null } }
        : deliveredAttempt(c),
    );
    // All in one turn: one group, b1's record twice in it.
    const answers = await Promise.all([
      ...records.map((record) => store.outbox.recordAndHandOff(record, handOff)),
      store.outbox.recordAndHandOff(records[5]!, handOff),
    ]);
    const recorded = answers.slice(0, 7);
    recorded.forEach((answer, index) => {
      expect(answer.delivery, `attempt ${index}`).toMatchObject({
        delivery_id: claimed[index]!.delivery.delivery_id,
        status: failing(index) ? 'dead' : 'delivered',
        attempts_made: 1,
        last_error: failing(index) ? `failure ${index}` : null,
      });
    });
    expect(answers[7], 'the voided lease').toEqual({ delivery: null, successors: [] });
    expect(answers[8], 'the same lease a second time').toEqual({ delivery: null, successors: [] });
    for (const [index, c] of claimed.slice(0, 7).entries())
      expect((await store.outbox.get(c.delivery.delivery_id))?.attempts.map((a) => a.error ?? a.outcome)).toEqual([
        failing(index) ? `failure ${index}` : 'delivered',
      ]);
    // Five of ma_a's slots were freed and three of its deliveries are due: three successors; two
    // of ma_b's and it has four due (b3 again among them): two. Each goes to one attempt of its
    // own miniapp, and none is a delivery whose attempt was just recorded.
    const successors = recorded.flatMap((answer) => answer.successors);
    expect(successors.map((c) => c.delivery.app_id).sort()).toEqual(['ma_a', 'ma_a', 'ma_a', 'ma_b', 'ma_b']);
    for (const answer of recorded)
      for (const successor of answer.successors) expect(successor.delivery.app_id).toBe(answer.delivery!.app_id);
    expect(new Set(successors.map((c) => c.delivery.delivery_id)).size).toBe(5);
    const attempted = claimed.slice(0, 7).map((c) => c.delivery.delivery_id);
    for (const successor of successors) expect(attempted).not.toContain(successor.delivery.delivery_id);
    // The successors hold their slots: ma_a has nothing more due, ma_b's last two fill two of its three free slots.
    const more = await store.outbox.claimDue({ limit: 50, leaseMs: seconds(30), maxInFlightPerMiniapp: 5 });
    expect(more.map((c) => c.delivery.app_id).sort()).toEqual(['ma_b', 'ma_b']);
  });

  it('keeps the per-miniapp bound and makes each attempt once while two instances claim and hand off in parallel', async () => {
    const other = createStore(await database.connect(), { clock: clock.now });
    const apps = ['ma_0', 'ma_1', 'ma_2'];
    /** Live leases per miniapp, as any instance's claim would count them. */
    const liveLeases = () =>
      database.db.query<{ app_id: string; leased: number }>(
        `SELECT app_id, count(*)::int AS leased FROM deliveries WHERE status = 'pending' AND lease_until >= $1 GROUP BY app_id`,
        [clock.now()],
      );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...apps), { minLength: 5, maxLength: 30 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        async (backlog, bound, limit) => {
          const ids = await makeDeliveriesFor(backlog);
          const attempted: string[] = [];
          let mostLeased = 0;
          // Each instance works like the worker: claim, and every attempt's record hands its slot on.
          const work = async (instance: Store) => {
            const attempt = async (claimed: ClaimedDelivery): Promise<void> => {
              attempted.push(claimed.delivery.delivery_id);
              for (const { leased } of await liveLeases()) mostLeased = Math.max(mostLeased, leased);
              const { delivery, successors } = await instance.outbox.recordAndHandOff(deliveredAttempt(claimed), { leaseMs: hours(1) });
              expect(delivery?.status).toBe('delivered');
              await Promise.all(successors.map(attempt));
            };
            for (;;) {
              const claimed = await instance.outbox.claimDue({ limit, leaseMs: hours(1), maxInFlightPerMiniapp: bound });
              if (claimed.length === 0) return;
              await Promise.all(claimed.map(attempt));
            }
          };
          await Promise.all([work(store), work(other)]);
          expect(mostLeased).toBeLessThanOrEqual(bound);
          expect([...attempted].sort()).toEqual([...ids].sort());
          expect(await store.outbox.countPending()).toBe(0);
        },
      ),
      { seed: 33, numRuns: 12 },
    );
    await other.close();
  });

  it('a record that breaks its statement fails alone: the others gathered with it are recorded', async () => {
    await makeDeliveriesFor(['ma_a', 'ma_a', 'ma_a', 'ma_b']);
    const claimed = await store.outbox.claimDue({ limit: 50, leaseMs: seconds(30) });
    // A negative duration breaks delivery_attempts' CHECK, and with it the whole statement.
    const broken = { ...deliveredAttempt(claimed[1]!), duration_ms: -1 };
    const settled = await Promise.allSettled([
      store.outbox.recordAttempt(deliveredAttempt(claimed[0]!)),
      store.outbox.recordAttempt(broken),
      store.outbox.recordAndHandOff(deliveredAttempt(claimed[2]!), { leaseMs: seconds(30) }),
      store.outbox.recordAttempt(deliveredAttempt(claimed[3]!)),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    for (const index of [0, 2, 3])
      expect((await store.outbox.get(claimed[index]!.delivery.delivery_id))?.attempts, `attempt ${index}`).toHaveLength(1);
    expect(await store.outbox.get(claimed[1]!.delivery.delivery_id)).toMatchObject({ status: 'pending', attempts: [] });
  });
});
