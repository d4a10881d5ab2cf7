import { beforeEach, describe, expect, it } from 'vitest';
import { orderCompletionBody } from '../../src/platform/payments/settlement.js';
import type { Db } from '../../src/platform/store/db.js';
import { createStore, type Store } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, newOrderPayment, refOf, seconds, transitionTo } from './fixtures.js';

describeEachBackend('order payments', (database) => {
  let store: Store;
  const clock = manualClock();
  let eventIds: string[] = [];

  beforeEach(() => {
    eventIds = [];
    let n = 0;
    store = createStore(database.db, { clock: clock.now, newEventId: () => eventIds.shift() ?? `evt_test_${++n}` });
  });

  it('creates an order payment in_process with its first history entry', async () => {
    const input = newOrderPayment({ custom_attributes: '{"loyalty_points":120}' });
    const created = await store.orderPayments.create(input, null);

    expect(created.outcome).toBe('created');
    // The order's text is written, not read back (the next test reads its column).
    const { expires_at, reconcile_at, order_json, ...fields } = input;
    void reconcile_at;
    void order_json;
    const expected = {
      ...fields,
      expires_at: expires_at.toISOString(),
      payment_status: 'in_process',
      payment_fail_reason: null,
      created_at: clock.now().toISOString(),
      updated_at: clock.now().toISOString(),
    };
    expect(created.orderPayment).toEqual(expected);
    expect(await store.orderPayments.get(refOf(input))).toEqual(expected);
    expect(await store.orderPayments.history(refOf(input))).toEqual([
      { from_status: null, to_status: 'in_process', source: 'E1', reason: null, at: clock.now().toISOString() },
    ]);
  });

  it('keeps money and the order JSON exactly as sent', async () => {
    // The order's text is stored, not read back by the store's readers: read from its column.
    const storedOrder = async (input: { client_id: string; order_payment_id: string }) =>
      (
        await database.db.query<{ order_json: string }>(
          'SELECT order_json FROM order_payments WHERE client_id = $1 AND order_payment_id = $2',
          [input.client_id, input.order_payment_id],
        )
      )[0]?.order_json;
    for (const amount of ['12345678901234567890', '0.10', '99999999999999999999', '12.30', '0']) {
      const orderJson = `{"amount":${amount},"note":"1e400 stays text","tax_amount":"0.10"}`;
      const input = newOrderPayment({ amount, order_json: orderJson });
      await store.orderPayments.create(input, null);
      const stored = await store.orderPayments.get(refOf(input));
      expect(stored?.amount).toBe(amount);
      expect(await storedOrder(input)).toBe(orderJson);
    }
    // The batch sends the order's text as a JSON member, not a string of it: escapes, unicode,
    // spacing and number forms must come back byte for byte.
    for (const orderJson of [
      String.raw`{"note":"caf\u00e9 é \\ \"quoted\" \n tab\t \ud83d\ude00","emoji":"😀","items":[{"price":1.10},[],{}],"e":-2.5E+3}`,
      '{ "spaced" : [ 1 , 2 ] ,\n "slash":"a\\/b" }',
    ]) {
      const input = newOrderPayment({ order_json: orderJson });
      expect((await store.orderPayments.create(input, null)).outcome).toBe('created');
      expect(await storedOrder(input)).toBe(orderJson);
    }
    const [sum] = await database.db.query<{ amount: string }>(
      "SELECT amount::text AS amount FROM order_payments WHERE amount_text = '12345678901234567890'",
    );
    expect(sum?.amount).toBe('12345678901234567890.00');
  });

  it('refuses an amount the NUMERIC column would round', async () => {
    await expect(store.orderPayments.create(newOrderPayment({ amount: '1.005' }), null)).rejects.toThrow();
  });

  it('returns the existing record when the host app issues an order_payment_id already on record for this order', async () => {
    const input = newOrderPayment();
    await store.orderPayments.create(input, null);
    clock.advance(seconds(5));
    const again = await store.orderPayments.create({ ...input, custom_attributes: '{"retried":true}' }, null);
    expect(again.outcome).toBe('already_exists');
    expect(again.orderPayment.custom_attributes).toBeNull();
    expect(await store.orderPayments.history(refOf(input))).toHaveLength(1);
  });

  it('writes nothing when the host app issues an order_payment_id already bound to another order (ADR 0016)', async () => {
    const input = newOrderPayment();
    await store.orderPayments.create(input, null);
    const others = [
      { amount: '99.00' },
      { app_id: 'ma_other' },
      { miniapp_order_id: 'mo_another' },
      { miniapp_order_id: null },
      { hostapp_user_id: null },
      { currency: 'USD' },
      { order_json: `${input.order_json.slice(0, -1)},"note":"another order"}` },
    ];
    for (const other of others) {
      const scope = {
        app_id: other.app_id ?? input.app_id,
        client_id: input.client_id,
        miniapp_order_id: `mo_${Math.random()}`,
        idempotency_key: null,
      };
      const reserved = await store.idempotency.reserve(scope, 'h-other');
      if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);
      const again = await store.orderPayments.create({ ...input, ...other }, reserved.reservation);
      expect(again, JSON.stringify(other)).toMatchObject({
        outcome: 'bound_elsewhere',
        orderPayment: { amount: '12.30', app_id: input.app_id },
      });
      // The key was not marked done: the same request is still waiting, not answered with another order's id.
      expect(await store.idempotency.reserve(scope, 'h-other')).toEqual({ outcome: 'in_progress' });
    }
    expect(await store.orderPayments.history(refOf(input))).toHaveLength(1);
  });

  it('finds an order payment only within its app_id and client_id', async () => {
    const input = newOrderPayment();
    await store.orderPayments.create(input, null);
    expect(await store.orderPayments.get({ ...refOf(input), app_id: 'ma_other' })).toBeNull();
    expect(await store.orderPayments.get({ ...refOf(input), client_id: 'ha_other' })).toBeNull();
    expect(await store.orderPayments.get({ ...refOf(input), order_payment_id: 'hop_unknown' })).toBeNull();
    expect(await store.orderPayments.history({ ...refOf(input), app_id: 'ma_other' })).toEqual([]);
  });

  describe('transitions', () => {
    it('applies in_process -> terminal with history and an E6 delivery due now', async () => {
      const input = newOrderPayment({ custom_attributes: '{"from_e1":true}' });
      await store.orderPayments.create(input, null);
      // A time with milliseconds: a write that dropped them would differ from what is returned.
      clock.advance(seconds(30) + 123);
      eventIds.push('evt_fixed_1');

      const result = await store.orderPayments.transition(
        transitionTo(input, 'failed', {
          payment_fail_reason: 'Insufficient balance',
          custom_attributes: '{"loyalty_points":12345678901234567890.10}',
        }),
        orderCompletionBody,
      );

      expect(result.outcome).toBe('applied');
      if (result.outcome !== 'applied') return;
      const now = clock.now().toISOString();
      expect(result.orderPayment).toMatchObject({
        payment_status: 'failed',
        payment_fail_reason: 'Insufficient balance',
        custom_attributes: '{"loyalty_points":12345678901234567890.10}',
        updated_at: now,
      });
      expect(result.delivery).toMatchObject({
        event_id: 'evt_fixed_1',
        order_payment_id: input.order_payment_id,
        app_id: input.app_id,
        client_id: input.client_id,
        payment_status: 'failed',
        status: 'pending',
        attempts_made: 0,
        next_attempt_at: now,
        created_at: now,
        delivered_at: null,
        last_error: null,
      });
      expect(await store.orderPayments.history(refOf(input))).toEqual([
        expect.objectContaining({ from_status: null, to_status: 'in_process', source: 'E1' }),
        { from_status: 'in_process', to_status: 'failed', source: 'E5', reason: 'Insufficient balance', at: now },
      ]);
      // Only which transitions applied comes back from the statement: what it returns is what was recorded.
      expect(await store.orderPayments.get(refOf(input))).toEqual(result.orderPayment);
      const { attempts, ...recorded } = (await store.outbox.get(result.delivery.delivery_id))!;
      expect(attempts).toEqual([]);
      expect(result.delivery).toEqual(recorded);

      const [claimed] = await store.outbox.claimDue({ limit: 10, leaseMs: seconds(30) });
      expect(claimed?.delivery.delivery_id).toBe(result.delivery.delivery_id);
      expect(claimed?.body).toBe(
        `{"miniapp_order_id":${JSON.stringify(input.miniapp_order_id)},` +
          `"hostapp_order_payment_id":${JSON.stringify(input.order_payment_id)},` +
          `"hostapp_client_id":"ha_superapp","payment_status":"failed",` +
          `"payment_fail_reason":"Insufficient balance","custom_attributes":{"loyalty_points":12345678901234567890.10},` +
          `"expires_at":"${input.expires_at.toISOString()}"}`,
      );
    });

    it('keeps the E1 custom_attributes when the transition carries none, and omits absent fields from E6', async () => {
      const input = newOrderPayment({ miniapp_order_id: null, custom_attributes: '{"from_e1":true}' });
      await store.orderPayments.create(input, null);
      const result = await store.orderPayments.transition({ ...transitionTo(input, 'paid'), source: 'E4' }, orderCompletionBody);
      expect(result.outcome).toBe('applied');
      expect(result.outcome === 'applied' && result.orderPayment.custom_attributes).toBe('{"from_e1":true}');
      const [claimed] = await store.outbox.claimDue({ limit: 10, leaseMs: seconds(30) });
      expect(JSON.parse(claimed!.body)).toEqual({
        hostapp_order_payment_id: input.order_payment_id,
        hostapp_client_id: input.client_id,
        payment_status: 'paid',
        custom_attributes: { from_e1: true },
        expires_at: input.expires_at.toISOString(),
      });
      expect((await store.orderPayments.history(refOf(input)))[1]?.source).toBe('E4');
    });

    const noEffect = [
      ['in_process', 'in_process', 'unchanged'],
      ['paid', 'paid', 'unchanged'],
      ['cancelled', 'cancelled', 'unchanged'],
      ['failed', 'failed', 'unchanged'],
      ['paid', 'failed', 'conflict'],
      ['paid', 'in_process', 'conflict'],
      ['cancelled', 'paid', 'conflict'],
      ['failed', 'cancelled', 'conflict'],
    ] as const;
    it.each(noEffect)('%s -> %s is %s and creates no delivery', async (from, to, outcome) => {
      const input = newOrderPayment();
      await store.orderPayments.create(input, null);
      if (from !== 'in_process') {
        await store.orderPayments.transition(transitionTo(input, from, { payment_fail_reason: 'first' }), orderCompletionBody);
      }
      const before = await store.orderPayments.get(refOf(input));
      const historyBefore = await store.orderPayments.history(refOf(input));
      const pendingBefore = await store.outbox.countPending();
      clock.advance(seconds(1));

      const result = await store.orderPayments.transition(
        transitionTo(input, to, { payment_fail_reason: 'second', custom_attributes: '{"second":true}' }),
        orderCompletionBody,
      );

      expect(result).toEqual({ outcome, orderPayment: before });
      expect(await store.orderPayments.get(refOf(input))).toEqual(before);
      expect(await store.orderPayments.history(refOf(input))).toEqual(historyBefore);
      expect(await store.outbox.countPending()).toBe(pendingBefore);
    });

    it('reports not_found for an unknown order payment or the wrong scope', async () => {
      const input = newOrderPayment();
      expect(await store.orderPayments.transition(transitionTo(input, 'paid'), orderCompletionBody)).toEqual({ outcome: 'not_found' });
      await store.orderPayments.create(input, null);
      expect(await store.orderPayments.transition({ ...transitionTo(input, 'paid'), app_id: 'ma_other' }, orderCompletionBody)).toEqual({
        outcome: 'not_found',
      });
      expect(await store.outbox.countPending()).toBe(0);
    });

    it('commits the status change and its delivery together: a failed delivery insert leaves the status unchanged', async () => {
      const first = newOrderPayment();
      const second = newOrderPayment();
      await store.orderPayments.create(first, null);
      await store.orderPayments.create(second, null);
      eventIds.push('evt_duplicate', 'evt_duplicate');
      await store.orderPayments.transition(transitionTo(first, 'paid'), orderCompletionBody);

      await expect(store.orderPayments.transition(transitionTo(second, 'paid'), orderCompletionBody)).rejects.toThrow();

      expect((await store.orderPayments.get(refOf(second)))?.payment_status).toBe('in_process');
      expect(await store.orderPayments.history(refOf(second))).toHaveLength(1);
      expect(await store.outbox.countPending()).toBe(1);
    });

    it('applies the first request for each payment of a statement, each answered with its own row, and decides the later ones again', async () => {
      // A store whose first applied transition is held until every request below has been read
      // and has joined the next statement: what goes in one statement is then fixed, not timed.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let headApplying!: () => void;
      const headApplied = new Promise<void>((resolve) => (headApplying = resolve));
      let allRead!: () => void;
      const everyRequestRead = new Promise<void>((resolve) => (allRead = resolve));
      const applies: number[] = [];
      let refsRead = 0;
      let refsToRead = Infinity;
      const holding: Db = {
        ...database.db,
        async query(sql, params) {
          const name = typeof sql === 'string' ? undefined : sql.name;
          if (name === 'store.orderPayments.apply') {
            applies.push((JSON.parse(String(params![0])) as unknown[]).length);
            if (applies.length === 1) {
              headApplying();
              await held;
            }
          }
          const rows = await database.db.query(sql, params);
          if (name === 'store.orderPayments.read') {
            refsRead += (JSON.parse(String(params![0])) as unknown[]).length;
            if (refsRead >= refsToRead) allRead();
          }
          return rows as never;
        },
      };
      const heldStore = createStore(holding, { clock: clock.now });

      const head = newOrderPayment();
      const burst = newOrderPayment({ custom_attributes: '{"e1":true}' });
      const others = [0, 1, 2].map(() => newOrderPayment({ custom_attributes: '{"e1":true}' }));
      for (const payment of [head, burst, ...others]) await store.orderPayments.create(payment, null);
      clock.advance(seconds(1));

      const first = heldStore.orderPayments.transition(transitionTo(head, 'paid'), orderCompletionBody);
      await headApplied;
      // Twelve for one payment (a host app retrying hard), then three others, each different.
      const burstStatuses = [
        'paid',
        'cancelled',
        'paid',
        'failed',
        'paid',
        'paid',
        'cancelled',
        'paid',
        'paid',
        'failed',
        'paid',
        'paid',
      ] as const;
      const requests = [
        ...burstStatuses.map((status) => transitionTo(burst, status, { payment_fail_reason: `burst ${status}` })),
        transitionTo(others[0]!, 'failed', { payment_fail_reason: 'Insufficient balance' }),
        transitionTo(others[1]!, 'cancelled', { custom_attributes: '{"refund":"none"}' }),
        transitionTo(others[2]!, 'paid', { custom_attributes: '{"points":7}' }),
      ];
      refsToRead = 1 + requests.length;
      const pending = requests.map((request) => heldStore.orderPayments.transition(request, orderCompletionBody));
      await everyRequestRead;
      // Each request joins the apply queue in the microtasks after its read answers.
      await new Promise((resolve) => setImmediate(resolve));
      release();
      const [headResult, ...results] = await Promise.all([first, ...pending]);

      expect(headResult!.outcome).toBe('applied');
      // The head alone, then one statement: the burst's first request and the three others. The
      // burst's later eleven were read again and found their payment settled: no statement more.
      expect(applies).toEqual([1, 4]);
      const burstResults = results.slice(0, burstStatuses.length);
      expect(burstResults[0]!.outcome).toBe('applied');
      expect(burstResults.slice(1).map((result) => result.outcome)).toEqual(
        burstStatuses.slice(1).map((status) => (status === 'paid' ? 'unchanged' : 'conflict')),
      );
      // Each applied result is its own payment's row and delivery, as a read finds them.
      for (const result of [burstResults[0]!, ...results.slice(burstStatuses.length)]) {
        if (result.outcome !== 'applied') throw new Error(`not applied: ${result.outcome}`);
        expect(
          await store.orderPayments.get({
            client_id: result.orderPayment.client_id,
            order_payment_id: result.orderPayment.order_payment_id,
            app_id: result.orderPayment.app_id,
          }),
        ).toEqual(result.orderPayment);
        const { attempts, ...recorded } = (await store.outbox.get(result.delivery.delivery_id))!;
        expect(attempts).toEqual([]);
        expect(result.delivery).toEqual(recorded);
        expect(result.delivery.order_payment_id).toBe(result.orderPayment.order_payment_id);
      }
      expect(
        results.slice(burstStatuses.length).map((result) => result.outcome === 'applied' && result.orderPayment.payment_status),
      ).toEqual(['failed', 'cancelled', 'paid']);
      expect(await store.outbox.countPending()).toBe(5);
      expect(await store.orderPayments.history(refOf(burst))).toHaveLength(2);
    });

    it('lets exactly one of two concurrent transitions apply', async () => {
      const input = newOrderPayment();
      await store.orderPayments.create(input, null);
      const other = createStore(await database.connect(), { clock: clock.now });
      const results = await Promise.all([
        store.orderPayments.transition(transitionTo(input, 'paid'), orderCompletionBody),
        other.orderPayments.transition(transitionTo(input, 'cancelled'), orderCompletionBody),
      ]);
      expect(results.map((r) => r.outcome).sort()).toEqual(['applied', 'conflict']);
      expect(await store.outbox.countPending()).toBe(1);
      await other.close();
    });
  });
});
