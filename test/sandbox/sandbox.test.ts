import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { basicAuthorization, prefixedAuthorization } from '../../src/wire/authorization.js';
import { signRequest } from '../../src/wire/signing.js';
import { createPlatformClient } from '../../src/shipped/clients/platform.js';
import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import { MAGIC_AMOUNTS, magicAmountsTable } from '../../src/tools/sandbox/magicAmounts.js';
import {
  SANDBOX_HOSTAPP,
  SANDBOX_MINIAPP,
  SANDBOX_SIGNING_SECRETS,
  startSandbox,
  type RunningSandbox,
} from '../../src/tools/sandbox/startSandbox.js';
import { describeOnBackends, openPlatformDatabase, type PlatformDatabase, type TestBackend } from '../support/databases.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';

/** Starting PGlite (WASM) takes seconds, far more on a busy machine. */
const START_TIMEOUT_MS = 90_000;
const waitLong = { timeout: 30_000, interval: 100 };

interface Running {
  platform: RunningPlatform;
  sandbox: RunningSandbox;
  database: PlatformDatabase;
}

async function startBoth(options: { autoConfirmMs?: number; signing?: boolean; backend?: TestBackend['name'] } = {}): Promise<Running> {
  let platformUrl = '';
  const { backend, ...sandboxOptions } = options;
  const database = await openPlatformDatabase(backend);
  const sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: 0, miniappPort: 0, ...sandboxOptions });
  const platform = await startPlatform({
    registry: registryFrom(sandbox.registry),
    config: {
      port: 0,
      host: '127.0.0.1',
      ...database.config,
      logLevel: 'silent',
      worker: { pollMs: 100, batchSize: 10, leaseMs: 60_000, enabled: true },
    },
  });
  platformUrl = platform.url;
  return { platform, sandbox, database };
}

async function stopBoth(running: Running | undefined): Promise<void> {
  await running?.platform.close();
  await running?.sandbox.close();
  await running?.database.dispose();
}

function miniappClient(platformUrl: string) {
  return createPlatformClient({
    baseUrl: platformUrl,
    headers: { Authorization: basicAuthorization(SANDBOX_MINIAPP.appId, SANDBOX_MINIAPP.secretKey) },
  });
}

async function createOrder(platformUrl: string, amount: string | number, miniappOrderId: string) {
  const { data, error, response } = await miniappClient(platformUrl).POST('/api/v1/orders/create-order-payment/', {
    body: {
      app_id: SANDBOX_MINIAPP.appId,
      client_id: SANDBOX_HOSTAPP.clientId,
      order: { currency: 'VND', amount, miniapp_order_id: miniappOrderId },
    },
  });
  return { status: response.status, data, error };
}

async function askStatus(platformUrl: string, orderPaymentId: string) {
  const { data, error } = await miniappClient(platformUrl).POST('/api/v1/orders/get-payment-status/', {
    body: { app_id: SANDBOX_MINIAPP.appId, client_id: SANDBOX_HOSTAPP.clientId, order_payment_id: orderPaymentId },
  });
  return data ?? error;
}

