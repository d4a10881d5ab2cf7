import { beforeEach, expect, it } from 'vitest';
import type { Db, PreparedStatement, Queryable } from '../../src/platform/store/db.js';
import { createStore, type Store } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { hours, manualClock, newOrderPayment, seconds } from './fixtures.js';
import { recordingDb } from './recordingDb.js';

describeEachBackend('reconciliation claim', (database, backend) => {
  let store: Store;
  const clock = manualClock();

  beforeEach(() => {
    store = createStore(database.db, { clock: clock.now });
  });

  /** Copies `payment`'s row `count` times by SQL, due one millisecond apart after it (a backlog, fast). */
  async function copiesOf(payment: { order_payment_id: string }, count: number) {
    const columns = (
      await database.db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = 'order_payments' AND is_identity = 'NO' AND is_generated = 'NEVER'
         ORDER BY ordinal_position`,
      )
    ).map((row) => row.column_name);
    const changed: Record<string, string> = {
      order_payment_id: `order_payment_id || '_c' || i`,
      miniapp_order_id: `miniapp_order_id || '_c' || i`,
      reconcile_next_at: `reconcile_next_at + i * interval '1 millisecond'`,
    };
    await database.db.query(
      `INSERT INTO order_payments (${columns.join(', ')})
       SELECT ${columns.map((column) => changed[column] ?? column).join(', ')}
       FROM order_payments, generate_series(1, $2::int) AS i WHERE order_payment_id = $1`,
      [payment.order_payment_id, count],
    );
  }

  /**
   * A Db whose reconciliation claim is EXPLAINed (ANALYZE, BUFFERS) just before it runs, in a
   * savepoint rolled back: the pages its reads of order_payments touched (hit or read; index and
   * heap), summed over the plan's scans of it. The update's own writes (one row version and its
   * index entries per lease) are not counted: they are the leases, not the search for them.
   */
  function measuringClaims(db: Db) {
    const pagesRead: number[] = [];
    const pagesOn = (node: Record<string, any>): number =>
      (node['Relation Name'] === 'order_payments' && node['Node Type'] !== 'ModifyTable'
        ? (node['Shared Hit Blocks'] as number) + (node['Shared Read Blocks'] as number)
        : 0) + ((node.Plans as Record<string, any>[] | undefined) ?? []).reduce((sum, child) => sum + pagesOn(child), 0);
    const measured: Db = {
      ...db,
      transaction: (fn, options) =>
        db.transaction(
          (tx) =>
            fn({
              ...tx,
              async query<T>(sql: string | PreparedStatement, params: readonly unknown[] = []): Promise<T[]> {
                if (typeof sql !== 'string' && sql.name === 'store.reconciliation.claimDue') {
                  await tx.query('SAVEPOINT measured');
                  const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.text}`, params);
                  await tx.query('ROLLBACK TO SAVEPOINT measured');
                  const explained = typeof row!['QUERY PLAN'] === 'string' ? JSON.parse(row!['QUERY PLAN']) : row!['QUERY PLAN'];
                  pagesRead.push(pagesOn((explained as Array<{ Plan: Record<string, any> }>)[0]!.Plan));
                }
                return tx.query<T>(sql, params);
              },
            } satisfies Queryable),
          options,
        ),
    };
    return { db: measured, pagesRead };
  }

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

  it('reads the host apps times their free slots, however long the due backlog, and past a paused host app', async () => {
    // 2,001 payments of ha_superapp due (more than the 400 candidates the time-ordered walk
    // ranked), three of ha_other due after them all. No statistics are gathered: PGlite has no
    // autovacuum, and a plan must not depend on them to stay bounded.
    const [first] = await duePayments(1);
    await copiesOf(first!, 2_000);
    clock.advance(seconds(10));
    const others = [];
    for (let i = 0; i < 3; i++) {
      const payment = newOrderPayment({ client_id: 'ha_other', reconcile_at: clock.now() });
      await store.orderPayments.create(payment, null);
      others.push(payment);
      clock.advance(1);
    }
    clock.advance(seconds(1));
    const { db, pagesRead } = measuringClaims(database.db);
    const measured = createStore(db, { clock: clock.now });
    const claim = (skipHostapps: string[] = []) =>
      measured.reconciliation.claimDue({ limit: 50, leaseMs: seconds(30), maxInFlightPerHostapp: 8, skipHostapps });
    // ha_other paused here: its due payments stay, ha_superapp's oldest eight are leased.
    const paused = await claim(['ha_other']);
    expect(paused.map((claim) => claim.order_payment_id)).toEqual([
      first!.order_payment_id,
      ...Array.from({ length: 7 }, (_, i) => `${first!.order_payment_id}_c${i + 1}`),
    ]);
    // ha_superapp at its cap, ha_other still paused: nothing to lease, and little to read.
    expect(await claim(['ha_other'])).toEqual([]);
    // Resumed: ha_other's three, though 1,993 of ha_superapp's are due before them.
    expect((await claim()).map((claim) => claim.order_payment_id)).toEqual(others.map((payment) => payment.order_payment_id));
    // Each claim: two seeks per host app, the free slots of each, the chosen rows found, locked
    // and leased. The 2,001 due payments fill some 300 pages; they are never walked.
    expect(pagesRead).toHaveLength(3);
    for (const pages of pagesRead) expect(pages).toBeLessThanOrEqual(120);
  });

  /** A Db whose reconciliation anyDue is EXPLAINed (ANALYZE, BUFFERS) before it runs: the pages it touched of order_payments. */
  function measuringAnyDue(db: Db) {
    const pagesRead: number[] = [];
    const pagesOn = (node: Record<string, any>): number =>
      (node['Relation Name'] === 'order_payments' ? (node['Shared Hit Blocks'] as number) + (node['Shared Read Blocks'] as number) : 0) +
      ((node.Plans as Record<string, any>[] | undefined) ?? []).reduce((sum, child) => sum + pagesOn(child), 0);
    const measured: Db = {
      ...db,
      async query<T>(sql: string | PreparedStatement, params: readonly unknown[] = []): Promise<T[]> {
        if (typeof sql !== 'string' && sql.name === 'store.reconciliation.anyDue') {
          const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.text}`, params);
          const explained = typeof row!['QUERY PLAN'] === 'string' ? JSON.parse(row!['QUERY PLAN']) : row!['QUERY PLAN'];
          pagesRead.push(pagesOn((explained as Array<{ Plan: Record<string, any> }>)[0]!.Plan));
        }
        return db.query<T>(sql, params);
      },
    };
    return { db: measured, pagesRead };
  }

  it("anyDue (an idle poll) is one statement without the claim's lock, says what a claim would find, and reads two seeks per host app however long the backlog", async () => {
    const recording = recordingDb(database.db);
    const recorded = createStore(recording.db, { clock: clock.now });
    expect(await recorded.reconciliation.anyDue()).toBe(false);
    expect(recording.take()).toEqual(['store.reconciliation.anyDue']);
    // 2,001 payments of ha_superapp in process, first asked about in an hour; none due yet.
    const first = newOrderPayment({ reconcile_at: new Date(clock.now().getTime() + hours(1)) });
    await store.orderPayments.create(first, null);
    await copiesOf(first, 2_000);
    const { db, pagesRead } = measuringAnyDue(database.db);
    const measured = createStore(db, { clock: clock.now });
    expect(await measured.reconciliation.anyDue()).toBe(false);
    // One of ha_other due in a second: due once the second has passed.
    const other = newOrderPayment({ client_id: 'ha_other', reconcile_at: new Date(clock.now().getTime() + seconds(1)) });
    await store.orderPayments.create(other, null);
    expect(await measured.reconciliation.anyDue()).toBe(false);
    clock.advance(seconds(1));
    expect(await measured.reconciliation.anyDue()).toBe(true);
    // Leased: not due for another claim until the lease ends.
    const [claim] = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 8 });
    expect(claim?.order_payment_id).toBe(other.order_payment_id);
    expect(await measured.reconciliation.anyDue()).toBe(false);
    clock.advance(seconds(30) + 1);
    expect(await measured.reconciliation.anyDue()).toBe(true);
    // Asked again and settled (no next ask): never due again; ha_superapp's hour has not passed.
    const [again] = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 8 });
    expect(
      await store.reconciliation.recordAsk({
        order_payment_id: other.order_payment_id,
        app_id: other.app_id,
        client_id: other.client_id,
        lease_id: again!.lease_id,
        asked_at: clock.now(),
        duration_ms: 3,
        outcome: 'in_process',
        payment_status: 'in_process',
        next_at: null,
        stuck: false,
        expires_at: again!.expires_at,
      }),
    ).toBe(true);
    expect(await measured.reconciliation.anyDue()).toBe(false);
    clock.advance(hours(1));
    expect(await measured.reconciliation.anyDue()).toBe(true);
    // The 2,001 payments fill some 300 pages; an ask reads a few index pages per host app, even
    // with all of ha_superapp's due (as EXISTS, the planner hashed every due payment: 95 pages).
    expect(pagesRead).toHaveLength(7);
    for (const pages of pagesRead) expect(pages).toBeLessThanOrEqual(20);
  });

  it('gives a host app only its free slots, and the oldest due of all host apps first', async () => {
    const ids = async (claims: Promise<Array<{ order_payment_id: string }>>) => (await claims).map((claim) => claim.order_payment_id);
    // Due in turn: ha_a, ha_b, ha_a, ha_b, … five each.
    const due: Record<string, string[]> = { ha_a: [], ha_b: [] };
    for (let i = 0; i < 10; i++) {
      const payment = newOrderPayment({ client_id: i % 2 === 0 ? 'ha_a' : 'ha_b', reconcile_at: clock.now() });
      await store.orderPayments.create(payment, null);
      due[payment.client_id]!.push(payment.order_payment_id);
      clock.advance(1);
    }
    clock.advance(seconds(1));
    const claim = (limit: number) => store.reconciliation.claimDue({ limit, leaseMs: seconds(30), maxInFlightPerHostapp: 3 });
    // Fewer than the candidates (three of each): the three oldest of both.
    expect(await ids(claim(3))).toEqual([due.ha_a![0], due.ha_b![0], due.ha_a![1]]);
    // ha_a holds two of its three slots, ha_b one: one more of ha_a, two more of ha_b, oldest first.
    expect(await ids(claim(10))).toEqual([due.ha_b![1], due.ha_a![2], due.ha_b![2]]);
    expect(await ids(claim(10))).toEqual([]);
  });

  /**
   * Runs `during` while another connection holds payments' rows with `lock` (FOR UPDATE, FOR KEY
   * SHARE, …) in an open transaction, then ends that transaction.
   */
  async function whileHeld(ids: string[], lock: string, during: () => Promise<void>) {
    const other = await database.connect();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = other.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM order_payments WHERE order_payment_id = ANY ($1) ${lock}`, [ids]);
      holding();
      await released;
    });
    try {
      await held;
      await during();
    } finally {
      release();
      await holder;
      await other.close();
    }
  }

  it.skipIf(backend.name !== 'postgres')('leases a due payment a statement only references (FOR KEY SHARE)', async () => {
    // An insert whose foreign key names the payment holds FOR KEY SHARE on it until it commits;
    // the lease changes no key, so it neither waits for that nor skips the payment.
    const payments = await duePayments(3);
    const oldest = payments.slice(0, 2).map((p) => p.order_payment_id);
    await whileHeld(oldest, 'FOR KEY SHARE', async () => {
      const claimed = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 2 });
      expect(claimed.map((claim) => claim.order_payment_id)).toEqual(oldest);
    });
  });

  it.skipIf(backend.name !== 'postgres')('skips a due payment another transaction holds, without waiting for it', async () => {
    const payments = await duePayments(3);
    await whileHeld([payments[0]!.order_payment_id], 'FOR UPDATE', async () => {
      const claimed = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 8 });
      expect(claimed.map((claim) => claim.order_payment_id)).toEqual(payments.slice(1).map((p) => p.order_payment_id));
    });
    const [again] = await store.reconciliation.claimDue({ limit: 10, leaseMs: seconds(30), maxInFlightPerHostapp: 8 });
    expect(again?.order_payment_id).toBe(payments[0]!.order_payment_id);
  });
});
