/**
 * Erasure of payments whose JSON holds numbers PostgreSQL's numeric cannot (ADR 0041). Such a
 * number is valid JSON, and custom attributes and an order's extra members are kept exactly as a
 * partner sent them (ADR 0015): E5's custom_attributes travel into the E6 body, E1's into the
 * order. The erasure read those texts as jsonb, which turns every number into a numeric: one
 * `1e1000000` failed the statement, every time, and the user's personal data stayed.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

const operator = `Bearer ${ADMIN_TOKEN}`;
/** Numbers beyond numeric's range, both ways: valid JSON, kept digit for digit. */
const HUGE = '1e1000000';
const TINY = '1e-20000';

describeOnBackends('erasure of JSON numbers numeric cannot hold', (backend) => {
  const harness = new PlatformHarness();
  let counter = 0;

  beforeAll(async () => {
    harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_num_${++counter}` }));
    });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' });
    await harness.start({ backend: backend.name, config: { records: { pollMs: 60_000, batchSize: 100, restRatio: 1, enabled: false } } });
  }, 60_000);
  afterAll(() => harness.stop());

  async function payment(user: string, orderExtra = '') {
    const e1 = await harness.call(
      'createOrderPayment',
      `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","order":{"currency":"VND","amount":"12.30","miniapp_order_id":"ORD-${user}","hostapp_user_id":"${user}"${orderExtra}}}`,
      { authorization: harness.miniappAuth() },
    );
    expect(e1.status).toBe(200);
    return e1.body.order_payment_id as string;
  }

  test('custom attributes a host app sent on E5 with such numbers are erased from the E6 body, which keeps the outcome', async () => {
    const user = 'u_huge_e5';
    const id = await payment(user);
    const e5 = await harness.call(
      'completeOrder',
      `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","order_payment_id":"${id}","payment_status":"paid","custom_attributes":{"card_holder":"Jane Roe","points":${HUGE},"rate":${TINY}}}`,
      { authorization: harness.hostappBasic() },
    );
    expect(e5.status).toBe(200);
    const e6 = await harness.eventually('E6', () => harness.miniapp.receivedAt('/complete-order').find((r) => r.body.includes(id)));
    // The miniapp got the number as the host app wrote it.
    expect(e6.body).toContain(`"points":${HUGE}`);

    const erased = await harness.call('eraseHostappUser', { client_id: HOSTAPP.id, hostapp_user_id: user }, { authorization: operator });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.payments).toBe(1);
    const { db } = harness.running.platform.store;
    const deliveries = await db.query<{ body: string }>('SELECT body FROM deliveries WHERE order_payment_id = $1', [id]);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.body).not.toContain('Jane Roe');
    expect(JSON.parse(deliveries[0]!.body)).toMatchObject({ hostapp_order_payment_id: id, payment_status: 'paid' });
    expect(JSON.parse(deliveries[0]!.body)).not.toHaveProperty('custom_attributes');
    const [row] = await db.query<{ custom_attributes: string | null; hostapp_user_id: string | null }>(
      'SELECT custom_attributes, hostapp_user_id FROM order_payments WHERE order_payment_id = $1',
      [id],
    );
    expect(row).toEqual({ custom_attributes: null, hostapp_user_id: null });
  });

  test('an order a miniapp sent on E1 with such numbers is reduced to its financial record, and a retry of it is still this order', async () => {
    const user = 'u_huge_e1';
    const extra = `,"custom_attributes":{"note":"leave at door","weight":${HUGE},"tiny":${TINY}}`;
    const id = await payment(user, extra);
    const erased = await harness.call('eraseHostappUser', { client_id: HOSTAPP.id, hostapp_user_id: user }, { authorization: operator });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.payments).toBe(1);
    const { db } = harness.running.platform.store;
    const [row] = await db.query<{ order_json: string }>('SELECT order_json FROM order_payments WHERE order_payment_id = $1', [id]);
    expect(JSON.parse(row!.order_json)).toEqual({ currency: 'VND', amount: '12.30', miniapp_order_id: `ORD-${user}` });
    // A retried E1 of the erased payment is judged by what it keeps (ADR 0041): the same id, no second E3.
    const calls = harness.hostapp.receivedAt('/create-order-payment').length;
    expect(await payment(user, extra)).toBe(id);
    expect(harness.hostapp.receivedAt('/create-order-payment')).toHaveLength(calls);
  });
});
