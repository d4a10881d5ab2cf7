/**
 * Redelivery through the Dashboard and admin APIs (ADR 0038): a signed-in partner's budget,
 * published as `x-rate-limits.redelivery`; both parties see every redelivery in their audit logs;
 * a redelivery while the attempt is in flight joins it.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { contractRateLimits } from '../../../src/platform/limits/rateLimiter.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness, e1Body } from '../../support/platformHarness.js';

const operator = `Bearer ${ADMIN_TOKEN}`;
const hostappAuth = basicAuthorization(HOSTAPP.id, HOSTAPP.secret);
const miniappAuth = basicAuthorization(MINIAPP.id, MINIAPP.secret);

describeOnBackends('redelivery', (backend) => {
  const harness = new PlatformHarness();
  let orders = 0;
  const held: ServerResponse[] = [];
  let holding = false;

  beforeAll(async () => {
    harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_redeliver_${++orders}` }));
    });
    harness.miniapp.on('/complete-order', (_request: Received, res: ServerResponse) => {
      if (holding) held.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":"SUCCESS"}');
    });
    await harness.start({ backend: backend.name });
  }, 120_000);
  afterAll(async () => {
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":"SUCCESS"}');
    await harness.stop();
  });

  type Pair = { hostapp: { id: string; auth: string }; miniapp: { id: string; auth: string } };
  const registered: Pair = { hostapp: { id: HOSTAPP.id, auth: hostappAuth }, miniapp: { id: MINIAPP.id, auth: miniappAuth } };

  /** A host app and a miniapp linked to it, created by the operator: redelivery budgets of their own. */
  async function newPair(tag: string): Promise<Pair> {
    const hostapp = await harness.call(
      'createHostapp',
      {
        client_id: `ha_${tag}`,
        name: tag,
        urls: { create_order_payment: `${harness.hostapp.url}/create-order-payment` },
        features: { payments: true },
      },
      { authorization: operator },
    );
    expect(hostapp.status).toBe(201);
    const miniapp = await harness.call(
      'createMiniapp',
      {
        app_id: `ma_${tag}`,
        name: tag,
        hostapps: [`ha_${tag}`],
        urls: { complete_order: `${harness.miniapp.url}/complete-order` },
        features: { payments: true },
      },
      { authorization: operator },
    );
    expect(miniapp.status).toBe(201);
    return {
      hostapp: { id: `ha_${tag}`, auth: basicAuthorization(`ha_${tag}`, hostapp.body.credential.secret) },
      miniapp: { id: `ma_${tag}`, auth: basicAuthorization(`ma_${tag}`, miniapp.body.credential.secret) },
    };
  }

  /** A paid payment between `pair` whose first E6 was delivered; its delivery_id. */
  async function deliveredCallback(pair: Pair = registered): Promise<string> {
    const e1 = await harness.call(
      'createOrderPayment',
      { ...e1Body(), app_id: pair.miniapp.id, client_id: pair.hostapp.id },
      { authorization: pair.miniapp.auth },
    );
    expect(e1.status).toBe(200);
    const completion = {
      app_id: pair.miniapp.id,
      client_id: pair.hostapp.id,
      order_payment_id: e1.body.order_payment_id,
      payment_status: 'paid',
    };
    expect((await harness.call('completeOrder', completion, { authorization: pair.hostapp.auth })).status).toBe(200);
    const [row] = await harness.eventually('the E6 to be delivered', async () => {
      const rows = await harness.running.platform.store.db.query<{ delivery_id: string; status: string }>(
        'SELECT delivery_id::text AS delivery_id, status FROM deliveries WHERE order_payment_id = $1',
        [e1.body.order_payment_id],
      );
      return rows[0]?.status === 'delivered' && rows;
    });
    return row!.delivery_id;
  }

  const asPartner = (kind: 'hostapps' | 'miniapps', id: string, authorization: string, deliveryId: string) =>
    harness.call('redeliverPartnerDelivery', undefined, {
      authorization,
      path: `/api/v1/dashboard/${kind}/${id}/deliveries/${deliveryId}/redeliver`,
    });

  test('a redelivery while the attempt is in flight joins it: one request at the miniapp, every answer the delivery as it stands', async () => {
    const deliveryId = await deliveredCallback();
    const before = harness.miniapp.receivedAt('/complete-order').length;
    holding = true;
    expect((await asPartner('miniapps', MINIAPP.id, miniappAuth, deliveryId)).body.status).toBe('pending');
    await harness.eventually('the redelivered attempt to arrive', () => held.length === 1);
    for (let i = 0; i < 5; i++) {
      const answer = await asPartner('hostapps', HOSTAPP.id, hostappAuth, deliveryId);
      expect([answer.status, answer.body.status]).toEqual([200, 'pending']);
    }
    const admin = await harness.call('redeliverDelivery', undefined, {
      authorization: operator,
      path: `/api/v1/admin/deliveries/${deliveryId}/redeliver`,
    });
    expect(admin.status).toBe(200);
    expect(harness.miniapp.receivedAt('/complete-order').length).toBe(before + 1);
    holding = false;
    held.splice(0).forEach((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":"SUCCESS"}'));
    const detail = await harness.eventually('the attempt to be recorded', async () => {
      const answer = await harness.call('getDelivery', undefined, {
        authorization: operator,
        path: `/api/v1/admin/deliveries/${deliveryId}`,
      });
      return answer.body.status === 'delivered' && answer.body;
    });
    expect(detail.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1, 2]);

    // Both sides see all seven, whoever asked, and the ones that joined the attempt say so.
    for (const [kind, id, authorization] of [
      ['miniapps', MINIAPP.id, miniappAuth],
      ['hostapps', HOSTAPP.id, hostappAuth],
    ] as const) {
      const audit = await harness.call('listAuditEntries', undefined, {
        authorization,
        path: `/api/v1/dashboard/${kind}/${id}/audit?limit=50`,
      });
      const entries = audit.body.entries.filter(
        (entry: { action: string; changes: { field: string }[] }) =>
          entry.action === 'redeliver' && entry.changes[0]!.field === `delivery.${deliveryId}`,
      );
      expect(entries.map((entry: { actor: { type: string } }) => entry.actor.type).sort(), `${kind} ${id}`).toEqual([
        'hostapp',
        'hostapp',
        'hostapp',
        'hostapp',
        'hostapp',
        'miniapp',
        'operator',
      ]);
      expect(
        entries.filter((entry: { changes: { after: string }[] }) => /joined the attempt in flight/.test(entry.changes[0]!.after)),
      ).toHaveLength(6);
    }
  });

  test("a partner's redeliveries are bounded by the contract's budget; an operator's are not", async () => {
    const { burst } = contractRateLimits().redelivery;
    // Partners of its own: the other test here spends the registered partners' budgets, whichever runs first.
    const { hostapp, miniapp } = await newPair('redelivery_budget');
    const deliveryId = await deliveredCallback({ hostapp, miniapp });
    const statuses: number[] = [];
    for (let i = 0; i < burst + 1; i++) statuses.push((await asPartner('hostapps', hostapp.id, hostapp.auth, deliveryId)).status);
    const refusedAt = statuses.indexOf(429);
    expect(refusedAt).toBeGreaterThan(0);
    expect(statuses.slice(0, refusedAt).every((status) => status === 200)).toBe(true);
    const refused = await asPartner('hostapps', hostapp.id, hostapp.auth, deliveryId);
    expect([refused.status, refused.body.error_code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body.error_message).toMatch(/redeliveries/);
    // The miniapp's budget is its own; the operator has none.
    expect((await asPartner('miniapps', miniapp.id, miniapp.auth, deliveryId)).status).toBe(200);
    expect((await asPartner('hostapps', hostapp.id, operator, deliveryId)).status).toBe(200);
  });
});
