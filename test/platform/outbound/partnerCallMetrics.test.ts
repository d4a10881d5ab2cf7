import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeOnBackends } from '../../support/databases.js';
import { e1Body, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

/** Every partner call, whichever part of the platform makes it, is counted once in the same metric. */
describeOnBackends('partner-call metrics', (backend) => {
  const harness = new PlatformHarness();

  beforeAll(async () => {
    harness.hostapp
      .on('/create-order-payment', { order_payment_id: 'hop_metrics_1' })
      .on('/get-payment-status', {
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        order_payment_id: 'hop_metrics_1',
        payment_status: 'in_process',
      })
      .on('/events', { host_received: true });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' }).on('/events', { miniapp_received: true });
    await harness.start({ backend: backend.name });
  }, 60_000);

  afterAll(() => harness.stop());

  async function callsCounted(): Promise<Map<string, number>> {
    const text = (await harness.call('getMetrics', undefined)).text;
    const counted = new Map<string, number>();
    for (const [, operation, count] of text.matchAll(/^minibridge_partner_calls_total\{operation="(\w+)",outcome="answered"\} (\d+)$/gm))
      counted.set(operation, Number(count));
    return counted;
  }

  test('E3, E4, E6 and E7 (both ways) each reach minibridge_partner_calls_total, once per call', async () => {
    const parties = { app_id: MINIAPP.id, client_id: HOSTAPP.id };
    const created = await harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'ORD-METRICS-1' }), {
      authorization: harness.miniappAuth(),
    });
    expect(created.status).toBe(200);
    const ref = { ...parties, order_payment_id: created.body.order_payment_id };
    expect((await harness.call('getPaymentStatus', ref, { authorization: harness.miniappAuth() })).status).toBe(200);
    expect(
      (await harness.call('completeOrder', { ...ref, payment_status: 'paid' }, { authorization: harness.hostappBasic() })).status,
    ).toBe(200);
    await harness.eventually('E6', () => harness.miniapp.receivedAt('/complete-order')[0]);
    const event = { ...parties, event_type: 'metrics_probe', payload: {} };
    expect((await harness.call('sendHostappEvent', event, { authorization: harness.hostappToken() })).status).toBe(200);
    expect((await harness.call('sendMiniappEvent', event, { authorization: harness.miniappAuth() })).status).toBe(200);

    const counted = await harness.eventually('the E6 counted', async () => {
      const now = await callsCounted();
      return now.get('receiveOrderCompletion') === 1 ? now : undefined;
    });
    expect(Object.fromEntries(counted)).toEqual({
      createHostappOrderPayment: 1,
      getHostappPaymentStatus: 1,
      receiveOrderCompletion: 1,
      receiveMiniappEvent: 1,
      receiveHostappEvent: 1,
    });
  });
});
