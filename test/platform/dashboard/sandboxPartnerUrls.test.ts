/**
 * The sandbox takes the partner's own server (ADR 0043): on a platform that is the sandbox
 * listening on loopback alone, a signed-in partner may register a loopback URL, which the running
 * sandbox then reaches (connections to loopback only); nothing on record makes it an exception, so
 * the same database run as anything else refuses it by policy (ADR 0038). Everywhere else the
 * partner is refused with what to do instead, and no other internal address is allowed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isLoopbackHost, mayRegisterInternal, REFUSED_BY_POLICY } from '../../../src/platform/outbound/addressPolicy.js';
import { reachOf } from '../../../src/platform/outbound/partnerUrl.js';
import { startPlatform } from '../../../src/platform/server.js';
import { describeOnBackends, openPlatformDatabase, type PlatformDatabaseConfig } from '../../support/databases.js';
import { FakePartner } from '../../support/fakePartners.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness, e1Body } from '../../support/platformHarness.js';

const hostappPath = `/api/v1/dashboard/hostapps/${HOSTAPP.id}`;

describe('the policy, one definition', () => {
  test.each([
    ['localhost', true],
    ['LOCALHOST.', true],
    ['my.app.localhost', true],
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['[::1]', true],
    ['[::ffff:127.0.0.1]', true],
    ['0.0.0.0', false],
    ['10.0.0.5', false],
    ['169.254.169.254', false],
    ['printer.local', false],
    ['partner.example', false],
  ])('%s is loopback: %s', (host, expected) => expect(isLoopbackHost(host)).toBe(expected));

  test('a partner may register an internal URL only on loopback in a sandbox on loopback; an operator always', () => {
    expect(mayRegisterInternal('127.0.0.1', { operator: false, sandboxLoopback: false })).toBe(false);
    expect(mayRegisterInternal('127.0.0.1', { operator: false, sandboxLoopback: true })).toBe(true);
    expect(mayRegisterInternal('10.0.0.5', { operator: false, sandboxLoopback: true })).toBe(false);
    expect(mayRegisterInternal('10.0.0.5', { operator: true, sandboxLoopback: false })).toBe(true);
  });

  test('a loopback URL is reached as loopback only by the running sandbox on loopback; an operator’s exception by what is on record', () => {
    const url = 'http://localhost:4000/create-order-payment';
    const none = new Set<string>();
    expect(reachOf(none, 'create_order_payment', url, { sandboxLoopback: true })).toBe('sandbox-loopback');
    expect(reachOf(none, 'create_order_payment', url, { sandboxLoopback: false })).toBe('public');
    expect(reachOf(none, 'create_order_payment', 'http://10.0.0.5/x', { sandboxLoopback: true })).toBe('public');
    const approved = new Set(['create_order_payment']);
    expect(reachOf(approved, 'create_order_payment', url, { sandboxLoopback: false })).toBe('operator-approved');
  });
});

/** The partner's own server on this machine, answering E3 (a host app's create-order-payment). */
async function ownServer(): Promise<FakePartner> {
  return new FakePartner().on('/mine/create-order-payment', { order_payment_id: 'hop_own_server_1' }).start();
}

async function setOwnUrl(harness: PlatformHarness, url: string) {
  return harness.call(
    'updateHostapp',
    { urls: { create_order_payment: url } },
    { authorization: harness.hostappBasic(), path: hostappPath },
  );
}

