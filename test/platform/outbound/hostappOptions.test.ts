import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { e1Body, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

// A host app that registered E4 as GET, a custom token prefix, the user access-token option and signing.
describeOnBackends('host app options', (backend) => {
  const harness = new PlatformHarness();
  const SIGNING = ['hostapp-signing-secret'];

  // Each E1 gets an order payment id of its own, so every test makes the payment it needs.
  let orders = 0;

  beforeAll(async () => {
    harness.hostapp
      .on('/create-order-payment', (_request: Received, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_opt_${++orders}` }));
      })
      .on('/get-payment-status', (request: Received, res: ServerResponse) => {
        const query = Object.fromEntries(new URLSearchParams(request.body));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...query, payment_status: 'paid' }));
      });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' });
    await harness.start({
      backend: backend.name,
      registry: (registry) => {
        Object.assign(registry.hostapps[0], {
          payment_status_method: 'GET',
          token_prefix: 'Bearer',
          use_access_token: true,
          signing: { enabled: true, secrets: SIGNING },
        });
      },
    });
  }, 60_000);
  afterAll(() => harness.stop());

  test('E3 carries the user access token with the registered prefix, and our signature', async () => {
    const created = await harness.call('createOrderPayment', e1Body({ hostapp_user_id: 'u_9' }), {
      authorization: harness.miniappAuth(),
      headers: { 'X-User-Access-Token': 'user-token-abc' },
    });
    expect(created.status).toBe(200);
    const e3 = harness.hostapp.receivedAt('/create-order-payment').at(-1)!;
    expect(e3.headers.authorization).toBe('Bearer user-token-abc');
    expect(e3.headers['x-user-id']).toBe('u_9');
    const { signatureInput, verifyRequest } = await import('../../../src/wire/signing.js');
    expect(
      verifyRequest(
        e3.body,
        signatureInput((name) => e3.headers[name] as string | undefined),
        SIGNING,
      ).ok,
    ).toBe(true);
  });

  test('without a user token the host app credentials are sent with its prefix; E4 goes by GET with a signed query', async () => {
    const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(created.status).toBe(200);
    const orderPaymentId: string = created.body.order_payment_id;
    const e3 = harness.hostapp.receivedAt('/create-order-payment').at(-1)!;
    expect(e3.headers.authorization).toBe(harness.hostappToken(HOSTAPP.secret, 'Bearer'));
    const status = await harness.call(
      'getPaymentStatus',
      { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: orderPaymentId },
      { authorization: harness.miniappAuth() },
    );
    expect(status.body.payment_status).toBe('paid');
    const e4 = harness.hostapp.receivedAt('/get-payment-status').at(-1)!;
    expect(e4.method).toBe('GET');
    expect(Object.fromEntries(new URLSearchParams(e4.body))).toEqual({
      app_id: MINIAPP.id,
      client_id: HOSTAPP.id,
      order_payment_id: orderPaymentId,
    });
    const { signatureInput, verifyRequest } = await import('../../../src/wire/signing.js');
    expect(
      verifyRequest(
        e4.body,
        signatureInput((name) => e4.headers[name] as string | undefined),
        SIGNING,
      ).ok,
    ).toBe(true);
    // The signed "body" of a GET is the raw query string; the standardwebhooks package agrees.
    const { Webhook } = await import('standardwebhooks');
    const { standardSecret } = await import('../../../src/wire/signing.js');
    expect(() =>
      new Webhook(standardSecret(SIGNING[0]!)).verify(e4.body, e4.headers as Record<string, string>, { jsonParse: false }),
    ).not.toThrow();
  });

  test('E5 from a host app with signing enabled must be signed', async () => {
    const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(created.status).toBe(200);
    const body = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: created.body.order_payment_id, payment_status: 'paid' };
    const unsigned = await harness.call('completeOrder', body, { authorization: harness.hostappBasic() });
    expect(unsigned.body.error_code).toBe('UNAUTHORIZED');
    const signed = await harness.call('completeOrder', body, { sign: SIGNING });
    expect(signed.status).toBe(200);
  });
});
