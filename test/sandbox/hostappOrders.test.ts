import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prefixedAuthorization } from '../../src/wire/authorization.js';
import { createSandboxHostapp, type SandboxHostapp } from '../../src/tools/sandbox/sandboxHostapp.js';

// The sandbox host app's E3, as guide 01 asks of every host app: idempotent on (app_id,
// order.miniapp_order_id); the same pair with another order is refused with INVALID_ORDER_DATA and
// the first payment kept as it was.

const clientId = 'ha_orders';
const secretKey = 'orders-secret';
let hostapp: SandboxHostapp;
let server: Server;
let url: string;

beforeAll(async () => {
  hostapp = createSandboxHostapp({
    clientId,
    secretKey,
    tokenPrefix: 'Token',
    signingSecrets: [],
    miniappId: 'ma_orders',
    platformUrl: () => 'http://127.0.0.1:9',
    logger: { warn: () => undefined, error: () => undefined },
  });
  server = await new Promise<Server>((resolve) => {
    const listening = hostapp.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  hostapp.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function e3(body: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/create-order-payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: prefixedAuthorization('Token', clientId, secretKey) },
    body,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

const order = (amount: string, ref = 'ORD-1') =>
  `{"app_id":"ma_orders","order":{"currency":"VND","amount":${amount},"miniapp_order_id":"${ref}"}}`;

describe('sandbox host app E3', () => {
  it('answers the same order with the same id, another order under the same reference with INVALID_ORDER_DATA', async () => {
    const first = await e3(order('125000'));
    expect(first.order_payment_id).toEqual(expect.any(String));
    expect(await e3(order('125000'))).toEqual(first);
    // Numbers by their exact text, as the platform compares bodies.
    expect(await e3(order('125000.0'))).toEqual({ error_code: 'INVALID_ORDER_DATA' });
    expect(await e3(order('99000'))).toEqual({ error_code: 'INVALID_ORDER_DATA' });
    expect(hostapp.payments.get(first.order_payment_id as string)?.amount).toBe('125000');
    const other = await e3(order('99000', 'ORD-2'));
    expect(other.order_payment_id).not.toBe(first.order_payment_id);
  });
});
