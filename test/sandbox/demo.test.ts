import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import { startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';

// What `npm start` gives a browser: the host-app simulator opens the demo miniapp by itself, and
// the demo sees the payment's outcome from E6 (which the sandbox miniapp server receives).

let sandbox: RunningSandbox;
let platform: RunningPlatform;

beforeAll(async () => {
  let platformUrl = '';
  sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: 0, miniappPort: 0, demoMiniappPort: 0 });
  platform = await startPlatform({
    registry: registryFrom(sandbox.registry),
    config: {
      port: 0,
      host: '127.0.0.1',
      dataDir: 'memory://',
      databaseUrl: undefined,
      logLevel: 'silent',
      worker: { pollMs: 100, batchSize: 10, leaseMs: 60_000, enabled: true },
    },
  });
  platformUrl = platform.url;
}, 90_000);

afterAll(async () => {
  await platform?.close();
  await sandbox?.close();
});

describe('the sandbox with the demo miniapp', () => {
  it('the simulator opens the demo miniapp when given no miniapp', async () => {
    expect(sandbox.demoMiniappUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await fetch(`${sandbox.hostappUrl}/simulator/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(new URL(response.headers.get('location')!, sandbox.hostappUrl).href).toBe(sandbox.simulatorUrl);
    expect(new URL(sandbox.simulatorUrl).searchParams.get('miniapp')).toBe(sandbox.demoMiniappUrl);
    const page = await fetch(sandbox.demoMiniappUrl!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('app.js');
  });

  it('a demo order paid at the host app reaches the demo through E6', async () => {
    const created = await fetch(`${sandbox.demoMiniappUrl}api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sku: 'coffee-1kg' }),
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { miniapp_order_id: string; order_payment_id: string };
    const confirmed = await fetch(`${sandbox.hostappUrl}/sandbox/payments/${order.order_payment_id}/confirm`, { method: 'POST' });
    expect(confirmed.status).toBe(200);
    await expect
      .poll(
        async () =>
          (await (await fetch(`${sandbox.demoMiniappUrl}api/orders/${order.miniapp_order_id}`)).json()) as Record<string, unknown>,
        { timeout: 30_000, interval: 200 },
      )
      .toMatchObject({ payment_status: 'paid', e6_received: true });
    expect(
      sandbox.received.completions.some(
        (completion) => (completion.body as { miniapp_order_id?: string }).miniapp_order_id === order.miniapp_order_id,
      ),
    ).toBe(true);
  }, 60_000);
});
