import type { ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reportOutcome } from '../../../examples/hostapp-express/completeOrder.js';
import { replayWindowSeconds, signRequest, signatureInput, standardSecret, verifyRequest } from '../../../src/wire/signing.js';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { e1Body, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

// Request signing per Standard Webhooks (ADR 0019), checked with the `standardwebhooks` npm
// package on both sides: the platform's E3, E4, E6 and E7 verify with it, and requests signed
// by it are accepted. The host app registered a whsec_ secret; the miniapp a secret from before
// Standard Webhooks, which it uses in its whsec_ form.
const HOSTAPP_SIGNING = `whsec_${Buffer.from('standard-webhooks-hostapp-key-32b').toString('base64')}`;
const MINIAPP_SIGNING = 'miniapp-signing-secret-before-whsec';
const hostappWebhook = new Webhook(HOSTAPP_SIGNING);
const miniappWebhook = new Webhook(standardSecret(MINIAPP_SIGNING));

describeOnBackends('Standard Webhooks', (backend) => {
  const harness = new PlatformHarness();
  let messages = 0;

  /** The headers the package makes for a body, with a new webhook-id each time. */
  function packageSigned(webhook: Webhook, body: string): Record<string, string> {
    const id = `msg_package_${++messages}`;
    const timestamp = new Date();
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': webhook.sign(id, timestamp, body),
    };
  }

  /** Verifies a call the platform made with the package; throws WebhookVerificationError when it does not verify. */
  function verifiedByPackage(webhook: Webhook, received: Received): void {
    const headers = Object.fromEntries(
      Object.entries(received.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    webhook.verify(received.body, headers, { jsonParse: false });
  }

  beforeAll(async () => {
    harness.hostapp
      .on('/create-order-payment', { order_payment_id: 'hop_sw_1' })
      .on('/get-payment-status', { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: 'hop_sw_1', payment_status: 'in_process' })
      .on('/events', { host_received: true });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' }).on('/events', { miniapp_received: true });
    await harness.start({
      backend: backend.name,
      registry: (registry) => {
        registry.hostapps[0]!.signing = { enabled: true, secrets: [HOSTAPP_SIGNING] };
        registry.miniapps[0]!.signing = { enabled: true, secrets: [MINIAPP_SIGNING] };
      },
    });
  }, 60_000);
  afterAll(() => harness.stop());

  describe('outbound calls verify with the standardwebhooks package', () => {
    test('E3, E4, E6 and both E7s; E6 and E7 carry the event id as webhook-id; the deprecated headers still verify', async () => {
      // The id E4's answer names; other tests answer E3 with ids of their own.
      harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_sw_1' });
      const e1 = JSON.stringify(e1Body());
      expect((await harness.call('createOrderPayment', e1, { headers: packageSigned(miniappWebhook, e1) })).status).toBe(200);
      const e3 = harness.hostapp.receivedAt('/create-order-payment').at(-1)!;
      verifiedByPackage(hostappWebhook, e3);
      expect(e3.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);

      const query = JSON.stringify({ app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: 'hop_sw_1' });
      expect((await harness.call('getPaymentStatus', query, { headers: packageSigned(miniappWebhook, query) })).status).toBe(200);
      const e4 = harness.hostapp.receivedAt('/get-payment-status').at(-1)!;
      verifiedByPackage(hostappWebhook, e4);
      expect(e4.headers['webhook-id']).not.toBe(e3.headers['webhook-id']);

      const completion = JSON.stringify({
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        order_payment_id: 'hop_sw_1',
        payment_status: 'paid',
      });
      expect((await harness.call('completeOrder', completion, { headers: packageSigned(hostappWebhook, completion) })).status).toBe(200);
      // This payment's E6: another test's E5 may have sent one for its own payment.
      const e6 = await harness.eventually('E6', () =>
        harness.miniapp.receivedAt('/complete-order').find((received) => received.body.includes('"hop_sw_1"')),
      );
      verifiedByPackage(miniappWebhook, e6);
      expect(e6.headers['webhook-id']).toBe(e6.headers['x-minibridge-event-id']);

      const toMiniapp = JSON.stringify({ app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'user_profile_updated', payload: {} });
      const e8 = await harness.call('sendHostappEvent', toMiniapp, {
        authorization: harness.hostappToken(),
        headers: packageSigned(hostappWebhook, toMiniapp),
      });
      expect(e8.status).toBe(200);
      const e7ToMiniapp = harness.miniapp.receivedAt('/events').at(-1)!;
      verifiedByPackage(miniappWebhook, e7ToMiniapp);
      expect(e7ToMiniapp.headers['webhook-id']).toBe(e8.headers.get('x-minibridge-event-id'));

      const toHostapp = JSON.stringify({
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        event_type: 'order_status_update',
        payload: { order_payment_id: 'hop_sw_1', fulfillment_status: 'shipped' },
      });
      expect((await harness.call('sendMiniappEvent', toHostapp, { headers: packageSigned(miniappWebhook, toHostapp) })).status).toBe(200);
      const e7ToHostapp = harness.hostapp.receivedAt('/events').at(-1)!;
      verifiedByPackage(hostappWebhook, e7ToHostapp);

      // Until the sunset, receivers on the deprecated scheme keep working: the same calls verify by X-Minibridge-*.
      for (const [received, secret] of [
        [e3, HOSTAPP_SIGNING],
        [e6, MINIAPP_SIGNING],
      ] as const) {
        const legacyOnly = {
          ...signatureInput((name) => received.headers[name] as string | undefined),
          webhookId: undefined,
          webhookTimestamp: undefined,
          webhookSignature: undefined,
        };
        expect(verifyRequest(received.body, legacyOnly, [secret])).toMatchObject({ ok: true, scheme: 'x-minibridge' });
      }
    });

    test("a signature with another key does not verify with the package (the test's verifier can fail)", async () => {
      harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_sw_other_key' });
      const e1 = JSON.stringify(e1Body());
      expect((await harness.call('createOrderPayment', e1, { headers: packageSigned(miniappWebhook, e1) })).status).toBe(200);
      const e3 = harness.hostapp.receivedAt('/create-order-payment').at(-1)!;
      // It verifies with the right key, so a throw below is the other key's doing.
      verifiedByPackage(hostappWebhook, e3);
      expect(() =>
        verifiedByPackage(new Webhook(`whsec_${Buffer.from('another-key-of-thirty-two-bytes!').toString('base64')}`), e3),
      ).toThrow(/No matching signature/);
    });
  });

  describe('inbound requests signed by the standardwebhooks package', () => {
    test('are accepted once; a replay, a changed body, a stale timestamp and a missing header are refused', async () => {
      // An id of its own: each test binds its E3 ids to its own orders.
      harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_sw_once' });
      const body = JSON.stringify(e1Body());
      const headers = packageSigned(miniappWebhook, body);
      expect((await harness.call('createOrderPayment', body, { headers })).status).toBe(200);
      const replay = await harness.call('createOrderPayment', body, { headers });
      expect(replay.body.error_message).toMatch(/already used/);
      const changed = await harness.call('createOrderPayment', body.replace('125000.00', '1.00'), {
        headers: { ...packageSigned(miniappWebhook, body), 'webhook-id': 'msg_other' },
      });
      expect(changed.body.error_message).toMatch(/webhook-signature does not match/);
      const longAgo = new Date(Date.now() - (replayWindowSeconds() + 1) * 1000);
      const stale = {
        'webhook-id': 'msg_stale',
        'webhook-timestamp': String(Math.floor(longAgo.getTime() / 1000)),
        'webhook-signature': miniappWebhook.sign('msg_stale', longAgo, body),
      };
      expect((await harness.call('createOrderPayment', body, { headers: stale })).body.error_message).toContain(
        `webhook-timestamp is more than ${replayWindowSeconds()} s`,
      );
      const { 'webhook-id': _dropped, ...withoutId } = packageSigned(miniappWebhook, body);
      expect((await harness.call('createOrderPayment', body, { headers: withoutId })).body.error_message).toMatch(
        /webhook-id, webhook-timestamp and webhook-signature are all required/,
      );
    });

    test('a request carrying webhook-* headers is judged by them alone, even with a valid deprecated signature beside them', async () => {
      const body = JSON.stringify(e1Body());
      const both = signRequest(body, [MINIAPP_SIGNING]);
      const wrongStandard = {
        ...both,
        'webhook-signature': packageSigned(
          new Webhook(`whsec_${Buffer.from('another-key-of-thirty-two-bytes!').toString('base64')}`),
          body,
        )['webhook-signature'],
      };
      expect((await harness.call('createOrderPayment', body, { headers: wrongStandard })).body.error_code).toBe('UNAUTHORIZED');
    });

    test('a request signed in both schemes cannot be replayed with either set of headers stripped', async () => {
      let created = 0;
      harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_sw_both_${++created}` }));
      });
      const body = JSON.stringify(e1Body());
      const both = signRequest(body, [MINIAPP_SIGNING]);
      expect((await harness.call('createOrderPayment', body, { headers: { ...both } })).status).toBe(200);
      const { 'webhook-id': _id, 'webhook-timestamp': _timestamp, 'webhook-signature': _signature, ...legacyOnly } = both;
      const { 'X-Minibridge-Timestamp': _legacyTimestamp, 'X-Minibridge-Signature': _legacySignature, ...standardOnly } = both;
      for (const replay of [legacyOnly, standardOnly, { ...both }]) {
        const answer = await harness.call('createOrderPayment', body, { headers: replay });
        expect([answer.body.error_code, answer.body.error_message]).toEqual(['UNAUTHORIZED', expect.stringMatching(/already used/)]);
      }
    });

    test("the example host app's E5, signed with the package, is accepted", async () => {
      const e1 = JSON.stringify(e1Body());
      harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_sw_example' });
      expect((await harness.call('createOrderPayment', e1, { headers: packageSigned(miniappWebhook, e1) })).status).toBe(200);
      const payment = {
        orderPaymentId: 'hop_sw_example',
        appId: MINIAPP.id,
        miniappOrderId: undefined,
        userId: undefined,
        currency: 'VND',
        amount: '125000.00',
        status: 'in_process' as const,
        fulfillment: undefined,
        expiresAt: undefined,
      };
      const credentials = { clientId: HOSTAPP.id, secretKey: HOSTAPP.secret };
      await expect(reportOutcome(harness.running.url, credentials, { ...payment }, 'paid')).rejects.toThrow(/UNAUTHORIZED/);
      await expect(
        reportOutcome(harness.running.url, { ...credentials, signingSecrets: [HOSTAPP_SIGNING] }, { ...payment }, 'paid'),
      ).resolves.toMatchObject({ code: 'SUCCESS' });
    });

    test('the deprecated X-Minibridge-* scheme alone is still accepted during its deprecation period', async () => {
      harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_sw_deprecated' });
      const body = JSON.stringify(e1Body());
      const { 'X-Minibridge-Timestamp': timestamp, 'X-Minibridge-Signature': signature } = signRequest(body, [MINIAPP_SIGNING]);
      const answer = await harness.call('createOrderPayment', body, {
        headers: { 'X-Minibridge-Timestamp': timestamp, 'X-Minibridge-Signature': signature },
      });
      expect(answer.status).toBe(200);
      // …and the answer says it is deprecated, with the contract's dates (RFC 9745, RFC 8594).
      expect([answer.headers.get('deprecation'), answer.headers.get('sunset')]).toEqual(['@1795478400', 'Tue, 01 Jun 2027 00:00:00 GMT']);
      const current = JSON.stringify(e1Body());
      const standard = await harness.call('createOrderPayment', current, { headers: packageSigned(miniappWebhook, current) });
      expect([standard.headers.get('deprecation'), standard.headers.get('sunset')]).toEqual([null, null]);
    });
  });
});
