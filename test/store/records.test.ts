/**
 * Statements, retention and erasure in the store (ADR 0041), on each backend, with the clock moved
 * by hand. Expected values come from the contract (`x-statement-day`, `x-retention`,
 * OrderDetails' `x-financial-record`) and from SQL over the payments themselves, never from the
 * code under test.
 */
import { beforeEach, expect, it } from 'vitest';
import { financialRecordMembers, retentionBounds, retentionKinds, statementDayRule } from '../../src/contract/records.js';
import { createStore, type NewOrderPayment, type StatementOwner, type Store } from '../../src/platform/store/index.js';
import { REPLAY_PURGE_GRACE_MS } from '../../src/platform/store/replayGuard.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, newOrderPayment, transitionTo } from './fixtures.js';
import { recordingDb } from './recordingDb.js';

const DAY = 86_400_000;
const bounds = retentionBounds();
const miniapp: StatementOwner = { kind: 'miniapp', id: 'ma_shop' };
const hostapp: StatementOwner = { kind: 'hostapp', id: 'ha_superapp' };

/** An order with every kind of member: financial ones and personal ones. */
function fullOrder(payment: Partial<NewOrderPayment>): string {
  return (
    `{"currency":"VND","amount":${JSON.stringify(payment.amount ?? '12.30')},"subtotal_amount":12345678901234567.80,"tax_amount":"1.10",` +
    `"taxes_included":true,"miniapp_order_id":"mo_1","hostapp_user_id":${JSON.stringify(payment.hostapp_user_id ?? 'user_42')},` +
    `"note":"ring twice","items":[{"name":"Tea","price":"1"}],"shipping_address":{"name":"An Nguyen","phone":"+84900000000"},` +
    `"custom_attributes":{"k":"v"}}`
  );
}

/** An E6 body as the platform writes it (OrderCompletion), with custom attributes naming the user. */
const e6Body = (payment: { order_payment_id: string; client_id: string; payment_status: string; miniapp_order_id: string | null }) =>
  JSON.stringify({
    miniapp_order_id: payment.miniapp_order_id ?? undefined,
    hostapp_order_payment_id: payment.order_payment_id,
    hostapp_client_id: payment.client_id,
    payment_status: payment.payment_status,
    custom_attributes: { phone: '+84900000000', visits: 3 },
  });