describe('in the sandbox (the platform on loopback alone)', () => {
  const harness = new PlatformHarness();
  let own: FakePartner;
  beforeAll(async () => {
    own = await ownServer();
    await harness.start({ config: { host: '127.0.0.1', sandboxLoopback: true } });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' });
  }, 120_000);
  afterAll(async () => {
    await harness.stop();
    await own.stop();
  });

  test('the signed-in host app registers its own server by localhost, and E1 reaches it there', async () => {
    const url = `${own.url.replace('127.0.0.1', 'localhost')}/mine/create-order-payment`;
    const answer = await setOwnUrl(harness, url);
    expect(answer.status).toBe(200);
    const settings = answer.body as { urls: Record<string, string>; internal_urls?: string[] };
    expect(settings.urls.create_order_payment).toBe(url);
    // Reached because this instance is the sandbox on loopback, not by an exception on record.
    expect(settings.internal_urls ?? []).not.toContain('create_order_payment');

    const e1 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(e1.status).toBe(200);
    expect((e1.body as { order_payment_id: string }).order_payment_id).toBe('hop_own_server_1');
    expect(own.receivedAt('/mine/create-order-payment')).toHaveLength(1);
    // The simulated host app at the registered URL is no longer asked.
    expect(harness.hostapp.receivedAt('/create-order-payment')).toHaveLength(0);

    // The partner's server reports the outcome (E5); the sandbox's miniapp, its counterpart, still gets E6.
    const e5 = await harness.call(
      'completeOrder',
      { order_payment_id: 'hop_own_server_1', app_id: e1Body().app_id, client_id: HOSTAPP.id, payment_status: 'paid' },
      { authorization: harness.hostappBasic() },
    );
    expect(e5.status).toBe(200);
    const [e6] = await harness.eventually('E6 at the sandbox miniapp', () => {
      const received = harness.miniapp.receivedAt('/complete-order');
      return received.length > 0 && received;
    });
    expect(JSON.parse(e6!.body)).toMatchObject({ hostapp_order_payment_id: 'hop_own_server_1', payment_status: 'paid' });
  });

  test('by 127.0.0.1 too; another internal address is still refused, saying what the sandbox accepts', async () => {
    expect((await setOwnUrl(harness, `${own.url}/mine/create-order-payment`)).status).toBe(200);
    const refused = await setOwnUrl(harness, 'http://10.0.0.5/create-order-payment');
    expect(refused.status).toBe(400);
    expect((refused.body as { error_message: string }).error_message).toMatch(/which this sandbox accepts/);
  });

  test("the platform's own port is not the partner's server: the platform would call itself (its admin API, its E1) with the partner's credentials", async () => {
    const port = new URL(harness.running.url).port;
    for (const url of [
      `http://127.0.0.1:${port}/api/v1/orders/create-order-payment/`,
      `http://localhost:${port}/api/v1/dashboard/hostapps`,
      `http://[::1]:${port}/`,
      `http://127.0.0.2:${port}/`,
    ]) {
      const refused = await setOwnUrl(harness, url);
      expect(refused.status, url).toBe(400);
      expect((refused.body as { error_code: string }).error_code).toBe('INVALID_REQUEST');
      expect((refused.body as { error_message: string }).error_message, url).toMatch(/the platform's own port/);
    }
    const settings = await harness.call('getHostapp', undefined, { authorization: harness.hostappBasic(), path: hostappPath });
    expect((settings.body as { urls: Record<string, string> }).urls.create_order_payment).not.toContain(`:${port}/`);
  });
});

describe('outside the sandbox', () => {
  const harness = new PlatformHarness();
  let own: FakePartner;
  beforeAll(async () => {
    own = await ownServer();
    await harness.start();
  }, 120_000);
  afterAll(async () => {
    await harness.stop();
    await own.stop();
  });

  test.each(['127.0.0.1', 'localhost'])(
    'a partner registering %s is refused, told to use the sandbox or ask the operator',
    async (host) => {
      const refused = await setOwnUrl(harness, `${own.url.replace('127.0.0.1', host)}/mine/create-order-payment`);
      expect(refused.status).toBe(400);
      const message = (refused.body as { error_message: string }).error_message;
      expect(message).toMatch(/not a public address/);
      expect(message).toMatch(/run the sandbox \(npm start/);
      expect(message).toMatch(/ask the platform's operator to register the URL as an exception/);
    },
  );

  test("a loopback URL an operator registered stays the operator's exception; a partner cannot add its own", async () => {
    const url = `${own.url}/mine/create-order-payment`;
    const byOperator = await harness.call(
      'updateHostapp',
      { urls: { create_order_payment: url } },
      { authorization: `Bearer ${ADMIN_TOKEN}`, path: hostappPath },
    );
    expect(byOperator.status).toBe(200);
    expect((byOperator.body as { internal_urls?: string[] }).internal_urls).toContain('create_order_payment');
    expect((await setOwnUrl(harness, url.replace('127.0.0.1', 'localhost'))).status).toBe(400);
  });
});

/** A PGlite directory on disk, or a PostgreSQL database, that outlives the platforms started on it. */
async function lastingDatabase(backend: 'pglite' | 'postgres'): Promise<{ config: PlatformDatabaseConfig; dispose(): Promise<void> }> {
  if (backend === 'postgres') return openPlatformDatabase('postgres');
  const dir = await mkdtemp(join(tmpdir(), 'minibridge-sandbox-then-production-'));
  const opened = await openPlatformDatabase('pglite');
  return { config: { ...opened.config, dataDir: join(dir, 'pglite') }, dispose: () => rm(dir, { recursive: true, force: true }) };
}

describeOnBackends('a database that was a sandbox’s, then run outside the sandbox', (backend) => {
  test('the partner’s loopback URL registered in the sandbox is refused by policy: nothing reaches its server', async () => {
    const own = await ownServer();
    const database = await lastingDatabase(backend.name);
    try {
      const sandbox = new PlatformHarness();
      await sandbox.start({ backend: backend.name, config: { ...database.config, host: '127.0.0.1', sandboxLoopback: true } });
      try {
        expect((await setOwnUrl(sandbox, `${own.url}/mine/create-order-payment`)).status).toBe(200);
        const e1 = await sandbox.call('createOrderPayment', e1Body(), { authorization: sandbox.miniappAuth() });
        expect(e1.status).toBe(200);
        expect(own.receivedAt('/mine/create-order-payment')).toHaveLength(1);
      } finally {
        await sandbox.stop();
      }

      // The same database, a platform that is not the sandbox: its partners as the database holds them.
      const production = await startPlatform({
        config: { port: 0, host: '127.0.0.1', ...database.config, registryPath: undefined, redisUrl: undefined, logLevel: 'silent' },
      });
      try {
        const response = await fetch(`${production.url}/api/v1/orders/create-order-payment/`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from(`${MINIAPP.id}:${MINIAPP.secret}`).toString('base64')}`,
          },
          body: JSON.stringify(e1Body()),
        });
        const answer = (await response.json()) as { error_code: string; error_message: string };
        expect([answer.error_code, answer.error_message]).toEqual(['HOSTAPP_UNAVAILABLE', expect.stringContaining(REFUSED_BY_POLICY)]);
        expect(own.receivedAt('/mine/create-order-payment')).toHaveLength(1);
        // Still registered as the partner set it, and no exception on record.
        const stored = production.platform.registry.hostapp(HOSTAPP.id)!;
        expect(stored.registration.urls?.create_order_payment).toBe(`${own.url}/mine/create-order-payment`);
        expect([...stored.internalUrls]).not.toContain('create_order_payment');
      } finally {
        await production.close();
      }
    } finally {
      await database.dispose();
      await own.stop();
    }
  }, 180_000);
});
