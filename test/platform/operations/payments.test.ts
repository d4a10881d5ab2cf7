import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test, type RunnerTestFile, type RunnerTestSuite } from 'vitest';
import { replayWindowSeconds, signRequest } from '../../../src/wire/signing.js';
import { lifecycleSettings, maxBodyBytes, pageSize } from '../../../src/contract/limits.js';
import { loadDocument } from '../../../src/contract/documents.js';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, e1Body, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';
import { decodeUserIdHeader, encodeUserIdHeader } from '../../../src/wire/userIdHeader.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';

describeOnBackends('payments', (backend) => {
  const SIGNED = { id: 'ma_signed', secret: 'signed-secret-1', signing: ['signing-secret-old', 'signing-secret-new'] };
  const seen = new Set<string>();
  const harness = new PlatformHarness();
  const statusAtHostapp = new Map<string, unknown>();
  /** E3 answers for SLOW- orders, held until the test sends them. */
  const heldE3 = new Map<string, () => void>();
  let counter = 0;

  function hostappE3(request: Received, res: ServerResponse) {
    const orderId: string = JSON.parse(request.body).order.miniapp_order_id ?? '';
    const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (orderId.startsWith('FAIL500-')) return void res.writeHead(500).end('oops');
    if (orderId.startsWith('NOTJSON-')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    if (orderId.startsWith('REJECT-')) return json({ error_code: 'LIMIT_EXCEEDED' });
    if (orderId.startsWith('INVALID-')) return json({ error_code: 'INVALID_ORDER_DATA' });
    if (orderId.startsWith('BADSHAPE-')) return json({ order_payment_id: 42 });
    const id = `hop_${++counter}`;
    if (orderId.startsWith('SLOW-')) return void heldE3.set(orderId, () => json({ order_payment_id: id }));
    return json({ order_payment_id: id });
  }

  function hostappE4(request: Received, res: ServerResponse) {
    const query = request.method === 'GET' ? Object.fromEntries(new URLSearchParams(request.body)) : JSON.parse(request.body);
    const answer = statusAtHostapp.get(query.order_payment_id) ?? { error_code: 'ORDER_NOT_FOUND' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }

  beforeAll(async () => {
    harness.hostapp.on('/create-order-payment', hostappE3).on('/get-payment-status', hostappE4).on('/events', { host_received: true });
    harness.miniapp
      .on('/complete-order', { code: 'SUCCESS' })
      .on(
        '/events',
        (_request: Received, res: ServerResponse) =>
          void res.writeHead(200, { 'content-type': 'application/json' }).end('{"miniapp_received":true,"amount":12345678901234567890}'),
      );
    await harness.start({
      backend: backend.name,
      registry: (registry) => {
        const features = { payments: true, event_bridge: true, event_receiver: true };
        registry.miniapps.push(
          { app_id: 'ma_nopay', secret_key: 'nopay-secret-1', hostapps: [HOSTAPP.id], features: { ...features, payments: false } },
          { app_id: 'ma_unlinked', secret_key: 'unlinked-secret-1', hostapps: [], features },
          { app_id: 'ma_elsewhere', secret_key: 'elsewhere-secret', hostapps: [HOSTAPP.id], features, allowed_ips: ['10.0.0.0/8'] },
          { app_id: 'ma_local', secret_key: 'local-secret-1', hostapps: [HOSTAPP.id], features, allowed_ips: ['127.0.0.1/32', '::1'] },
          {
            app_id: SIGNED.id,
            secret_key: SIGNED.secret,
            hostapps: [HOSTAPP.id],
            features,
            signing: { enabled: true, secrets: SIGNED.signing },
          },
          { app_id: 'ma_deaf', secret_key: 'deaf-secret-1', hostapps: [HOSTAPP.id], features: { ...features, event_receiver: false } },
          { app_id: 'ma_quiet', secret_key: 'quiet-secret-1', hostapps: [HOSTAPP.id], features: { ...features, event_bridge: false } },
        );
      },
    });
  }, 60_000);

  // vitest hands a hook its fixtures first (destructured, none used here), then the suite.
  // eslint-disable-next-line no-empty-pattern
  afterAll(async ({}, suite) => {
    for (const code of harness.errorCodesSeen) seen.add(code);
    await harness.stop();
    // Every error code in the contract catalogue is reachable and was returned by the tests of
    // this suite, whatever order they ran in (a hook after all of them, not a test that must run
    // last); judged only when every one of them ran and passed, so a filtered run stays green.
    if (!everyTestPassed(suite)) return;
    const catalogue = (loadDocument('platform').components.schemas.ErrorCode as { enum: string[] }).enum;
    expect(
      catalogue.filter((code) => !seen.has(code)),
      'error codes of the catalogue no test of this suite saw',
    ).toEqual([]);
  });

  describe('payment flow (spec steps 2–12)', () => {
    test('E1 → E3 → order_payment_id; E2 → E4 while in process; E5 → E6 once; E2 then answers from the record', async () => {
      const orderId = 'ORD-FLOW-1';
      // A 20-digit amount as a JSON number must reach E3 digit for digit.
      const e1 = `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","order":{"currency":"VND","amount":12345678901234567890,"tax_amount":"0.10","miniapp_order_id":"${orderId}","hostapp_user_id":"u_1","unknown_field":true,"items":[{"product_name":"Coffee","product_variant_name":"Large","product_sku":"CF-L","product_image_url":"https://img.example/cf.png","quantity":2,"price":99999999999999999.99,"discount":"0"}]}}`;
      const before = Date.now();
      const created = await harness.call('createOrderPayment', e1, { authorization: harness.miniappAuth() });
      const after = Date.now();
      expect(created.status).toBe(200);
      const orderPaymentId = created.body.order_payment_id;
      const e3 = harness.hostapp.receivedAt('/create-order-payment').at(-1)!;
      // E3 tells the host app when the payment expires: the contract's default lifetime from now (ADR 0039).
      const expiresAt: string = JSON.parse(e3.body).expires_at;
      const lifetimeMs = lifecycleSettings().paymentLifetimeSeconds.default * 1000;
      expect(Date.parse(expiresAt)).toBeGreaterThanOrEqual(before + lifetimeMs);
      expect(Date.parse(expiresAt)).toBeLessThanOrEqual(after + lifetimeMs);
      expect(e3.body).toContain('"amount":12345678901234567890');
      expect(e3.body).toContain('"price":99999999999999999.99');
      expect(e3.body).toContain('"tax_amount":"0.10"');
      expect(e3.body).not.toContain('unknown_field');
      expect(JSON.parse(e3.body)).not.toHaveProperty('client_id');
      expect(e3.headers['x-user-id']).toBe('u_1');
      expect(e3.headers.authorization).toBe(harness.hostappToken());

      statusAtHostapp.set(orderPaymentId, {
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        order_payment_id: orderPaymentId,
        payment_status: 'in_process',
      });
      const query = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: orderPaymentId };
      const inProcess = await harness.call('getPaymentStatus', query, { authorization: harness.miniappAuth() });
      expect(inProcess.body).toEqual({ ...query, payment_status: 'in_process', expires_at: expiresAt });
      const e4 = harness.hostapp.receivedAt('/get-payment-status').at(-1)!;
      expect(JSON.parse(e4.body)).toEqual(query);
      expect(e4.headers['x-user-id']).toBe('u_1');

      const completion = { ...query, payment_status: 'paid', custom_attributes: { transaction_ref: 'TX-1' } };
      const completed = await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() });
      expect(completed.body.code).toBe('SUCCESS');
      const e6 = await harness.eventually('E6', () =>
        harness.miniapp.receivedAt('/complete-order').find((r) => r.body.includes(orderPaymentId)),
      );
      expect(JSON.parse(e6.body)).toEqual({
        miniapp_order_id: orderId,
        hostapp_order_payment_id: orderPaymentId,
        hostapp_client_id: HOSTAPP.id,
        payment_status: 'paid',
        custom_attributes: { transaction_ref: 'TX-1' },
        expires_at: expiresAt,
      });
      expect(e6.headers.authorization).toBe(basicAuthorization(MINIAPP.id, MINIAPP.secret));
      expect(e6.headers['x-minibridge-event-id']).toMatch(/^evt_/);
      expect(e6.headers['x-minibridge-delivery-attempt']).toBe('1');

      const e4Calls = harness.hostapp.receivedAt('/get-payment-status').length;
      const paid = await harness.call('getPaymentStatus', query, { authorization: harness.miniappAuth() });
      expect(paid.body.payment_status).toBe('paid');
      expect(harness.hostapp.receivedAt('/get-payment-status')).toHaveLength(e4Calls);

      const again = await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() });
      expect(again.status).toBe(200);
      expect(again.body.message).toMatch(/already/);
      const conflict = await harness.call(
        'completeOrder',
        { ...completion, payment_status: 'failed' },
        { authorization: harness.hostappBasic() },
      );
      expect(conflict.body.error_code).toBe('PAYMENT_STATUS_CONFLICT');
      // One delivery, delivered on its first attempt: neither the repeat nor the conflict queued another E6.
      // The miniapp server has the E6 before the worker records its answer, so the row is waited for
      // (bounded) until no delivery is pending; only then is "nothing more" read from the store.
      const settled = await harness.eventually('E6 recorded', async () => {
        const rows = await harness.deliveriesOf(orderPaymentId);
        return rows.every((row) => row.status !== 'pending') && rows;
      });
      expect(settled).toEqual([{ status: 'delivered', attempts_made: 1 }]);
      expect(harness.miniapp.receivedAt('/complete-order').filter((r) => r.body.includes(orderPaymentId))).toHaveLength(1);
    });

    test('E1 is idempotent: same order and body → same id without a second E3; different body → IDEMPOTENCY_CONFLICT', async () => {
      const body = e1Body({ miniapp_order_id: 'ORD-IDEM-1' });
      const first = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      const e3Calls = harness.hostapp.receivedAt('/create-order-payment').length;
      const second = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      expect(second.body.order_payment_id).toBe(first.body.order_payment_id);
      expect(harness.hostapp.receivedAt('/create-order-payment')).toHaveLength(e3Calls);
      const changed = await harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'ORD-IDEM-1', amount: '1.00' }), {
        authorization: harness.miniappAuth(),
      });
      expect(changed.body.error_code).toBe('IDEMPOTENCY_CONFLICT');
    });

    test('the Idempotency-Key header is honoured', async () => {
      const headers = { 'Idempotency-Key': 'key-123' };
      const body = e1Body({ miniapp_order_id: undefined });
      const first = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth(), headers });
      const second = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth(), headers });
      expect(second.body.order_payment_id).toBe(first.body.order_payment_id);
      const other = await harness.call('createOrderPayment', e1Body({ miniapp_order_id: undefined, amount: 5 }), {
        authorization: harness.miniappAuth(),
        headers,
      });
      expect(other.body.error_code).toBe('IDEMPOTENCY_CONFLICT');
    });

    test('a repeat while the first E1 waits for the host app gets REQUEST_IN_PROGRESS, then the same id', async () => {
      const body = e1Body({ miniapp_order_id: 'SLOW-1' });
      const first = harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      // The host app holds its E3 answer until the repeat has been answered.
      const release = await harness.eventually('E3 of SLOW-1 at the host app', () => heldE3.get('SLOW-1'));
      const repeat = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      expect(repeat.body.error_code).toBe('REQUEST_IN_PROGRESS');
      release();
      const done = await first;
      const later = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      expect(later.body.order_payment_id).toBe(done.body.order_payment_id);
    });

    test('E2 records a terminal status learned from E4 and the miniapp server gets E6', async () => {
      const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
      const query = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: created.body.order_payment_id };
      statusAtHostapp.set(query.order_payment_id, { ...query, payment_status: 'failed', payment_fail_reason: 'Insufficient balance' });
      const status = await harness.call('getPaymentStatus', query, { authorization: harness.miniappAuth() });
      expect(status.body).toEqual({
        ...query,
        payment_status: 'failed',
        payment_fail_reason: 'Insufficient balance',
        expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      const e6 = await harness.eventually('E6 after E4', () =>
        harness.miniapp.receivedAt('/complete-order').find((r) => r.body.includes(query.order_payment_id)),
      );
      expect(JSON.parse(e6.body).payment_status).toBe('failed');
      const late = await harness.call('completeOrder', { ...query, payment_status: 'failed' }, { authorization: harness.hostappBasic() });
      expect(late.status).toBe(200);
    });

    test('E5 in_process on a payment in process changes nothing and sends no E6', async () => {
      const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
      const ref = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: created.body.order_payment_id };
      const noop = await harness.call('completeOrder', { ...ref, payment_status: 'in_process' }, { authorization: harness.hostappBasic() });
      expect(noop.body.code).toBe('SUCCESS');
      // A transition and its E6 delivery are committed together, before E5 answers: no row, no E6 ever.
      expect(await harness.deliveriesOf(ref.order_payment_id)).toEqual([]);
      expect(harness.miniapp.receivedAt('/complete-order').some((r) => r.body.includes(ref.order_payment_id))).toBe(false);
    });

    test('admin API lists deliveries with attempts and redelivers one with the same event id', async () => {
      const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
      const ref = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: created.body.order_payment_id };
      await harness.call('completeOrder', { ...ref, payment_status: 'cancelled' }, { authorization: harness.hostappBasic() });
      const first = await harness.eventually('E6', () =>
        harness.miniapp.receivedAt('/complete-order').find((r) => r.body.includes(ref.order_payment_id)),
      );
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const list = await harness.eventually('delivered', async () => {
        const page = await harness.call('listDeliveries', undefined, {
          ...admin,
          path: `/api/v1/admin/deliveries?status=delivered&limit=${pageSize().maximum}`,
        });
        return page.body.deliveries.find((d: { order_payment_id: string }) => d.order_payment_id === ref.order_payment_id);
      });
      const ofPayment = await harness.call('listDeliveries', undefined, {
        ...admin,
        path: `/api/v1/admin/deliveries?order_payment_id=${encodeURIComponent(ref.order_payment_id)}`,
      });
      expect(ofPayment.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([list.delivery_id]);
      const ofNone = await harness.call('listDeliveries', undefined, {
        ...admin,
        path: '/api/v1/admin/deliveries?order_payment_id=hop_none',
      });
      expect(ofNone.body).toEqual({ deliveries: [], next_cursor: null });
      const detail = await harness.call('getDelivery', undefined, { ...admin, path: `/api/v1/admin/deliveries/${list.delivery_id}` });
      expect(detail.body.attempts[0]).toMatchObject({ attempt: 1, outcome: 'delivered', http_status: 200 });
      const requeued = await harness.call('redeliverDelivery', undefined, {
        ...admin,
        path: `/api/v1/admin/deliveries/${list.delivery_id}/redeliver`,
      });
      expect(requeued.body.status).toBe('pending');
      const again = await harness.eventually(
        'redelivery',
        () => harness.miniapp.receivedAt('/complete-order').filter((r) => r.body.includes(ref.order_payment_id))[1],
      );
      expect(again.headers['x-minibridge-event-id']).toBe(first.headers['x-minibridge-event-id']);
      expect(again.headers['x-minibridge-delivery-attempt']).toBe('2');
      const missing = await harness.call('getDelivery', undefined, {
        ...admin,
        path: '/api/v1/admin/deliveries/00000000-0000-4000-8000-000000000000',
      });
      expect(missing.body.error_code).toBe('NOT_FOUND');
      const noToken = await harness.call('listDeliveries', undefined, { path: '/api/v1/admin/deliveries' });
      expect(noToken.status).toBe(401);
      const badCursor = await harness.call('listDeliveries', undefined, { ...admin, path: '/api/v1/admin/deliveries?cursor=nonsense' });
      expect(badCursor.body.error_code).toBe('INVALID_REQUEST');
    });
  });

  describe('hostapp_user_id is String(250): any characters (ADR 0016)', () => {
    test('travels exactly in the E3 body and percent-encoded in X-User-ID on E3 and E4', async () => {
      const user = 'Nguyễn Văn A 100% "x"\t😀';
      const created = await harness.call('createOrderPayment', e1Body({ hostapp_user_id: user }), { authorization: harness.miniappAuth() });
      expect(created.status).toBe(200);
      const orderPaymentId = created.body.order_payment_id;
      const e3 = harness.hostapp.receivedAt('/create-order-payment').at(-1)!;
      expect(JSON.parse(e3.body).order.hostapp_user_id).toBe(user);
      const header = e3.headers['x-user-id'] as string;
      expect(header).toBe('Nguy%E1%BB%85n%20V%C4%83n%20A%20100%25%20"x"%09%F0%9F%98%80');
      expect(decodeURIComponent(header)).toBe(user);
      expect(decodeUserIdHeader(header)).toBe(user);

      const query = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: orderPaymentId };
      statusAtHostapp.set(orderPaymentId, { ...query, payment_status: 'in_process' });
      await harness.call('getPaymentStatus', query, { authorization: harness.miniappAuth() });
      expect(harness.hostapp.receivedAt('/get-payment-status').at(-1)!.headers['x-user-id']).toBe(header);
    });

    test('a reference of visible ASCII without % travels unchanged', () => {
      for (const user of ['u_48213', "!#$&'()*+,/:;=?@[]~"]) expect(encodeUserIdHeader(user)).toBe(user);
    });

    test('decoding refuses what the encoder never writes', () => {
      for (const header of ['a%', 'a%4', 'a%4g', 'a%4a', 'a b', 'é', '%FF', '%C3'])
        expect(() => decodeUserIdHeader(header), header).toThrow(TypeError);
    });
  });

  describe('E1 errors', () => {
    const cases: Array<[string, () => Promise<{ body: any; status: number }>, string]> = [
      [
        'invalid amount (3 decimals)',
        () => harness.call('createOrderPayment', e1Body({ amount: '1.234' }), { authorization: harness.miniappAuth() }),
        'INVALID_ORDER_DATA',
      ],
      [
        'a NUL character in a string (no store can keep it)',
        () => harness.call('createOrderPayment', JSON.stringify(e1Body({ note: 'a\u0000b' })), { authorization: harness.miniappAuth() }),
        'INVALID_ORDER_DATA',
      ],
      [
        'malformed JSON',
        () => harness.call('createOrderPayment', '{"app_id":', { authorization: harness.miniappAuth() }),
        'INVALID_ORDER_DATA',
      ],
      [
        'an item missing a field E3 requires',
        () => harness.call('createOrderPayment', e1Body({ items: [{ product_name: 'x' }] }), { authorization: harness.miniappAuth() }),
        'INVALID_ORDER_DATA',
      ],
      [
        'host app refuses with INVALID_ORDER_DATA',
        () => harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'INVALID-1' }), { authorization: harness.miniappAuth() }),
        'INVALID_ORDER_DATA',
      ],
      [
        'wrong secret',
        () => harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth('wrong-secret') }),
        'UNAUTHORIZED',
      ],
      ['no credentials', () => harness.call('createOrderPayment', e1Body()), 'UNAUTHORIZED'],
      [
        'unknown app_id',
        () =>
          harness.call('createOrderPayment', e1Body({}, { app_id: 'ma_nobody' }), { authorization: basicAuthorization('ma_nobody', 'x') }),
        'UNAUTHORIZED',
      ],
      [
        'miniapp not in the host app',
        () =>
          harness.call('createOrderPayment', e1Body({}, { app_id: 'ma_unlinked' }), {
            authorization: basicAuthorization('ma_unlinked', 'unlinked-secret-1'),
          }),
        'UNAUTHORIZED',
      ],
      [
        'outside the allow-list',
        () =>
          harness.call('createOrderPayment', e1Body({}, { app_id: 'ma_elsewhere' }), {
            authorization: basicAuthorization('ma_elsewhere', 'elsewhere-secret'),
          }),
        'UNAUTHORIZED',
      ],
      [
        'payment feature off',
        () =>
          harness.call('createOrderPayment', e1Body({}, { app_id: 'ma_nopay' }), {
            authorization: basicAuthorization('ma_nopay', 'nopay-secret-1'),
          }),
        'PAYMENT_DISABLED',
      ],
      [
        'host app answers 500',
        () => harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'FAIL500-1' }), { authorization: harness.miniappAuth() }),
        'HOSTAPP_UNAVAILABLE',
      ],
      [
        'host app answers HTML',
        () => harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'NOTJSON-1' }), { authorization: harness.miniappAuth() }),
        'HOSTAPP_INVALID_RESPONSE',
      ],
      [
        'host app answers out of contract',
        () => harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'BADSHAPE-1' }), { authorization: harness.miniappAuth() }),
        'HOSTAPP_INVALID_RESPONSE',
      ],
      [
        'host app refuses with its own code',
        () => harness.call('createOrderPayment', e1Body({ miniapp_order_id: 'REJECT-1' }), { authorization: harness.miniappAuth() }),
        'HOSTAPP_REJECTED',
      ],
      [
        'wrong content type',
        () =>
          harness.call('createOrderPayment', JSON.stringify(e1Body()), {
            authorization: harness.miniappAuth(),
            headers: { 'content-type': 'text/plain' },
          }),
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'a body over x-max-body-bytes',
        () =>
          harness.call('createOrderPayment', e1Body({ note: 'x'.repeat(maxBodyBytes() + 10) }), { authorization: harness.miniappAuth() }),
        'PAYLOAD_TOO_LARGE',
      ],
    ];
    test.each(cases)('%s → %s', async (_name, send, code) => {
      const response = await send();
      expect(response.body.error_code).toBe(code);
    });

    test('a failed E3 releases the idempotency key: the retry calls the host app again', async () => {
      const body = e1Body({ miniapp_order_id: 'FAIL500-RETRY' });
      await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      const calls = harness.hostapp.receivedAt('/create-order-payment').length;
      await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
      expect(harness.hostapp.receivedAt('/create-order-payment').length).toBe(calls + 1);
    });

    test('statuses follow the contract: operation errors 400, HTTP-level errors their own', async () => {
      expect((await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth('nope-nope') })).status).toBe(400);
      expect(
        (await harness.call('createOrderPayment', 'x', { authorization: harness.miniappAuth(), headers: { 'content-type': 'text/plain' } }))
          .status,
      ).toBe(415);
    });
  });

  describe('authentication', () => {
    test('an allow-listed address needs no credentials, but wrong credentials are still refused', async () => {
      const ok = await harness.call('createOrderPayment', e1Body({}, { app_id: 'ma_local' }));
      expect(ok.status).toBe(200);
      const wrong = await harness.call('createOrderPayment', e1Body({}, { app_id: 'ma_local' }), {
        authorization: basicAuthorization('ma_local', 'wrong-wrong'),
      });
      expect(wrong.body.error_code).toBe('UNAUTHORIZED');
    });

    test('signing: required when enabled, either active secret accepted, replays and stale timestamps refused', async () => {
      const body = JSON.stringify(e1Body({}, { app_id: SIGNED.id }));
      const unsigned = await harness.call('createOrderPayment', body);
      expect(unsigned.body.error_code).toBe('UNAUTHORIZED');
      const signedWithNew = signRequest(body, [SIGNED.signing[1]]);
      const ok = await harness.call('createOrderPayment', body, { headers: { ...signedWithNew } });
      expect(ok.status).toBe(200);
      const replay = await harness.call('createOrderPayment', body, { headers: { ...signedWithNew } });
      expect(replay.body.error_message).toMatch(/already used/);
      const stale = signRequest(body, [SIGNED.signing[0]], { nowSeconds: Math.floor(Date.now() / 1000) - replayWindowSeconds() - 1 });
      expect((await harness.call('createOrderPayment', body, { headers: { ...stale } })).body.error_message).toContain(
        `${replayWindowSeconds()} s`,
      );
      const tampered = signRequest(body.replace('125000.00', '1.00'), [SIGNED.signing[0]]);
      expect((await harness.call('createOrderPayment', body, { headers: { ...tampered } })).body.error_message).toMatch(/does not match/);
      const withBasicToo = await harness.call('createOrderPayment', JSON.stringify(e1Body({}, { app_id: SIGNED.id })), {
        authorization: basicAuthorization(SIGNED.id, SIGNED.secret),
      });
      expect(withBasicToo.body.error_code).toBe('UNAUTHORIZED');
    });
  });

  describe('E2 and E5 errors', () => {
    test('unknown order payment → ORDER_NOT_FOUND on E2 and E5; host app ORDER_NOT_FOUND passes through', async () => {
      const ref = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: 'hop_unknown' };
      expect((await harness.call('getPaymentStatus', ref, { authorization: harness.miniappAuth() })).body.error_code).toBe(
        'ORDER_NOT_FOUND',
      );
      expect(
        (await harness.call('completeOrder', { ...ref, payment_status: 'paid' }, { authorization: harness.hostappBasic() })).body
          .error_code,
      ).toBe('ORDER_NOT_FOUND');
      const created = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
      const fromHostapp = await harness.call(
        'getPaymentStatus',
        { ...ref, order_payment_id: created.body.order_payment_id },
        { authorization: harness.miniappAuth() },
      );
      expect(fromHostapp.body.error_code).toBe('ORDER_NOT_FOUND');
      expect(fromHostapp.body.error_message).toMatch(/host app/);
    });

    test('invalid bodies → INVALID_REQUEST (400)', async () => {
      const missing = await harness.call(
        'completeOrder',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, payment_status: 'paid' },
        { authorization: harness.hostappBasic() },
      );
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error_code: 'INVALID_REQUEST', error_message: 'order_payment_id is required' });
      const badStatus = await harness.call(
        'completeOrder',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: 'x', payment_status: 'done' },
        { authorization: harness.hostappBasic() },
      );
      expect(badStatus.body.error_message).toMatch(/payment_status must be one of in_process, paid, cancelled, failed/);
    });

    test('a storage failure is UNKNOWN_ERROR, not a 500', async () => {
      const { orderPayments } = harness.running.platform.store;
      const original = orderPayments.transition;
      orderPayments.transition = async () => {
        throw new Error('database is down');
      };
      try {
        const response = await harness.call(
          'completeOrder',
          { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: 'hop_1', payment_status: 'paid' },
          { authorization: harness.hostappBasic() },
        );
        expect(response.status).toBe(400);
        expect(response.body.error_code).toBe('UNKNOWN_ERROR');
      } finally {
        orderPayments.transition = original;
      }
    });
  });

  describe('event bridge', () => {
    test('E8: host app → miniapp E7, the receiver body comes back exactly, stable event id per external_event_id', async () => {
      const event = {
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        event_type: 'user_profile_updated',
        external_event_id: 'ext-1',
        payload: { fields: ['name'] },
      };
      const sent = await harness.call('sendHostappEvent', event, { authorization: harness.hostappToken() });
      expect(sent.status).toBe(200);
      expect(sent.text).toBe('{"miniapp_received":true,"amount":12345678901234567890}');
      // Forwarded as JSON text, without an ETag: nothing the platform answers is cacheable.
      expect(sent.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(sent.headers.get('etag')).toBeNull();
      const delivered = harness.miniapp.receivedAt('/events').at(-1)!;
      // Byte for byte: the contract's members in order, the payload as sent.
      expect(delivered.body).toBe(
        JSON.stringify({ app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'user_profile_updated', payload: { fields: ['name'] } }),
      );
      expect(delivered.headers.authorization).toBe(basicAuthorization(MINIAPP.id, MINIAPP.secret));
      const again = await harness.call('sendHostappEvent', event, { authorization: harness.hostappToken() });
      expect(again.headers.get('x-minibridge-event-id')).toBe(sent.headers.get('x-minibridge-event-id'));
      expect(harness.miniapp.receivedAt('/events').at(-1)!.headers['x-minibridge-event-id']).toBe(
        sent.headers.get('x-minibridge-event-id'),
      );
    });

    test('miniapp → host app E7 with order_status_update', async () => {
      const event = {
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        event_type: 'order_status_update',
        payload: { order_payment_id: 'hop_1', fulfillment_status: 'shipped' },
      };
      const sent = await harness.call('sendMiniappEvent', event, { authorization: harness.miniappAuth() });
      expect(sent.body).toEqual({ host_received: true });
      const delivered = harness.hostapp.receivedAt('/events').at(-1)!;
      expect(delivered.headers.authorization).toBe(harness.hostappToken());
    });

    test.each([
      [
        'wrong direction',
        'sendHostappEvent',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'order_status_update', payload: {} },
        'hostapp',
        400,
        'INVALID_EVENT_DATA',
      ],
      [
        'order_status_update without its fields',
        'sendMiniappEvent',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'order_status_update', payload: {} },
        'miniapp',
        400,
        'INVALID_EVENT_DATA',
      ],
      [
        'payload not an object',
        'sendHostappEvent',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'x', payload: [] },
        'hostapp',
        400,
        'INVALID_EVENT_DATA',
      ],
      [
        'wrong token',
        'sendHostappEvent',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'x', payload: {} },
        'bad',
        401,
        'UNAUTHORIZED',
      ],
      [
        'sender has the bridge off',
        'sendMiniappEvent',
        { app_id: 'ma_quiet', client_id: HOSTAPP.id, event_type: 'x', payload: {} },
        'quiet',
        401,
        'UNAUTHORIZED',
      ],
      [
        'recipient receiver off',
        'sendHostappEvent',
        { app_id: 'ma_deaf', client_id: HOSTAPP.id, event_type: 'x', payload: {} },
        'hostapp',
        403,
        'EVENT_RECEIVER_DISABLED',
      ],
      [
        'recipient unknown',
        'sendHostappEvent',
        { app_id: 'ma_nobody', client_id: HOSTAPP.id, event_type: 'x', payload: {} },
        'hostapp',
        401,
        'UNAUTHORIZED',
      ],
    ])('%s → %s %s', async (_name, operationId, body, who, status, code) => {
      const authorization =
        who === 'hostapp'
          ? harness.hostappToken()
          : who === 'miniapp'
            ? harness.miniappAuth()
            : who === 'quiet'
              ? basicAuthorization('ma_quiet', 'quiet-secret-1')
              : harness.hostappToken('wrong-secret');
      const response = await harness.call(operationId, body, { authorization });
      expect([response.status, response.body.error_code]).toEqual([status, code]);
    });

    test('a receiver that fails → 502 EVENT_DELIVERY_FAILED; the prefix is checked', async () => {
      harness.hostapp.on('/events', (_request: Received, res: ServerResponse) => void res.writeHead(503).end());
      const event = {
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        event_type: 'order_status_update',
        payload: { order_payment_id: 'hop_1', fulfillment_status: 'shipped' },
      };
      const failed = await harness.call('sendMiniappEvent', event, { authorization: harness.miniappAuth() });
      expect([failed.status, failed.body.error_code]).toEqual([502, 'EVENT_DELIVERY_FAILED']);
      harness.hostapp.on('/events', { host_received: true });
      const wrongPrefix = await harness.call(
        'sendHostappEvent',
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'x', payload: {} },
        { authorization: harness.hostappToken(HOSTAPP.secret, 'Bearer') },
      );
      expect(wrongPrefix.status).toBe(401);
      expect(wrongPrefix.headers.get('www-authenticate')).toMatch(/^Token/);
    });

    test('a storage failure on an event operation is 503 UNKNOWN_ERROR with Retry-After', async () => {
      const { eventLog } = harness.running.platform.store;
      const original = eventLog.record;
      eventLog.record = async () => {
        throw new Error('database is down');
      };
      try {
        const response = await harness.call(
          'sendHostappEvent',
          { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'x', payload: {} },
          { authorization: harness.hostappToken() },
        );
        expect([response.status, response.body.error_code, response.headers.get('retry-after')]).toEqual([503, 'UNKNOWN_ERROR', '1']);
      } finally {
        eventLog.record = original;
      }
    });
  });

  describe('HTTP level', () => {
    test('unknown route → 404 JSON; wrong method → 405 with Allow', async () => {
      const notFound = await harness.call('createOrderPayment', '{}', { path: '/api/v1/nothing', authorization: harness.miniappAuth() });
      expect([notFound.status, notFound.body.error_code]).toEqual([404, 'NOT_FOUND']);
      const wrongMethod = await harness.call('createOrderPayment', undefined, {
        method: 'GET',
        path: '/api/v1/orders/create-order-payment/',
      });
      expect([wrongMethod.status, wrongMethod.body.error_code, wrongMethod.headers.get('allow')]).toEqual([
        405,
        'METHOD_NOT_ALLOWED',
        'POST',
      ]);
    });

    test("the rendered docs are served at /docs, with the guides' screenshots", async () => {
      const landing = await fetch(`${harness.running.url}/docs/`);
      expect([landing.status, landing.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      const html = await landing.text();
      for (const [, src] of html.matchAll(/src="([^"]+\.png)"/g)) {
        const image = await fetch(new URL(src!, `${harness.running.url}/docs/index.html`));
        expect([src, image.status, image.headers.get('content-type')]).toEqual([src, 200, 'image/png']);
      }
      expect((await fetch(`${harness.running.url}/docs/platform.html`)).status).toBe(200);
    });

    test('probes and metrics', async () => {
      expect((await harness.call('getHealth', undefined)).body).toEqual({ status: 'ok' });
      expect((await harness.call('getReadiness', undefined)).body.status).toBe('ready');
      const metrics = await harness.call('getMetrics', undefined);
      expect(metrics.text).toMatch(/minibridge_http_requests_total\{operation="createOrderPayment",status="200"\}/);
      expect(metrics.text).toMatch(/minibridge_e6_pending \d+/);
    });
  });

  describe('rate limits', () => {
    const limited = new PlatformHarness();
    beforeAll(async () => {
      limited.hostapp.on('/create-order-payment', hostappE3);
      await limited.start({ backend: backend.name, config: { rateLimit: { perSecond: 1, burst: 2 } } });
    }, 60_000);
    afterAll(async () => {
      for (const code of limited.errorCodesSeen) seen.add(code);
      await limited.stop();
    });

    test('over the limit → 429 RATE_LIMITED with Retry-After', async () => {
      const answers = [];
      for (let i = 0; i < 4; i++)
        answers.push(await limited.call('createOrderPayment', e1Body(), { authorization: limited.miniappAuth() }));
      const refused = answers.find((answer) => answer.status === 429)!;
      expect(refused.body.error_code).toBe('RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });
  });

  describe('coverage', () => {
    test('the dashboard refuses a state change the current state does not allow (CONFLICT)', async () => {
      const again = await harness.call(
        'createHostapp',
        { client_id: HOSTAPP.id, name: 'Again' },
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      );
      expect(again.status).toBe(409);
      expect(again.body.error_code).toBe('CONFLICT');
    });
  });
});

/** Whether every test in the suite (nested ones included) ran and passed. */
function everyTestPassed(suite: Readonly<RunnerTestSuite | RunnerTestFile>): boolean {
  return suite.tasks.every((task) =>
    task.type === 'suite' ? everyTestPassed(task) : task.mode === 'run' && task.result?.state === 'pass',
  );
}