describeEachBackend('records', (database) => {
  const clock = manualClock(new Date('2026-03-10T10:00:00.000Z'));
  let store: Store;
  beforeEach(() => {
    store = createStore(database.db, { clock: clock.now });
  });

  /** An event-log entry naming these users and payments (what erasure looks for). */
  const event = (id: string, names: { users?: string[]; payments?: string[] }, clientId = 'ha_superapp') =>
    store.eventLog.record({
      event_id: id,
      direction: 'hostapp_to_miniapp',
      app_id: 'ma_shop',
      client_id: clientId,
      event_type: 'x',
      external_event_id: null,
      payload: `{"secret":"${id}"}`,
      outcome: 'delivered',
      error_code: null,
      receiver_http_status: 200,
      receiver_response: '{"r":1}',
      duration_ms: 1,
      names_users: names.users ?? null,
      names_payments: names.payments ?? null,
    });

  async function pay(overrides: Partial<NewOrderPayment>, status?: 'paid' | 'cancelled' | 'failed', at = store) {
    const payment = newOrderPayment({ ...overrides, order_json: fullOrder(overrides) });
    await store.orderPayments.create(payment, null);
    if (status) await at.orderPayments.transition(transitionTo(payment, status), e6Body);
    return payment;
  }

  /** The day's statement of one owner as the API would render it, for byte comparisons. */
  async function snapshot(owner: StatementOwner, day: string): Promise<string> {
    return JSON.stringify([await store.statements.totals(owner, day, 1000), await store.statements.lines(owner, day, 1000)]);
  }

  it('a closed day before the first settlement is empty, and stays so; an open day, or a closed one not yet written, has no statement', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-20T10:00:00.000Z'));
    const rule = statementDayRule();
    // Nothing settled and nothing closed yet: no day has a statement before the first close...
    expect(await store.statements.closedAt('2026-03-19')).toBeNull();
    // ...which closes every day due (through yesterday: today's close, at 01:00 tomorrow, has not come) empty.
    expect(await store.statements.closeNextDay()).toBe(true);
    expect(await store.statements.closeNextDay()).toBe(false);
    const closedEmpty = new Date(Date.parse('2026-03-20T00:00:00.000Z') + rule.closesAfterMs);
    expect(await store.statements.closedAt('2026-03-19')).toEqual(closedEmpty);
    expect(await store.statements.closedAt('0001-01-01')).not.toBeNull();
    expect(await store.statements.closedAt('2026-03-20')).toBeNull();
    expect(await store.statements.lines(miniapp, '2026-03-19', 10)).toEqual({ lines: [], next_cursor: null });
    // A settlement today does not reach back into the empty day...
    await pay({ amount: '3.00' }, 'paid');
    expect(await store.statements.closedAt('2026-03-19')).toEqual(closedEmpty);
    // ...and today, closed by the clock but not yet written, has no statement until the worker writes it.
    clock.advance(Date.parse('2026-03-21T00:00:00.000Z') + rule.closesAfterMs - clock.now().getTime());
    expect(await store.statements.closedAt('2026-03-20')).toBeNull();
    expect(await store.statements.closeNextDay()).toBe(true);
    expect(await store.statements.closedAt('2026-03-20')).toEqual(clock.now());
  });

  it.each([
    ['no progress row (an emptied table)', false],
    ['a progress row that never closed a day', true],
  ])(
    'a day closed empty never changes: the first settlement, stamped in it by a clock behind, is an adjustment on the next day to close (%s)',
    async (_case, withRow) => {
      clock.advance(-clock.now().getTime() + Date.parse('2026-04-02T02:00:00.000Z'));
      if (withRow) await store.db.query('INSERT INTO statement_progress (singleton, closed_through) VALUES (TRUE, NULL)');
      // 1 April closed at 01:00 on the 2nd, before anything was ever settled: it is served closed and empty.
      await store.statements.closeNextDay();
      const closedAt = await store.statements.closedAt('2026-04-01');
      expect(closedAt).not.toBeNull();
      const served = { miniapp: await snapshot(miniapp, '2026-04-01'), hostapp: await snapshot(hostapp, '2026-04-01') };
      expect(served.miniapp).toBe(JSON.stringify([[], { lines: [], next_cursor: null }]));

      // An instance whose clock runs 2 h 30 behind settles the first payment ever, stamped 23:30 on the 1st.
      const behind = createStore(database.db, { clock: () => new Date(clock.now().getTime() - 2.5 * 3_600_000) });
      const late = newOrderPayment({ amount: '123456789012345678.91', order_json: fullOrder({ amount: '123456789012345678.91' }) });
      await behind.orderPayments.create(late, null);
      await behind.orderPayments.transition(transitionTo(late, 'paid'), e6Body);

      // The closed day is as it was served, whoever asks, and whatever the worker does.
      expect(await store.statements.closedAt('2026-04-01')).toEqual(closedAt);
      expect(await snapshot(miniapp, '2026-04-01')).toBe(served.miniapp);
      expect(await store.statements.closeNextDay()).toBe(false);
      expect(await store.statements.closedAt('2026-04-01')).toEqual(closedAt);
      expect(await snapshot(miniapp, '2026-04-01')).toBe(served.miniapp);
      expect(await snapshot(hostapp, '2026-04-01')).toBe(served.hostapp);

      // The 2nd, the next day to close, lists it as an adjustment, with its totals.
      clock.advance(Date.parse('2026-04-03T00:00:00.000Z') + statementDayRule().closesAfterMs - clock.now().getTime());
      expect(await store.statements.closeNextDay()).toBe(true);
      expect(await snapshot(miniapp, '2026-04-01')).toBe(served.miniapp);
      for (const owner of [miniapp, hostapp]) {
        expect((await store.statements.lines(owner, '2026-04-02', 10)).lines).toEqual([
          expect.objectContaining({
            order_payment_id: late.order_payment_id,
            adjustment: true,
            amount: '123456789012345678.91',
            settled_at: '2026-04-01T23:30:00.000Z',
          }),
        ]);
        expect(await store.statements.totals(owner, '2026-04-02', 1000)).toEqual([
          { currency: 'VND', payment_status: 'paid', count: 1, amount: '123456789012345678.91' },
        ]);
      }
    },
  );

  it('a day closes once, at 01:00 UTC the next day; its paid total is the store sum; both sides list the same; a late settlement is an adjustment', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const rule = statementDayRule();
    const paid = await pay({ amount: '12345678901234567.89' }, 'paid');
    await pay({ amount: '0.01' }, 'paid');
    await pay({ amount: '99.90' }, 'cancelled');
    await pay({ amount: '5', app_id: 'ma_other' }, 'paid');
    await pay({ amount: '7', client_id: 'ha_other' }, 'paid');
    const late = await pay({ amount: '40.00' });
    // Before its close, only the days before the first settlement close (empty); at it, the day closes, once.
    clock.advance(Date.parse('2026-03-11T00:00:00.000Z') + rule.closesAfterMs - 1 - clock.now().getTime());
    expect(await store.statements.closeNextDay()).toBe(true);
    expect(await store.statements.closeNextDay()).toBe(false);
    expect(await store.statements.closedAt('2026-03-09')).not.toBeNull();
    expect(await store.statements.closedAt('2026-03-10')).toBeNull();
    clock.advance(1);
    expect(await store.statements.closeNextDay()).toBe(true);
    expect(await store.statements.closeNextDay()).toBe(false);
    expect(await store.statements.closedAt('2026-03-10')).toEqual(clock.now());

    const [{ sum }] = (await store.db.query<{ sum: string }>(
      `SELECT sum(p.amount)::text AS sum FROM order_payments p JOIN payment_status_history h USING (client_id, order_payment_id)
       WHERE h.to_status = 'paid' AND h.at >= '2026-03-10' AND h.at < '2026-03-11' AND p.app_id = 'ma_shop'`,
    )) as [{ sum: string }];
    const totals = await store.statements.totals(miniapp, '2026-03-10', 1000);
    expect(totals.find((total) => total.payment_status === 'paid')).toEqual({
      currency: 'VND',
      payment_status: 'paid',
      count: 3,
      amount: sum,
    });
    expect(sum).toBe('12345678901234574.90');
    const lines = await store.statements.lines(miniapp, '2026-03-10', 1000);
    expect(lines.lines.find((line) => line.order_payment_id === paid.order_payment_id)?.amount).toBe('12345678901234567.89');

    // The pair's lines are the same on both sides.
    const pairOf = async (owner: StatementOwner) =>
      (await store.statements.lines(owner, '2026-03-10', 1000)).lines.filter(
        (line) => line.app_id === 'ma_shop' && line.client_id === 'ha_superapp',
      );
    expect(await pairOf(hostapp)).toEqual(await pairOf(miniapp));
    expect((await pairOf(hostapp)).length).toBe(3);

    // Pages by keyset give the same lines.
    const first = await store.statements.lines(miniapp, '2026-03-10', 2);
    const second = await store.statements.lines(miniapp, '2026-03-10', 2, first.next_cursor!);
    expect([...first.lines, ...second.lines]).toEqual(lines.lines);
    await expect(store.statements.lines(miniapp, '2026-03-10', 2, 'bm90LWEtY3Vyc29y')).rejects.toThrow();

    // A settlement stamped in the closed day by a clock behind: listed on the next day, as an adjustment.
    const before = await snapshot(miniapp, '2026-03-10');
    const behind = createStore(database.db, { clock: () => new Date('2026-03-10T23:00:00.000Z') });
    await behind.orderPayments.transition(transitionTo(late, 'paid'), () => '{}');
    clock.advance(DAY);
    expect(await store.statements.closeNextDay()).toBe(true);
    expect(await snapshot(miniapp, '2026-03-10')).toBe(before);
    const next = await store.statements.lines(miniapp, '2026-03-11', 1000);
    expect(next.lines).toEqual([
      expect.objectContaining({
        order_payment_id: late.order_payment_id,
        adjustment: true,
        amount: '40.00',
        settled_at: '2026-03-10T23:00:00.000Z',
      }),
    ]);
  });

  it('a day read while another instance closes it is answered with the time it closed, never the rule’s', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    await pay({}, 'paid');
    // The first close: the days before the first settlement, empty; the 10th is not yet due.
    expect(await store.statements.closeNextDay()).toBe(true);
    clock.advance(Date.parse('2026-03-11T01:07:00.000Z') - clock.now().getTime());
    // A reader's store whose first statement lets the other instance close the 10th right after it.
    let closing: Promise<boolean> | undefined;
    const reader = createStore(
      {
        ...store.db,
        async query(sql, params) {
          const rows = await store.db.query(sql, params);
          closing ??= store.statements.closeNextDay();
          await closing;
          return rows as never;
        },
      },
      { clock: clock.now },
    );
    const seen = await reader.statements.closedAt('2026-03-10');
    expect(await closing).toBe(true);
    // Whoever reads the closed day, whenever, reads the same closed_at: the one the day was closed at.
    expect(await store.statements.closedAt('2026-03-10')).toEqual(new Date('2026-03-11T01:07:00.000Z'));
    expect([null, '2026-03-11T01:07:00.000Z']).toContain(seen?.toISOString() ?? null);
  });

  it('totals come in pages of currency and status, however many a day holds; every page the store’s exact sums', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const currencies = ['VND', 'USD', 'EUR', 'xyz', '=cmd'];
    for (const [index, currency] of currencies.entries()) {
      const amount = `${index + 1}0000000000000000000.0${index}`;
      const payment = newOrderPayment({ currency, amount, order_json: fullOrder({ amount }) });
      await store.orderPayments.create(payment, null);
      await store.orderPayments.transition(transitionTo(payment, index % 2 === 0 ? 'paid' : 'failed'), e6Body);
    }
    clock.advance(DAY);
    while (await store.statements.closeNextDay());
    const whole = await store.statements.totals(miniapp, '2026-03-10', 1000);
    expect(whole).toHaveLength(currencies.length);
    const paged = [];
    for (let page = await store.statements.totals(miniapp, '2026-03-10', 2); page.length > 0;) {
      paged.push(...page);
      page = await store.statements.totals(miniapp, '2026-03-10', 2, page.at(-1));
    }
    expect(paged).toEqual(whole);
    expect(whole.find((total) => total.currency === 'USD')).toEqual({
      currency: 'USD',
      payment_status: 'failed',
      count: 1,
      amount: '20000000000000000000.01',
    });
  });

  it('after each period the data is gone or redacted as published; what the policy keeps is untouched', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const t0 = clock.now().getTime();
    const settled = await pay({}, 'paid');
    const open = await pay({});
    await store.db.query(`UPDATE deliveries SET status = 'delivered', next_attempt_at = NULL, delivered_at = $1`, [clock.now()]);
    await store.db.query(
      `INSERT INTO reconcile_asks (client_id, order_payment_id, asked_at, duration_ms, outcome) VALUES ($1, $2, $3, 5, 'in_process')`,
      [settled.client_id, settled.order_payment_id, clock.now()],
    );
    await store.eventLog.record({
      event_id: 'evt_1',
      direction: 'hostapp_to_miniapp',
      app_id: 'ma_shop',
      client_id: 'ha_superapp',
      event_type: 'x',
      external_event_id: null,
      payload: '{"hostapp_user_id":"user_42"}',
      outcome: 'delivered',
      error_code: null,
      receiver_http_status: 200,
      receiver_response: '{"ok":true}',
      duration_ms: 3,
      names_users: ['user_42'],
      names_payments: null,
    });
    await store.replayGuard.remember('digest-1', new Date(t0 + 300_000));
    const reserved = await store.idempotency.reserve(
      { app_id: 'ma_shop', client_id: 'ha_superapp', miniapp_order_id: 'mo_keep', idempotency_key: 'key-1' },
      'hash',
    );
    if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);
    const keyed = newOrderPayment({ miniapp_order_id: 'mo_keep' });
    await store.orderPayments.create(keyed, reserved.reservation);
    await store.orderPayments.transition(transitionTo(keyed, 'cancelled'), () => '{}');
    await store.db.query(`UPDATE deliveries SET status = 'delivered', next_attempt_at = NULL, delivered_at = $1`, [clock.now()]);

    const purgeAll = async () => {
      for (const kind of retentionKinds) while ((await store.retention.purge(kind, bounds[kind].default * DAY, 2)) > 0);
    };
    const count = async (sql: string) => Number((await store.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${sql}`))[0]!.n);
    const at = async (ms: number) => {
      clock.advance(t0 + ms - clock.now().getTime());
      await purgeAll();
    };

    await at(300_000);
    expect(await count('replay_guard')).toBe(1);
    await at(300_001 + bounds.replay_guard.default * DAY + REPLAY_PURGE_GRACE_MS);
    expect(await count('replay_guard')).toBe(0);
    await at(bounds.idempotency_keys.default * DAY);
    expect(await count('idempotency_keys')).toBe(2);
    await at(bounds.idempotency_keys.default * DAY + 1);
    expect(await store.db.query('SELECT key FROM idempotency_keys')).toEqual([
      expect.objectContaining({ key: expect.stringMatching(/^order:/) }),
    ]);

    const personal = bounds.order_personal_details.default * DAY;
    expect(bounds.event_payloads.default).toBe(bounds.order_personal_details.default);
    await at(personal - 1);
    expect(await count('event_log WHERE payload IS NOT NULL')).toBe(1);
    expect((await count('delivery_attempts')) + (await count('deliveries'))).toBeGreaterThan(0);
    expect(await count('reconcile_asks')).toBe(1);
    const untouched = await store.db.query<{ order_payment_id: string }>(
      'SELECT order_payment_id, order_json, hostapp_user_id FROM order_payments ORDER BY order_payment_id',
    );
    await at(personal + 1);
    expect(await store.db.query('SELECT payload, receiver_response, names_users FROM event_log')).toEqual([
      { payload: null, receiver_response: null, names_users: null },
    ]);
    expect(await count('deliveries')).toBe(0);
    expect(await count('reconcile_asks')).toBe(0);
    const [redacted] = await store.db.query<{
      order_json: string;
      hostapp_user_id: string | null;
      custom_attributes: string | null;
      amount_text: string;
    }>('SELECT order_json, hostapp_user_id, custom_attributes, amount_text FROM order_payments WHERE order_payment_id = $1', [
      settled.order_payment_id,
    ]);
    const kept = JSON.parse(redacted!.order_json) as Record<string, unknown>;
    expect(Object.keys(kept).every((member) => financialRecordMembers().includes(member))).toBe(true);
    expect(redacted!.order_json).toContain('12345678901234567.80');
    expect(kept).toMatchObject({ currency: 'VND', amount: '12.30', tax_amount: '1.10', taxes_included: true, miniapp_order_id: 'mo_1' });
    expect(redacted).toMatchObject({ hostapp_user_id: null, custom_attributes: null, amount_text: '12.30' });
    // The payment still in process keeps its details: it is still asked about.
    const stillOpen = await store.db.query<{ order_payment_id: string }>(
      'SELECT order_payment_id, order_json, hostapp_user_id FROM order_payments WHERE order_payment_id = $1',
      [open.order_payment_id],
    );
    expect(stillOpen).toEqual(untouched.filter((row) => row.order_payment_id === open.order_payment_id));
    expect(stillOpen[0]).toMatchObject({ hostapp_user_id: 'user_42' });

    await at(bounds.financial_record.default * DAY - 1);
    expect(await count(`order_payments WHERE order_payment_id = '${settled.order_payment_id}'`)).toBe(1);
    expect(await count(`idempotency_keys WHERE key LIKE 'order:%mo_keep'`)).toBe(1);
    await at(bounds.financial_record.default * DAY + 1);
    expect(await count(`order_payments WHERE order_payment_id = '${settled.order_payment_id}'`)).toBe(0);
    expect(await count(`payment_status_history WHERE order_payment_id = '${settled.order_payment_id}'`)).toBe(0);
    expect(await count(`order_payments WHERE order_payment_id = '${open.order_payment_id}'`)).toBe(1);
    // An order's miniapp_order_id key lasts as long as its record, and goes with it.
    expect(await count(`idempotency_keys WHERE key LIKE 'order:%mo_keep'`)).toBe(0);
  });

  it('a payment settled only now, long after it was made, keeps its record, its pending E6 and its statement line', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    // Stuck in process past the whole financial period (no answer from the host app), then settled by a late E5.
    const late = await pay({ amount: '98765432109876543.21' });
    clock.advance(bounds.financial_record.maximum * DAY + DAY);
    await store.orderPayments.transition(transitionTo(late, 'paid'), () => '{}');
    const pending = async () => store.db.query(`SELECT status FROM deliveries WHERE order_payment_id = $1`, [late.order_payment_id]);
    expect(await pending()).toEqual([{ status: 'pending' }]);
    for (const kind of retentionKinds) while ((await store.retention.purge(kind, bounds[kind].minimum * DAY, 10)) > 0);
    // The miniapp is still owed its E6, and the day it settled on still lists it.
    expect(await pending()).toEqual([{ status: 'pending' }]);
    clock.advance(DAY);
    while (await store.statements.closeNextDay());
    const day = clock.now().toISOString().slice(0, 10);
    const settledDay = new Date(clock.now().getTime() - DAY).toISOString().slice(0, 10);
    expect(day > settledDay).toBe(true);
    expect((await store.statements.lines(miniapp, settledDay, 10)).lines).toEqual([
      expect.objectContaining({ order_payment_id: late.order_payment_id, amount: '98765432109876543.21', adjustment: false }),
    ]);
    // Once its settlement is as old as the period, it goes like any other.
    clock.advance(bounds.financial_record.minimum * DAY);
    await store.db.query(`UPDATE deliveries SET status = 'delivered', next_attempt_at = NULL, delivered_at = $1`, [clock.now()]);
    while ((await store.retention.purge('financial_record', bounds.financial_record.minimum * DAY, 10)) > 0);
    expect(await store.db.query('SELECT 1 FROM order_payments WHERE order_payment_id = $1', [late.order_payment_id])).toEqual([]);
  });

  it('the purge keeps a replay-guard entry until every instance’s clock is past it: a lagging instance still refuses the replay', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const expiry = new Date(clock.now().getTime() + 300_000);
    expect(await store.replayGuard.remember('digest-window', expiry)).toBe(true);
    // This instance's clock is past the expiry; another's runs REPLAY_PURGE_GRACE_MS - 1 s behind, still inside the window.
    clock.advance(300_000 + REPLAY_PURGE_GRACE_MS - 2_000);
    const lagging = createStore(database.db, { clock: () => new Date(clock.now().getTime() - REPLAY_PURGE_GRACE_MS + 1_000) });
    expect(lagging.replayGuard.now() < expiry).toBe(true);
    while ((await store.retention.purge('replay_guard', bounds.replay_guard.minimum * DAY, 10)) > 0);
    expect(await lagging.replayGuard.remember('digest-window', expiry)).toBe(false);
    // Once every clock is past it, the entry goes.
    clock.advance(3_000);
    while ((await store.retention.purge('replay_guard', bounds.replay_guard.minimum * DAY, 10)) > 0);
    expect(await store.db.query(`SELECT digest FROM replay_guard WHERE digest = 'digest-window'`)).toEqual([]);
  });

  it('erasure removes exactly one user’s personal data, leaves money and statements, and repeats only what arrived since', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const mine = [await pay({ hostapp_user_id: 'user_a', amount: '10.00' }, 'paid'), await pay({ hostapp_user_id: 'user_a', amount: '3' })];
    const theirs = await pay({ hostapp_user_id: 'user_b', amount: '4' }, 'paid');
    const otherHostapp = await pay({ hostapp_user_id: 'user_a', client_id: 'ha_other' }, 'paid');
    await event('e_user', { users: ['user_a'] });
    await event('e_payment', { payments: [mine[1]!.order_payment_id] });
    await event('e_other_user', { users: ['user_b'] });
    await event('e_other_hostapp', { users: ['user_a'] }, 'ha_other');
    clock.advance(DAY);
    expect(await store.statements.closeNextDay()).toBe(true);
    const statement = await snapshot(hostapp, '2026-03-10');
    const rowsOf = async (ids: string[]) =>
      store.db.query('SELECT * FROM order_payments WHERE order_payment_id = ANY($1::text[]) ORDER BY order_payment_id', [ids]);
    const othersBefore = await rowsOf([theirs.order_payment_id, otherHostapp.order_payment_id]);
    const eventsBefore = await store.db.query(`SELECT * FROM event_log WHERE event_id IN ('e_other_user', 'e_other_hostapp') ORDER BY id`);

    // One of the user's E6s delivered, the other still to be sent (their second payment, settled now;
    // a payment erased while still in process is the repeat's, below).
    await store.orderPayments.transition(transitionTo(mine[1]!, 'paid'), e6Body);
    await store.db.query(
      `UPDATE deliveries SET status = 'delivered', next_attempt_at = NULL, delivered_at = $1 WHERE order_payment_id = $2`,
      [clock.now(), mine[0]!.order_payment_id],
    );
    const bodiesOf = async (ids: string[]) =>
      (
        await store.db.query<{ order_payment_id: string; status: string; body: string }>(
          'SELECT order_payment_id, status, body FROM deliveries WHERE order_payment_id = ANY($1::text[]) ORDER BY order_payment_id',
          [ids],
        )
      ).map((row) => ({ ...row, body: JSON.parse(row.body) as Record<string, unknown> }));
    const othersBodies = await store.db.query(
      'SELECT * FROM deliveries WHERE order_payment_id = ANY($1::text[]) ORDER BY order_payment_id',
      [[theirs.order_payment_id, otherHostapp.order_payment_id]],
    );
    const mineBefore = await bodiesOf(mine.map((payment) => payment.order_payment_id));
    expect(mineBefore.map((row) => row.status).sort()).toEqual(['delivered', 'pending']);

    expect(await store.retention.eraseUser('ha_superapp', 'user_a', 'digest_a', 1000)).toEqual({ payments: 2, events: 2 });
    // Their E6 bodies, delivered and pending, lose the custom attributes and keep everything else.
    expect(await bodiesOf(mine.map((payment) => payment.order_payment_id))).toEqual(
      mineBefore.map((row) => ({
        ...row,
        body: Object.fromEntries(Object.entries(row.body).filter(([member]) => member !== 'custom_attributes')),
      })),
    );
    expect(
      await store.db.query('SELECT * FROM deliveries WHERE order_payment_id = ANY($1::text[]) ORDER BY order_payment_id', [
        [theirs.order_payment_id, otherHostapp.order_payment_id],
      ]),
    ).toEqual(othersBodies);
    const erased = await store.db.query<{
      hostapp_user_id: string | null;
      order_json: string;
      amount_text: string;
      payment_status: string;
    }>(
      'SELECT hostapp_user_id, order_json, amount_text, payment_status FROM order_payments WHERE order_payment_id = ANY($1::text[]) ORDER BY amount_text',
      [mine.map((payment) => payment.order_payment_id)],
    );
    expect(erased.map((row) => [row.hostapp_user_id, row.amount_text, row.payment_status])).toEqual([
      [null, '10.00', 'paid'],
      [null, '3', 'paid'],
    ]);
    for (const row of erased) expect(row.order_json).not.toMatch(/user_a|ring twice|An Nguyen|Tea/);
    expect(await store.db.query(`SELECT payload, receiver_response FROM event_log WHERE event_id IN ('e_user', 'e_payment')`)).toEqual([
      { payload: null, receiver_response: null },
      { payload: null, receiver_response: null },
    ]);
    expect(await rowsOf([theirs.order_payment_id, otherHostapp.order_payment_id])).toEqual(othersBefore);
    expect(await store.db.query(`SELECT * FROM event_log WHERE event_id IN ('e_other_user', 'e_other_hostapp') ORDER BY id`)).toEqual(
      eventsBefore,
    );
    expect(await snapshot(hostapp, '2026-03-10')).toBe(statement);

    expect(await store.retention.eraseUser('ha_superapp', 'user_a', 'digest_a', 1000)).toEqual({ payments: 0, events: 0 });
    await event('e_later', { payments: [mine[0]!.order_payment_id] });
    const later = await pay({ hostapp_user_id: 'user_a' });
    expect(await store.retention.eraseUser('ha_superapp', 'user_a', 'digest_a', 1000)).toEqual({ payments: 1, events: 1 });
    // A payment erased while in process whose E5 later carried custom attributes: a repeat erases them from its E6 too.
    await store.orderPayments.transition({ ...transitionTo(later, 'paid'), custom_attributes: '{"phone":"+84911111111"}' }, e6Body);
    expect((await bodiesOf([later.order_payment_id]))[0]!.body).toHaveProperty('custom_attributes');
    await store.retention.eraseUser('ha_superapp', 'user_a', 'digest_a', 1000);
    expect((await bodiesOf([later.order_payment_id]))[0]!.body).not.toHaveProperty('custom_attributes');
  });

  it('a payment erased while in process, settled later with custom attributes: a repeat erases them from the payment too, and so would its period', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const open = await pay({ hostapp_user_id: 'user_c' });
    expect(await store.retention.eraseUser('ha_superapp', 'user_c', 'digest_c', 1000)).toEqual({ payments: 1, events: 0 });
    // The host app settles it afterwards (E5) with custom attributes naming the user.
    await store.orderPayments.transition({ ...transitionTo(open, 'paid'), custom_attributes: '{"phone":"+84922222222"}' }, e6Body);
    const attributes = async () =>
      (
        await store.db.query<{ custom_attributes: string | null }>(
          'SELECT custom_attributes FROM order_payments WHERE order_payment_id = $1',
          [open.order_payment_id],
        )
      )[0]!.custom_attributes;
    expect(await attributes()).toContain('+84922222222');
    // The repeat the ADR promises finds what arrived since: the payment's own copy as well as its E6's.
    await store.retention.eraseUser('ha_superapp', 'user_c', 'digest_c', 1000);
    expect(await attributes()).toBeNull();
  });

  it('a payment erased while in process and settled later with custom attributes loses them when its personal details age out', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const open = await pay({ hostapp_user_id: 'user_d' });
    await store.retention.eraseUser('ha_superapp', 'user_d', 'digest_d', 1000);
    await store.orderPayments.transition({ ...transitionTo(open, 'paid'), custom_attributes: '{"phone":"+84933333333"}' }, e6Body);
    clock.advance(bounds.order_personal_details.default * DAY + 1);
    while ((await store.retention.purge('order_personal_details', bounds.order_personal_details.default * DAY, 10)) > 0);
    expect(
      await store.db.query('SELECT custom_attributes FROM order_payments WHERE order_payment_id = $1', [open.order_payment_id]),
    ).toEqual([{ custom_attributes: null }]);
  });

  // E1 judges a retried E3's order_payment_id (ADR 0016, 0039) by comparing the order with the one
  // on record; a redacted one (an erasure, or the personal details' period) by what it keeps.
  it('a retried E3 of a payment erased while in process is the same order, not one bound elsewhere; a changed one still is', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const payment = newOrderPayment({ hostapp_user_id: 'user_f', order_json: fullOrder({ hostapp_user_id: 'user_f' }) });
    expect((await store.orderPayments.create(payment, null)).outcome).toBe('created');
    await store.retention.eraseUser('ha_superapp', 'user_f', 'digest_f', 1000);
    clock.advance(60_000);
    const later = new Date('2099-01-02T00:00:00.000Z');
    expect((await store.orderPayments.create({ ...payment, expires_at: later }, null)).outcome).toBe('already_exists');
    expect((await store.orderPayments.get(payment))!.expires_at).toBe(later.toISOString());
    // A financial member changed: another order.
    const changed = { ...payment, order_json: payment.order_json.replace('"tax_amount":"1.10"', '"tax_amount":"1.20"') };
    expect(changed.order_json).not.toBe(payment.order_json);
    expect((await store.orderPayments.create(changed, null)).outcome).toBe('bound_elsewhere');
  });

  it('a retried E3 of a payment whose personal details aged out is the same order', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const payment = await pay({ hostapp_user_id: 'user_g' }, 'paid');
    clock.advance(bounds.order_personal_details.default * DAY + DAY);
    while ((await store.retention.purge('order_personal_details', bounds.order_personal_details.default * DAY, 10)) > 0);
    expect(
      await store.db.query('SELECT hostapp_user_id FROM order_payments WHERE order_payment_id = $1', [payment.order_payment_id]),
    ).toEqual([{ hostapp_user_id: null }]);
    expect((await store.orderPayments.create(payment, null)).outcome).toBe('already_exists');
  });

  // Valid JSON kept as sent (ADR 0015) may hold a number numeric cannot: the period must still take
  // the personal details of that payment and of every payment of its batch.
  it('an order holding a number numeric cannot hold ages out with the rest of its batch, and a retry of it is still this order', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const odd = newOrderPayment({
      hostapp_user_id: 'user_h',
      order_json: fullOrder({ hostapp_user_id: 'user_h' }).replace('{"k":"v"}', '{"k":1e1000000,"t":1e-20000}'),
    });
    await store.orderPayments.create(odd, null);
    await store.orderPayments.transition(transitionTo(odd, 'paid'), e6Body);
    const plain = await pay({ hostapp_user_id: 'user_i' }, 'paid');
    clock.advance(bounds.order_personal_details.default * DAY + DAY);
    while ((await store.retention.purge('order_personal_details', bounds.order_personal_details.default * DAY, 10)) > 0);
    const rows = await store.db.query<{ order_json: string; hostapp_user_id: string | null }>(
      'SELECT order_json, hostapp_user_id FROM order_payments WHERE order_payment_id = ANY($1::text[]) ORDER BY order_payment_id',
      [[odd.order_payment_id, plain.order_payment_id]],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.hostapp_user_id).toBeNull();
      expect(Object.keys(JSON.parse(row.order_json)).every((member) => financialRecordMembers().includes(member))).toBe(true);
    }
    expect((await store.orderPayments.create(odd, null)).outcome).toBe('already_exists');
  });

  it('erasure runs in batches, each statement its own transaction, changing at most a batch; a run cut short is completed by its repeat', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    const batch = 3;
    const mine: NewOrderPayment[] = [];
    for (let i = 0; i < 3 * batch + 1; i++) {
      const payment = newOrderPayment({ hostapp_user_id: 'user_many', order_json: fullOrder({ hostapp_user_id: 'user_many' }) });
      await store.orderPayments.create(payment, null);
      await store.orderPayments.transition({ ...transitionTo(payment, 'paid'), custom_attributes: '{"phone":"+84900000000"}' }, e6Body);
      mine.push(payment);
    }
    const theirs = await pay({ hostapp_user_id: 'user_other' }, 'paid');
    for (let i = 0; i < 2 * batch; i++) await event(`e_user_${i}`, { users: ['user_many'] });
    for (const [i, payment] of mine.entries()) await event(`e_payment_${i}`, { payments: [payment.order_payment_id] });
    await event('e_other', { users: ['user_other'], payments: [theirs.order_payment_id] });

    // The first run is cut short after its second statement (the database gone, say): what it did stays done.
    const failing = recordingDb(store.db);
    let sent = 0;
    const cut = createStore(
      {
        ...failing.db,
        query: (sql, params) => (++sent > 2 ? Promise.reject(new Error('connection lost')) : failing.db.query(sql, params)),
      },
      { clock: clock.now },
    );
    await expect(cut.retention.eraseUser('ha_superapp', 'user_many', 'digest_many', batch)).rejects.toThrow('connection lost');
    const count = async (sql: string) => Number((await store.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${sql}`))[0]!.n);
    expect(await count(`order_payments WHERE hostapp_user_id = 'user_many'`)).toBe(mine.length - 2 * batch);

    const recording = recordingDb(store.db);
    const again = createStore(recording.db, { clock: clock.now });
    expect(await again.retention.eraseUser('ha_superapp', 'user_many', 'digest_many', batch)).toEqual({
      payments: mine.length - 2 * batch,
      events: 2 * batch + mine.length,
    });
    // No transaction around the batches: every statement commits on its own, and none changed more than a batch.
    const labels = recording.take();
    expect(labels).not.toContain('BEGIN');
    expect(labels.length).toBeGreaterThan(mine.length / batch);
    expect(
      await count(
        `order_payments WHERE hostapp_user_id = 'user_many' OR order_payment_id = ANY(ARRAY[${mine.map((p) => `'${p.order_payment_id}'`).join(',')}]) AND erased_user_digest IS DISTINCT FROM 'digest_many'`,
      ),
    ).toBe(0);
    expect(await count(`deliveries WHERE body LIKE '%custom_attributes%'`)).toBe(1);
    expect(await count(`event_log WHERE payload IS NOT NULL`)).toBe(1);
    expect(await store.db.query(`SELECT event_id FROM event_log WHERE payload IS NOT NULL`)).toEqual([{ event_id: 'e_other' }]);
    // Nothing remains: a repeat changes nothing.
    expect(await store.retention.eraseUser('ha_superapp', 'user_many', 'digest_many', batch)).toEqual({ payments: 0, events: 0 });
  });

  it('instances purging at once take disjoint batches: every due row once, none twice', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    for (let i = 0; i < 40; i++) await pay({}, 'paid');
    clock.advance(bounds.order_personal_details.default * DAY + 1);
    const other = await database.connect();
    try {
      const second = createStore(other, { clock: clock.now });
      const period = bounds.order_personal_details.default * DAY;
      const drain = async (each: Store) => {
        let total = 0;
        for (let batch = -1; batch !== 0; total += batch) batch = await each.retention.purge('order_personal_details', period, 3);
        return total;
      };
      const [one, two] = await Promise.all([drain(store), drain(second)]);
      expect(one + two).toBe(40);
      expect(await store.retention.purge('order_personal_details', period, 3)).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('instances closing at once: each day closed by one of them, in order, its lines written once', async () => {
    clock.advance(-clock.now().getTime() + Date.parse('2026-03-10T10:00:00.000Z'));
    await pay({}, 'paid');
    clock.advance(DAY);
    await pay({}, 'paid');
    clock.advance(2 * DAY);
    const other = await database.connect();
    try {
      const second = createStore(other, { clock: clock.now });
      const closed: boolean[] = [];
      for (let attempt = 0; attempt < 4; attempt++)
        closed.push(...(await Promise.all([store.statements.closeNextDay(), second.statements.closeNextDay()])));
      expect(closed.filter(Boolean).length).toBe(3);
      expect(
        await store.db.query(`SELECT to_char(day, 'YYYY-MM-DD') AS day, count(*)::int AS n FROM statement_lines GROUP BY day ORDER BY day`),
      ).toEqual([
        { day: '2026-03-10', n: 1 },
        { day: '2026-03-11', n: 1 },
      ]);
      expect((await store.db.query('SELECT day FROM statement_days')).length).toBe(3);
    } finally {
      await other.close();
    }
  });
});