async function act(hostappUrl: string, orderPaymentId: string, action: 'confirm' | 'cancel' | 'fail', body?: object) {
  const response = await fetch(`${hostappUrl}/sandbox/payments/${orderPaymentId}/${action}`, {
    method: 'POST',
    ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function completionFor(sandbox: RunningSandbox, orderPaymentId: string) {
  return sandbox.received.completions.find(
    (completion) => (completion.body as { hostapp_order_payment_id: string }).hostapp_order_payment_id === orderPaymentId,
  );
}

describeOnBackends('sandbox', (backend) => {
  describe('sandbox with the platform', () => {
    let running: Running | undefined;
    beforeAll(async () => {
      running = await startBoth({ backend: backend.name });
    }, START_TIMEOUT_MS);
    afterAll(() => stopBoth(running), START_TIMEOUT_MS);

    it('E1 → E3, confirm → E5 → E6 at the simulated miniapp, decimals exact', async () => {
      const { platform, sandbox } = running!;
      const created = await createOrder(platform.url, '125000.50', 'ORD-E2E-1');
      expect(created.status).toBe(200);
      const id = created.data!.order_payment_id;
      expect(id).toMatch(/^hop_sbx_/);
      expect(sandbox.hostapp.payments.get(id)).toMatchObject({
        amount: '125000.50',
        currency: 'VND',
        payment_status: 'in_process',
        miniapp_order_id: 'ORD-E2E-1',
      });

      const confirmed = await act(sandbox.hostappUrl, id, 'confirm');
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toMatchObject({
        payment_status: 'paid',
        complete_order: { attempts: 1, answer: { status: 200, body: { code: 'SUCCESS' } } },
      });

      await vi.waitFor(() => expect(completionFor(sandbox, id)).toBeDefined(), waitLong);
      expect(completionFor(sandbox, id)).toMatchObject({
        delivery_attempt: 1,
        event_id: expect.any(String),
        body: {
          hostapp_order_payment_id: id,
          hostapp_client_id: SANDBOX_HOSTAPP.clientId,
          payment_status: 'paid',
          miniapp_order_id: 'ORD-E2E-1',
        },
      });
      expect(await askStatus(platform.url, id)).toMatchObject({ order_payment_id: id, payment_status: 'paid' });
    });

    it('E3 is idempotent on miniapp_order_id, and /cancel and /fail override the amount', async () => {
      const { platform, sandbox } = running!;
      const first = await createOrder(platform.url, 100, 'ORD-E2E-2');
      const again = await createOrder(platform.url, 100, 'ORD-E2E-2');
      expect(again.data!.order_payment_id).toBe(first.data!.order_payment_id);
      const toFail = (await createOrder(platform.url, 100, 'ORD-E2E-3')).data!.order_payment_id;

      const cancelled = await act(sandbox.hostappUrl, first.data!.order_payment_id, 'cancel');
      const failed = await act(sandbox.hostappUrl, toFail, 'fail', { payment_fail_reason: 'Card expired' });
      const conflict = await act(sandbox.hostappUrl, toFail, 'confirm');
      const unknown = await act(sandbox.hostappUrl, 'hop_nope', 'confirm');
      expect(cancelled.body).toMatchObject({ payment_status: 'cancelled' });
      expect(failed.body).toMatchObject({ payment_status: 'failed', payment_fail_reason: 'Card expired' });
      expect(conflict).toMatchObject({ status: 409, body: { error_code: 'PAYMENT_STATUS_CONFLICT' } });
      expect(unknown).toMatchObject({ status: 404, body: { error_code: 'ORDER_NOT_FOUND' } });
      await vi.waitFor(
        () => expect(completionFor(sandbox, toFail)?.body).toMatchObject({ payment_status: 'failed', payment_fail_reason: 'Card expired' }),
        waitLong,
      );
    });

    describe.each(MAGIC_AMOUNTS.map((entry) => [entry.amount, entry] as const))('magic amount %s', (amount, entry) => {
      it(entry.hostappDoes, async () => {
        const { platform, sandbox } = running!;
        // Sent as a JSON number: the magic applies to the amount's digits, whatever its JSON type.
        const created = await createOrder(platform.url, Number(amount), `ORD-MAGIC-${amount}`);
        if (entry.refuseWith) {
          expect(created.status).toBe(400);
          expect(created.error).toMatchObject({ error_code: entry.refuseWith });
          return;
        }
        const expected = entry.confirmation!;
        const id = created.data!.order_payment_id;
        const confirmed = await act(sandbox.hostappUrl, id, 'confirm');
        expect(confirmed.body.payment_status).toBe(expected.status);
        if (expected.callsCompleteOrder) {
          await vi.waitFor(() => expect(completionFor(sandbox, id)).toBeDefined(), waitLong);
          expect(completionFor(sandbox, id)!.body).toMatchObject({
            payment_status: expected.status,
            ...(expected.failReason !== undefined && { payment_fail_reason: expected.failReason }),
          });
          return;
        }
        // No E5: only E2 → E4 tells the platform.
        expect(confirmed.body.complete_order).toBeUndefined();
        expect(await askStatus(platform.url, id)).toMatchObject({ order_payment_id: id, payment_status: expected.status });
        if (expected.status === 'in_process') {
          expect(completionFor(sandbox, id)).toBeUndefined();
        } else {
          await vi.waitFor(() => expect(completionFor(sandbox, id)?.body).toMatchObject({ payment_status: expected.status }), waitLong);
        }
      });
    });

    it('4000.05 with nobody asking: the platform asks the host app itself after its reconcile delay and sends E6 (ADR 0039)', async () => {
      const { platform, sandbox } = running!;
      const created = await createOrder(platform.url, '4000.05', 'ORD-RECONCILED');
      const id = created.data!.order_payment_id;
      expect((await act(sandbox.hostappUrl, id, 'confirm')).body).toMatchObject({ payment_status: 'paid' });
      // No E2: only the platform's own E4, once the sandbox host app's 10 s have passed.
      await vi.waitFor(() => expect(completionFor(sandbox, id)?.body).toMatchObject({ payment_status: 'paid' }), waitLong);
      const record = await platform.platform.store.paymentRecords.get({ client_id: SANDBOX_HOSTAPP.clientId, order_payment_id: id });
      expect(record).toMatchObject({ payment_status: 'paid', settled_by: 'reconciliation' });
    });

    it('a payment nobody acted on is closed at its expiry; the host app takes no payment after it', async () => {
      const { platform, sandbox } = running!;
      const id = (await createOrder(platform.url, 100, 'ORD-EXPIRES')).data!.order_payment_id;
      const payment = sandbox.hostapp.payments.get(id)!;
      expect(Date.parse(payment.expires_at!)).toBeGreaterThan(Date.now());
      expect(await askStatus(platform.url, id)).toMatchObject({ payment_status: 'in_process', expires_at: payment.expires_at });
      // Its expiry, passed (the sandbox's own record of it moved back rather than a day waited).
      payment.expires_at = new Date(Date.now() - 1000).toISOString();
      expect(await act(sandbox.hostappUrl, id, 'confirm')).toMatchObject({ status: 409, body: { error_code: 'PAYMENT_STATUS_CONFLICT' } });
      expect(await askStatus(platform.url, id)).toMatchObject({ payment_status: 'cancelled' });
      await vi.waitFor(() => expect(completionFor(sandbox, id)?.body).toMatchObject({ payment_status: 'cancelled' }), waitLong);
    });

    it('E8: a host app event reaches the simulated miniapp (E7) and its answer comes back', async () => {
      const { platform, sandbox } = running!;
      const hostapp = createPlatformClient({
        baseUrl: platform.url,
        headers: { Authorization: prefixedAuthorization(SANDBOX_HOSTAPP.tokenPrefix, SANDBOX_HOSTAPP.clientId, SANDBOX_HOSTAPP.secretKey) },
      });
      const { data, response } = await hostapp.POST('/api/v1/events/hostapp/', {
        body: {
          app_id: SANDBOX_MINIAPP.appId,
          client_id: SANDBOX_HOSTAPP.clientId,
          event_type: 'user_profile_updated',
          external_event_id: 'ext-e8-1',
          payload: { user_id: 'u_1' },
        },
      });
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ received: true, event_id: expect.any(String) });
      const arrived = sandbox.received.events.find((event) => event.event_id === (data as { event_id: string }).event_id);
      expect(arrived?.body).toMatchObject({ event_type: 'user_profile_updated', payload: { user_id: 'u_1' } });

      const viaControl = await fetch(`${sandbox.hostappUrl}/sandbox/send-event`, {
        method: 'POST',
        body: JSON.stringify({ event_type: 'loyalty_points_changed', payload: { points: 12 } }),
      });
      expect(viaControl.status).toBe(200);
      expect(sandbox.received.events.at(-1)?.body).toMatchObject({ event_type: 'loyalty_points_changed' });
    });

    it('a miniapp event reaches the simulated host app (E7) through /sandbox/send-event', async () => {
      const { sandbox } = running!;
      const response = await fetch(`${sandbox.miniappUrl}/sandbox/send-event`, {
        method: 'POST',
        body: JSON.stringify({ event_type: 'order_status_update', payload: { order_payment_id: 'hop_x', fulfillment_status: 'shipped' } }),
      });
      const body = (await response.json()) as { received: boolean; event_id: string };
      expect(response.status).toBe(200);
      expect(body).toMatchObject({ received: true, event_id: expect.any(String) });
      expect(sandbox.hostapp.events.find((event) => event.event_id === body.event_id)?.body).toMatchObject({
        app_id: SANDBOX_MINIAPP.appId,
        client_id: SANDBOX_HOSTAPP.clientId,
        payload: { fulfillment_status: 'shipped' },
      });
      const listed = (await (await fetch(`${sandbox.miniappUrl}/sandbox/received`)).json()) as {
        completions: unknown[];
        events: unknown[];
      };
      expect(listed.completions.length).toBe(sandbox.received.completions.length);
    });
  });
});
describe('sandbox with signing on and auto-confirm', () => {
  let running: Running | undefined;
  beforeAll(async () => {
    running = await startBoth({ signing: true, autoConfirmMs: 0 });
  }, START_TIMEOUT_MS);
  afterAll(() => stopBoth(running), START_TIMEOUT_MS);

  it('verifies the platform’s signatures (E3, E6), signs E5, and confirms by itself', async () => {
    const { platform, sandbox } = running!;
    expect(sandbox.registry.hostapps[0].signing).toEqual({ enabled: true, secrets: SANDBOX_SIGNING_SECRETS.hostapp });
    const body = JSON.stringify({
      app_id: SANDBOX_MINIAPP.appId,
      client_id: SANDBOX_HOSTAPP.clientId,
      order: { currency: 'VND', amount: '99.99' },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${platform.url}/api/v1/orders/create-order-payment/`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: basicAuthorization(SANDBOX_MINIAPP.appId, SANDBOX_MINIAPP.secretKey),
          ...headers,
        },
        body,
      });
    const unsigned = await post({});
    expect(unsigned.status).toBe(400);
    expect(await unsigned.json()).toMatchObject({ error_code: 'UNAUTHORIZED' });

    const signed = await post({ ...signRequest(body, SANDBOX_SIGNING_SECRETS.miniapp) });
    expect(signed.status).toBe(200);
    const { order_payment_id: id } = (await signed.json()) as { order_payment_id: string };
    await vi.waitFor(() => expect(completionFor(sandbox, id)?.body).toMatchObject({ payment_status: 'paid' }), waitLong);
    expect(sandbox.hostapp.payments.get(id)?.complete_order?.answer).toMatchObject({ status: 200, body: { code: 'SUCCESS' } });
  });
});

describe('sandbox README', () => {
  it('shows the magic amounts exactly as src/tools/sandbox/magicAmounts.ts defines them', () => {
    const readme = readFileSync(new URL('../../src/tools/sandbox/README.md', import.meta.url), 'utf8');
    expect(readme).toContain(magicAmountsTable());
  });
});

describe('npm start (sandbox mode)', () => {
  it(
    'starts, prints the banner, serves the README curl call and exits 0 on SIGTERM',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'minibridge-start-'));
      const child = spawn('npm', ['start', '--silent'], {
        cwd: new URL('../..', import.meta.url).pathname,
        env: {
          ...process.env,
          MINIBRIDGE_REGISTRY: '',
          PORT: '0',
          HOST: '127.0.0.1',
          MINIBRIDGE_SANDBOX_HOSTAPP_PORT: '0',
          MINIBRIDGE_SANDBOX_MINIAPP_PORT: '0',
          MINIBRIDGE_SANDBOX_DEMO_PORT: '0',
          MINIBRIDGE_DATA_DIR: join(dataDir, 'pglite'),
          DATABASE_URL: '',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        await vi.waitFor(() => expect(output).toMatch(/Platform +http:\/\/\S+/), { timeout: START_TIMEOUT_MS, interval: 200 });
        const platformUrl = /Platform +(http:\/\/\S+)/.exec(output)![1];
        const curl = /curl -s (\S+) -u (\S+):(\S+) -H 'Content-Type: application\/json' -d '(.+)'/.exec(output);
        expect(curl).not.toBeNull();
        const [, e1Url, id, secret, e1Body] = curl!;
        expect(e1Url).toBe(`${platformUrl}/api/v1/orders/create-order-payment/`);
        expect((await fetch(`${platformUrl}/readyz`)).status).toBe(200);
        // The simulator opens the demo miniapp, which the same command serves.
        const simulatorUrl = /Simulator +(http:\/\/\S+)/.exec(output)![1]!;
        const demoUrl = new URL(simulatorUrl).searchParams.get('miniapp');
        expect(demoUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
        expect((await fetch(simulatorUrl)).status).toBe(200);
        expect((await fetch(demoUrl!)).status).toBe(200);

        const response = await fetch(e1Url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: basicAuthorization(id, secret) },
          body: e1Body,
        });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ order_payment_id: expect.stringMatching(/^hop_sbx_/) });

        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(output).toContain('minibridge: stopped (SIGTERM)');
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    START_TIMEOUT_MS * 2,
  );
});
