/**
 * The payment lifecycle at the edge (ADR 0039): the host app's lifetime and reconcile delay are
 * settings with the contract's defaults and bounds (refused outside them with the contract's
 * error), a miniapp may ask for a shorter lifetime on E1, E3 tells the host app the expiry, E2
 * and E6 show it, and the registry file's mirror of the settings' bounds is the contract's.
 */
import type { ServerResponse } from 'node:http';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { lifecycleSettings } from '../../../src/contract/limits.js';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, e1Body, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

const settings = lifecycleSettings();

describe('the registry file repeats the lifecycle settings’ bounds: they are the contract’s', () => {
  test('payment_lifetime_seconds and reconcile_after_seconds', () => {
    const registry = parse(readFileSync(new URL('../../../openapi/registry.schema.yaml', import.meta.url), 'utf8'));
    const fields = registry.$defs.HostappRegistration.properties;
    expect({ minimum: fields.payment_lifetime_seconds.minimum, maximum: fields.payment_lifetime_seconds.maximum }).toEqual({
      minimum: settings.paymentLifetimeSeconds.minimum,
      maximum: settings.paymentLifetimeSeconds.maximum,
    });
    expect({ minimum: fields.reconcile_after_seconds.minimum, maximum: fields.reconcile_after_seconds.maximum }).toEqual({
      minimum: settings.reconcileAfterSeconds.minimum,
      maximum: settings.reconcileAfterSeconds.maximum,
    });
  });
});

describeOnBackends('payment lifecycle at the edge', (backend) => {
  const harness = new PlatformHarness();
  let counter = 0;
  beforeAll(async () => {
    harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_life_${++counter}` })),
    );
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' });
    await harness.start({ backend: backend.name });
  }, 120_000);
  afterAll(() => harness.stop());

  const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const hostappPath = `/api/v1/dashboard/hostapps/${HOSTAPP.id}`;
  const lastE3 = () => JSON.parse(harness.hostapp.receivedAt('/create-order-payment').at(-1)!.body) as { expires_at: string };

  test('a host app shows the contract’s defaults until it sets its own, within the bounds', async () => {
    // A host app of its own: another test sets the registered one's lifetime.
    const created = await harness.call('createHostapp', { client_id: 'ha_life_defaults', name: 'Defaults' }, operator);
    expect(created.status).toBe(201);
    const hostappPath = `/api/v1/dashboard/hostapps/ha_life_defaults`;
    const shown = await harness.call('getHostapp', undefined, { ...operator, path: hostappPath });
    expect(shown.body).toMatchObject({
      payment_lifetime_seconds: settings.paymentLifetimeSeconds.default,
      reconcile_after_seconds: settings.reconcileAfterSeconds.default,
    });
    for (const [field, bounds] of [
      ['payment_lifetime_seconds', settings.paymentLifetimeSeconds],
      ['reconcile_after_seconds', settings.reconcileAfterSeconds],
    ] as const) {
      for (const value of [bounds.minimum - 1, bounds.maximum + 1, 0, -1, 1.5, '60']) {
        const refused = await harness.call('updateHostapp', { [field]: value }, { ...operator, path: hostappPath });
        expect(refused.status, `${field} = ${value}`).toBe(400);
        expect(refused.body).toMatchObject({ error_code: 'INVALID_REQUEST', error_message: expect.stringContaining(field) });
      }
    }
    const changed = await harness.call('updateHostapp', { payment_lifetime_seconds: 3600 }, { ...operator, path: hostappPath });
    expect(changed.body).toMatchObject({ payment_lifetime_seconds: 3600, reconcile_after_seconds: settings.reconcileAfterSeconds.default });
    const audit = await harness.call('listAuditEntries', undefined, {
      ...operator,
      path: `${hostappPath}/audit`,
    });
    expect(JSON.stringify(audit.body)).toContain('payment_lifetime_seconds');
  });

  test('E3 tells the host app the expiry: its lifetime, or the miniapp’s shorter one; E2 shows it', async () => {
    await harness.call('updateHostapp', { payment_lifetime_seconds: 3600 }, { ...operator, path: hostappPath });
    let before = Date.now();
    const own = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    let after = Date.now();
    expect(own.status).toBe(200);
    const ownExpiry = Date.parse(lastE3().expires_at);
    expect(ownExpiry).toBeGreaterThanOrEqual(before + 3600_000);
    expect(ownExpiry).toBeLessThanOrEqual(after + 3600_000);

    before = Date.now();
    const shorter = await harness.call('createOrderPayment', e1Body({}, { payment_lifetime_seconds: 120 }), {
      authorization: harness.miniappAuth(),
    });
    after = Date.now();
    expect(shorter.status).toBe(200);
    const shorterExpiry = lastE3().expires_at;
    expect(Date.parse(shorterExpiry)).toBeGreaterThanOrEqual(before + 120_000);
    expect(Date.parse(shorterExpiry)).toBeLessThanOrEqual(after + 120_000);
    // A longer one than the host app's is the host app's.
    await harness.call('createOrderPayment', e1Body({}, { payment_lifetime_seconds: 7200 }), { authorization: harness.miniappAuth() });
    expect(Date.parse(lastE3().expires_at) - Date.now()).toBeLessThanOrEqual(3600_000);

    harness.hostapp.on('/get-payment-status', (request: Received, res: ServerResponse) => {
      const query = JSON.parse(request.body) as Record<string, string>;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...query, payment_status: 'in_process' }));
    });
    const status = await harness.call(
      'getPaymentStatus',
      { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: shorter.body.order_payment_id },
      { authorization: harness.miniappAuth() },
    );
    expect(status.body).toMatchObject({ payment_status: 'in_process', expires_at: shorterExpiry });
  });

  test('a lifetime outside the contract’s bounds on E1 is refused, naming it; the same order with another lifetime is another request', async () => {
    for (const value of [settings.paymentLifetimeSeconds.minimum - 1, settings.paymentLifetimeSeconds.maximum + 1, '600', 60.5]) {
      const refused = await harness.call('createOrderPayment', e1Body({}, { payment_lifetime_seconds: value }), {
        authorization: harness.miniappAuth(),
      });
      expect(refused.status, String(value)).toBe(400);
      expect(refused.body).toMatchObject({
        error_code: 'INVALID_ORDER_DATA',
        error_message: expect.stringContaining('payment_lifetime_seconds'),
      });
    }
    const body = e1Body({}, { payment_lifetime_seconds: 600 });
    const first = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
    const repeat = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
    expect(repeat.body.order_payment_id).toBe(first.body.order_payment_id);
    const other = await harness.call(
      'createOrderPayment',
      { ...body, payment_lifetime_seconds: 900 },
      { authorization: harness.miniappAuth() },
    );
    expect(other.body.error_code).toBe('IDEMPOTENCY_CONFLICT');
  });
});
